//! The entry points: handles (mender, session, recoverer) and the calls on them.
//!
//! Each function checks its pointers, reads its inputs, calls the library once and writes
//! JSON back through [`guarded`], which catches panics. Handles are boxed Rust values passed
//! out as opaque pointers and dropped by their `_free` function.

use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolmend::recover::{StreamOutput, StreamRecoverer};

use crate::buffer::ToolmendBuf;
use crate::input::{InputError, text};
use crate::record::{self, ToolmendCall};
use crate::wire::{
    LostCallOut, MenderInfoOut, MenderOptionsIn, RecoveredCallOut, RecoveredOut,
    RecovererOptionsIn, SessionOptionsIn, TurnIn, TurnOut,
};
use crate::{TOOLMEND_ERROR, TOOLMEND_OK, TOOLMEND_PANIC, ToolmendStatus};

/// A compiled tool list and its repair pipeline; shareable across threads.
#[derive(Debug)]
pub struct ToolmendMender {
    inner: toolmend::Mender,
}

impl ToolmendMender {
    /// The library's mender.
    pub(crate) fn inner(&self) -> &toolmend::Mender {
        &self.inner
    }
}

/// A conversation's storm window and retry budget (locked per turn).
#[derive(Debug)]
pub struct ToolmendSession {
    inner: Mutex<toolmend::Session>,
}

/// Recovers calls from text that arrives in chunks (one per channel and message).
#[derive(Debug)]
pub struct ToolmendRecoverer {
    tools: Arc<toolmend::ToolSet>,
    channel: String,
    /// The recoverer (`None` after finish) and the buffer each feed writes into.
    state: Mutex<(Option<StreamRecoverer>, StreamOutput)>,
}

/// Runs `work` with panics caught; writes its bytes or message to `*out`.
pub(crate) fn guarded(
    out: *mut ToolmendBuf,
    work: impl FnOnce() -> Result<Vec<u8>, InputError>,
) -> ToolmendStatus {
    if out.is_null() {
        return TOOLMEND_ERROR;
    }
    let (status, bytes) = match panic::catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(bytes)) => (TOOLMEND_OK, bytes),
        Ok(Err(InputError(message))) => (TOOLMEND_ERROR, message.into_bytes()),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_owned());
            (
                TOOLMEND_PANIC,
                format!("toolmend panicked: {message}").into_bytes(),
            )
        }
    };
    // SAFETY: `out` is non-null and points at a writable `ToolmendBuf` (the caller's duty).
    unsafe { out.write(ToolmendBuf::from_vec(bytes)) };
    status
}

/// `value` as JSON bytes.
pub(crate) fn json<T: Serialize>(value: &T) -> Result<Vec<u8>, InputError> {
    // Sized for a typical call result, so small results are written without regrowing.
    let mut bytes = Vec::with_capacity(256);
    serde_json::to_writer(&mut bytes, value)
        .map(|()| bytes)
        .map_err(|e| InputError(format!("cannot write the result: {e}")))
}

/// Options from JSON text (`""` means every default).
fn options<T: DeserializeOwned + Default>(what: &str, text: &str) -> Result<T, InputError> {
    if text.trim().is_empty() {
        return Ok(T::default());
    }
    serde_json::from_str(text).map_err(|e| InputError(format!("{what}: {e}")))
}

/// A tool list from JSON text (a JSON array of tool objects).
fn tools(text: &str) -> Result<Value, InputError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| InputError(format!("tools is not JSON: {e}")))?;
    if !value.is_array() {
        return Err(InputError(
            "tools must be a JSON array of tool objects".into(),
        ));
    }
    Ok(value)
}

/// The handle behind `ptr`, or an error naming it.
///
/// # Safety
/// `ptr` is null or a live handle of type `T` returned by this crate.
pub(crate) unsafe fn handle<'a, T>(what: &str, ptr: *const T) -> Result<&'a T, InputError> {
    // SAFETY: null or a live handle that outlives the call (the caller's duty).
    unsafe { ptr.as_ref() }.ok_or_else(|| InputError(format!("null {what}")))
}

/// Writes a new handle to `*slot` (null on failure).
fn publish<T>(slot: *mut *mut T, value: Option<T>) {
    if slot.is_null() {
        return;
    }
    let ptr = value.map_or(std::ptr::null_mut(), |v| Box::into_raw(Box::new(v)));
    // SAFETY: `slot` is non-null and writable (the caller's duty).
    unsafe { slot.write(ptr) };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Builds a mender from a tool list (JSON array) and options (JSON object, or empty).
///
/// On success `*mender_out` is the handle and `*out` holds `{"toolNames": [...],
/// "rejected": [...]}`; on failure `*mender_out` is null and `*out` holds the message.
///
/// # Safety
/// Each `(ptr, len)` pair is null with length 0 or `len` readable bytes; `mender_out` and
/// `out` are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_mender_new(
    tools_json: *const u8,
    tools_len: usize,
    options_json: *const u8,
    options_len: usize,
    mender_out: *mut *mut ToolmendMender,
    out: *mut ToolmendBuf,
) -> ToolmendStatus {
    let mut made = None;
    let status = guarded(out, || {
        // SAFETY: the caller's duty, as documented above.
        let tools_text = unsafe { text("tools", tools_json, tools_len) }?;
        // SAFETY: as above.
        let options_text = unsafe { text("options", options_json, options_len) }?;
        let options = options::<MenderOptionsIn>("options", options_text)?.build()?;
        let set = toolmend::ToolSet::from_json(&tools(tools_text)?);
        let mender = toolmend::Mender::with_options(set, options);
        let info = json(&info(&mender))?;
        made = Some(ToolmendMender { inner: mender });
        Ok(info)
    });
    publish(mender_out, made);
    status
}

fn info(mender: &toolmend::Mender) -> MenderInfoOut {
    MenderInfoOut {
        tool_names: mender.tools().iter().map(|t| t.name().to_owned()).collect(),
        rejected: mender
            .tools()
            .rejected()
            .iter()
            .map(ToString::to_string)
            .collect(),
    }
}

/// Frees a mender (null is ignored).
///
/// # Safety
/// `mender` is null or a handle from `toolmend_mender_new`, freed once, used by no other
/// thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_mender_free(mender: *mut ToolmendMender) {
    if !mender.is_null() {
        // SAFETY: a box leaked by `toolmend_mender_new`, handed back once (the caller's duty).
        drop(unsafe { Box::from_raw(mender) });
    }
}

/// The mender's tool names and rejected tool objects: `{"toolNames", "rejected"}`.
///
/// # Safety
/// `mender` is null or a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_mender_info(
    mender: *const ToolmendMender,
    out: *mut ToolmendBuf,
) -> ToolmendStatus {
    guarded(out, || {
        // SAFETY: the caller's duty, as documented above.
        let mender = unsafe { handle("mender", mender) }?;
        json(&info(&mender.inner))
    })
}

/// Validates one call's arguments text against its tool and repairs only what failed.
///
/// Returns the result as a record (`ToolmendCall`: status, origin, outcome and flags in the
/// head, the rest as tagged fields in `body`; see the `TOOLMEND_FIELD_*` tags). A valid call's
/// record is all head: its name, text and arguments are the caller's input, and `body` is
/// empty. A broken call is a result (`TOOLMEND_CALL_STATUS_INVALID` with an error field), not
/// an error; `code` is not OK only for a refused input (null mender, text not UTF-8) or a
/// caught panic, with the message in `body`.
///
/// # Safety
/// `mender` is null or a live handle; each `(ptr, len)` pair is null with length 0 or `len`
/// readable bytes. Any number of threads may call this on one mender.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_mender_repair_call(
    mender: *const ToolmendMender,
    name: *const u8,
    name_len: usize,
    arguments: *const u8,
    arguments_len: usize,
) -> ToolmendCall {
    let mut head = None;
    let mut body = ToolmendBuf::EMPTY;
    let code = guarded(&raw mut body, || {
        // SAFETY: the caller's duty, as documented above.
        let mender = unsafe { handle("mender", mender) }?;
        // SAFETY: as above.
        let name = unsafe { text("name", name, name_len) }?;
        // SAFETY: as above.
        let arguments = unsafe { text("arguments", arguments, arguments_len) }?;
        let result = mender.inner.repair_call(name, arguments);
        let (call, bytes) = record::encode(&result, name, arguments)?;
        head = Some(call);
        Ok(bytes)
    });
    match head {
        Some(call) if code == TOOLMEND_OK => ToolmendCall { body, ..call },
        _ => ToolmendCall::failed(code, body),
    }
}

/// Runs one assistant turn (`{"message": {...}, "finishReason": ..., "newUserTurn": ..., "turnId": ...}`)
/// through every stage with the session's state; `*out` holds `{content, reasoning, calls,
/// report}`.
///
/// # Safety
/// `mender` and `session` are null or live handles; `(turn_json, turn_len)` is null with
/// length 0 or `len` readable bytes; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_mender_run_turn(
    mender: *const ToolmendMender,
    session: *const ToolmendSession,
    turn_json: *const u8,
    turn_len: usize,
    out: *mut ToolmendBuf,
) -> ToolmendStatus {
    guarded(out, || {
        // SAFETY: the caller's duty, as documented above.
        let mender = unsafe { handle("mender", mender) }?;
        // SAFETY: as above.
        let session = unsafe { handle("session", session) }?;
        // SAFETY: as above.
        let turn_text = unsafe { text("turn", turn_json, turn_len) }?;
        let turn: TurnIn =
            serde_json::from_str(turn_text).map_err(|e| InputError(format!("turn: {e}")))?;
        let turn = turn.build()?;
        let result = mender.inner.run_turn(&mut lock(&session.inner), &turn);
        json(&TurnOut::new(&result))
    })
}

/// Counters since the mender was built (the library's stats snapshot), as JSON.
///
/// # Safety
/// `mender` is null or a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_mender_stats(
    mender: *const ToolmendMender,
    out: *mut ToolmendBuf,
) -> ToolmendStatus {
    guarded(out, || {
        // SAFETY: the caller's duty, as documented above.
        let mender = unsafe { handle("mender", mender) }?;
        json(&mender.inner.stats().snapshot())
    })
}

/// Makes a session from options (`{"window", "threshold", "maxReprompts"}`, or empty).
///
/// # Safety
/// `(options_json, options_len)` is null with length 0 or `len` readable bytes;
/// `session_out` and `out` are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_session_new(
    options_json: *const u8,
    options_len: usize,
    session_out: *mut *mut ToolmendSession,
    out: *mut ToolmendBuf,
) -> ToolmendStatus {
    let mut made = None;
    let status = guarded(out, || {
        // SAFETY: the caller's duty, as documented above.
        let options_text = unsafe { text("options", options_json, options_len) }?;
        let session = options::<SessionOptionsIn>("options", options_text)?.build()?;
        made = Some(ToolmendSession {
            inner: Mutex::new(session),
        });
        Ok(Vec::new())
    });
    publish(session_out, made);
    status
}

/// A new user message: the session's storm window starts afresh (the retry budget does not).
///
/// # Safety
/// `session` is null or a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_session_new_user_turn(
    session: *const ToolmendSession,
    out: *mut ToolmendBuf,
) -> ToolmendStatus {
    guarded(out, || {
        // SAFETY: the caller's duty, as documented above.
        let session = unsafe { handle("session", session) }?;
        lock(&session.inner).new_user_turn();
        Ok(Vec::new())
    })
}

/// Frees a session (null is ignored).
///
/// # Safety
/// `session` is null or a handle from `toolmend_session_new`, freed once, used by no other
/// thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_session_free(session: *mut ToolmendSession) {
    if !session.is_null() {
        // SAFETY: a box leaked by `toolmend_session_new`, handed back once (the caller's duty).
        drop(unsafe { Box::from_raw(session) });
    }
}

/// Makes a stream recoverer for a tool list and options (`{"channel", "maxCalls"}`).
///
/// # Safety
/// Each `(ptr, len)` pair is null with length 0 or `len` readable bytes; `recoverer_out` and
/// `out` are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_recoverer_new(
    tools_json: *const u8,
    tools_len: usize,
    options_json: *const u8,
    options_len: usize,
    recoverer_out: *mut *mut ToolmendRecoverer,
    out: *mut ToolmendBuf,
) -> ToolmendStatus {
    let mut made = None;
    let status = guarded(out, || {
        // SAFETY: the caller's duty, as documented above.
        let tools_text = unsafe { text("tools", tools_json, tools_len) }?;
        // SAFETY: as above.
        let options_text = unsafe { text("options", options_json, options_len) }?;
        let options = options::<RecovererOptionsIn>("options", options_text)?;
        let channel = options.channel.unwrap_or_else(|| "content".to_owned());
        if channel != "content" && channel != "reasoning" {
            return Err(InputError(format!(
                "channel must be \"content\" or \"reasoning\", not {channel:?}"
            )));
        }
        let max = options
            .max_calls
            .unwrap_or(toolmend::limits::MAX_RECOVERED_CALLS);
        made = Some(ToolmendRecoverer {
            tools: Arc::new(toolmend::ToolSet::from_json(&tools(tools_text)?)),
            channel,
            state: Mutex::new((Some(StreamRecoverer::new(max)), StreamOutput::default())),
        });
        Ok(Vec::new())
    });
    publish(recoverer_out, made);
    status
}

/// Adds a chunk of text; `*out` holds what may be released now: `{text, calls, lost}` (`lost`:
/// the calls of these calls' blocks that could not be read).
///
/// # Safety
/// `recoverer` is null or a live handle; `(chunk, chunk_len)` is null with length 0 or `len`
/// readable bytes; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_recoverer_feed(
    recoverer: *const ToolmendRecoverer,
    chunk: *const u8,
    chunk_len: usize,
    out: *mut ToolmendBuf,
) -> ToolmendStatus {
    guarded(out, || {
        // SAFETY: the caller's duty, as documented above.
        let recoverer = unsafe { handle("recoverer", recoverer) }?;
        // SAFETY: as above.
        let chunk = unsafe { text("chunk", chunk, chunk_len) }?;
        let mut state = lock(&recoverer.state);
        let (stream, released) = &mut *state;
        let stream = stream
            .as_mut()
            .ok_or_else(|| InputError("feed after finish".into()))?;
        released.text.clear();
        released.calls.clear();
        released.lost.clear();
        stream.push_into(&recoverer.tools, chunk, released);
        json(&recovered(released, &recoverer.channel))
    })
}

/// Ends the text; `*out` holds the rest (text held back, calls completed at the end).
///
/// # Safety
/// `recoverer` is null or a live handle; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_recoverer_finish(
    recoverer: *const ToolmendRecoverer,
    out: *mut ToolmendBuf,
) -> ToolmendStatus {
    guarded(out, || {
        // SAFETY: the caller's duty, as documented above.
        let recoverer = unsafe { handle("recoverer", recoverer) }?;
        let stream = lock(&recoverer.state)
            .0
            .take()
            .ok_or_else(|| InputError("finish called twice".into()))?;
        let rest = stream.finish(&recoverer.tools);
        json(&recovered(&rest, &recoverer.channel))
    })
}

fn recovered<'a>(out: &'a StreamOutput, channel: &'a str) -> RecoveredOut<'a> {
    RecoveredOut {
        text: &out.text,
        calls: out
            .calls
            .iter()
            .map(|c| RecoveredCallOut::new(c, channel))
            .collect(),
        lost: out
            .lost
            .iter()
            .map(|c| LostCallOut::new(c, channel))
            .collect(),
    }
}

/// Frees a stream recoverer (null is ignored).
///
/// # Safety
/// `recoverer` is null or a handle from `toolmend_recoverer_new`, freed once, used by no
/// other thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_recoverer_free(recoverer: *mut ToolmendRecoverer) {
    if !recoverer.is_null() {
        // SAFETY: a box leaked by `toolmend_recoverer_new`, handed back once (the caller's
        // duty).
        drop(unsafe { Box::from_raw(recoverer) });
    }
}

/// Frees a buffer returned by any function here (an empty buffer is ignored).
///
/// # Safety
/// `buf` was written by this library and is freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_buf_free(buf: ToolmendBuf) {
    // SAFETY: the caller's duty, as documented above.
    unsafe { buf.free() };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic inside an entry point is caught: a status and its message, no unwind.
    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let mut buf = ToolmendBuf::EMPTY;
        let status = guarded(&raw mut buf, || panic!("boom"));
        assert_eq!(status, TOOLMEND_PANIC);
        // SAFETY: written by `guarded` just above.
        let message = unsafe { std::slice::from_raw_parts(buf.ptr, buf.len) };
        assert_eq!(message, b"toolmend panicked: boom");
        // SAFETY: the buffer is freed once.
        unsafe { buf.free() };
    }

    /// Null handles and a bad tool list are refused with a message, never dereferenced.
    #[test]
    fn null_handles_and_bad_tools_are_errors() {
        // SAFETY: a null mender is allowed; the other pointers are valid.
        let call = unsafe {
            toolmend_mender_repair_call(std::ptr::null(), b"a".as_ptr(), 1, b"{}".as_ptr(), 2)
        };
        assert_eq!(call.code, TOOLMEND_ERROR);
        assert_eq!((call.status, call.flags), (0, 0));
        // SAFETY: returned by the call above; freed once.
        unsafe { call.body.free() };
        let mut buf = ToolmendBuf::EMPTY;
        let mut mender = std::ptr::null_mut();
        let tools = b"{}";
        // SAFETY: valid pointers and lengths.
        let status = unsafe {
            toolmend_mender_new(
                tools.as_ptr(),
                tools.len(),
                std::ptr::null(),
                0,
                &raw mut mender,
                &raw mut buf,
            )
        };
        assert_eq!(status, TOOLMEND_ERROR);
        assert!(mender.is_null());
        // SAFETY: written by the call above; freed once.
        unsafe { buf.free() };
    }
}
