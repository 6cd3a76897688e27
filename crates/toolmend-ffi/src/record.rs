//! One call's result as a compact record: a fixed head of codes and flags, and tagged fields.
//!
//! `toolmend_mender_repair_call` returns this instead of JSON: writing JSON in Rust and reading
//! it in Go cost more than the engine's whole work on a valid call. The head says what is
//! common (status, origin, outcome, and that the name, the text and the arguments are the
//! caller's own input), so a valid call's record has no body at all: no allocation on either
//! side and nothing to free. Everything else is a tagged field in `body`:
//!
//! ```text
//! field := tag:u8  length:u32 (little-endian)  bytes[length]
//! ```
//!
//! Fields come in the order of [`write_body`]; a repair is a `REPAIR_KIND` field followed by
//! its `REPAIR_PATH`. A reader refuses a tag it does not know: a new field is a new ABI
//! revision (`toolmend_version_*_abi*`), never a silent skip.

use toolmend::{CallResult, Origin, Outcome, Status};

use crate::ToolmendStatus;
use crate::buffer::ToolmendBuf;
use crate::input::InputError;

/// A call result: the function's outcome, the head, and the tagged fields.
///
/// With `code` `TOOLMEND_OK` the head and `body` are the result; otherwise the head is
/// zero and `body` holds the error message. `body` is freed with `toolmend_buf_free` (an empty
/// one, as a valid call's, needs no call).
#[repr(C)]
#[derive(Debug)]
pub struct ToolmendCall {
    /// `TOOLMEND_OK`, `TOOLMEND_ERROR` or `TOOLMEND_PANIC`.
    pub code: ToolmendStatus,
    /// A `TOOLMEND_CALL_STATUS_*` code; 0: named by a `TOOLMEND_FIELD_STATUS` field.
    pub status: u8,
    /// A `TOOLMEND_CALL_ORIGIN_*` code; 0: named by a `TOOLMEND_FIELD_ORIGIN` field.
    pub origin: u8,
    /// A `TOOLMEND_CALL_OUTCOME_*` code; 0: none, or named by a `TOOLMEND_FIELD_OUTCOME` field.
    pub outcome: u8,
    /// `TOOLMEND_CALL_*` flags: which values are the caller's own input.
    pub flags: u8,
    /// The tagged fields (or, when `code` is not OK, the error message).
    pub body: ToolmendBuf,
}

impl ToolmendCall {
    /// A record with no result: `code` and a message in `body`.
    pub(crate) fn failed(code: ToolmendStatus, body: ToolmendBuf) -> Self {
        Self {
            code,
            status: 0,
            origin: 0,
            outcome: 0,
            flags: 0,
            body,
        }
    }
}

/// Status code: the call passed untouched.
pub const TOOLMEND_CALL_STATUS_VALID: u8 = 1;
/// Status code: the call was repaired and re-validated.
pub const TOOLMEND_CALL_STATUS_REPAIRED: u8 = 2;
/// Status code: the call was found in text.
pub const TOOLMEND_CALL_STATUS_RECOVERED: u8 = 3;
/// Status code: the call could not be saved (`TOOLMEND_FIELD_ERROR` holds the retry message).
pub const TOOLMEND_CALL_STATUS_INVALID: u8 = 4;
/// Status code: the call was not dispatched (storm breaker).
pub const TOOLMEND_CALL_STATUS_SUPPRESSED: u8 = 5;
/// Status code: the tool's schema was refused, so the call could not be checked.
pub const TOOLMEND_CALL_STATUS_UNVALIDATED: u8 = 6;

/// Origin code: the response's own `tool_calls`.
pub const TOOLMEND_CALL_ORIGIN_NATIVE: u8 = 1;
/// Origin code: recovered from the content text.
pub const TOOLMEND_CALL_ORIGIN_CONTENT: u8 = 2;
/// Origin code: recovered from the reasoning channel.
pub const TOOLMEND_CALL_ORIGIN_REASONING: u8 = 3;

/// Outcome code: repaired here, without asking the model again.
pub const TOOLMEND_CALL_OUTCOME_LOCAL_SALVAGE: u8 = 1;
/// Outcome code: rejected; the model gets a retry message.
pub const TOOLMEND_CALL_OUTCOME_REPROMPT: u8 = 2;
/// Outcome code: rejected past the retry budget.
pub const TOOLMEND_CALL_OUTCOME_GAVE_UP: u8 = 3;

/// Flag: the name is the one the caller passed (no `TOOLMEND_FIELD_NAME`).
pub const TOOLMEND_CALL_NAME_IS_INPUT: u8 = 1;
/// Flag: the arguments text is, byte for byte, the one the caller passed (no
/// `TOOLMEND_FIELD_ARGUMENTS_TEXT`).
pub const TOOLMEND_CALL_TEXT_IS_INPUT: u8 = 2;
/// Flag: the arguments (JSON) are the arguments text (no `TOOLMEND_FIELD_ARGUMENTS`).
pub const TOOLMEND_CALL_ARGUMENTS_IS_TEXT: u8 = 4;

/// Field tag: the call id (absent: empty).
pub const TOOLMEND_FIELD_ID: u8 = 1;
/// Field tag: the tool name (absent: the input name, per the flag).
pub const TOOLMEND_FIELD_NAME: u8 = 2;
/// Field tag: the final arguments as JSON (absent: none, or the text, per the flag).
pub const TOOLMEND_FIELD_ARGUMENTS: u8 = 3;
/// Field tag: the arguments text to dispatch (absent: the input text, per the flag).
pub const TOOLMEND_FIELD_ARGUMENTS_TEXT: u8 = 4;
/// Field tag: a repair's kind (its snake_case name); its `TOOLMEND_FIELD_REPAIR_PATH` follows.
pub const TOOLMEND_FIELD_REPAIR_KIND: u8 = 5;
/// Field tag: the JSON Pointer of the repair named just before.
pub const TOOLMEND_FIELD_REPAIR_PATH: u8 = 6;
/// Field tag: one note, in order.
pub const TOOLMEND_FIELD_NOTE: u8 = 7;
/// Field tag: the retry or guard message.
pub const TOOLMEND_FIELD_ERROR: u8 = 8;
/// Field tag: the index in the turn's `tool_calls`, 8 bytes little-endian.
pub const TOOLMEND_FIELD_NATIVE_INDEX: u8 = 9;
/// Field tag: a status with no head code (its serde name).
pub const TOOLMEND_FIELD_STATUS: u8 = 10;
/// Field tag: an origin with no head code (its serde name).
pub const TOOLMEND_FIELD_ORIGIN: u8 = 11;
/// Field tag: an outcome with no head code (its serde name).
pub const TOOLMEND_FIELD_OUTCOME: u8 = 12;

/// The record of `result`, from `repair_call(name, input)`: head codes and flags, and the body's
/// bytes (empty for a valid call).
pub(crate) fn encode(
    result: &CallResult,
    name: &str,
    input: &str,
) -> Result<(ToolmendCall, Vec<u8>), InputError> {
    let mut flags = 0;
    if *result.name == *name {
        flags |= TOOLMEND_CALL_NAME_IS_INPUT;
    }
    if result.arguments_text == input {
        flags |= TOOLMEND_CALL_TEXT_IS_INPUT;
    }
    // A dispatchable call's arguments are its text (the bytes sent, or the repaired text), as
    // the JSON face says with `argumentsIsText`.
    if result.is_dispatchable() && result.arguments.is_some() {
        flags |= TOOLMEND_CALL_ARGUMENTS_IS_TEXT;
    }
    let head = ToolmendCall {
        code: crate::TOOLMEND_OK,
        status: status_code(result.status),
        origin: origin_code(result.origin),
        outcome: result.outcome.map_or(0, outcome_code),
        flags,
        body: ToolmendBuf::EMPTY,
    };
    let body = write_body(result, &head)?;
    Ok((head, body))
}

/// The tagged fields of `result` that `head` does not already say.
fn write_body(result: &CallResult, head: &ToolmendCall) -> Result<Vec<u8>, InputError> {
    let mut body = Body(Vec::new());
    body.text(TOOLMEND_FIELD_ID, &result.id)?;
    if head.flags & TOOLMEND_CALL_NAME_IS_INPUT == 0 {
        body.field(TOOLMEND_FIELD_NAME, result.name.as_bytes())?;
    }
    if head.flags & TOOLMEND_CALL_ARGUMENTS_IS_TEXT == 0 {
        if let Some(arguments) = &result.arguments {
            let json = serde_json::to_vec(arguments)
                .map_err(|e| InputError(format!("cannot write the arguments: {e}")))?;
            body.field(TOOLMEND_FIELD_ARGUMENTS, &json)?;
        }
    }
    if head.flags & TOOLMEND_CALL_TEXT_IS_INPUT == 0 {
        body.field(
            TOOLMEND_FIELD_ARGUMENTS_TEXT,
            result.arguments_text.as_bytes(),
        )?;
    }
    for repair in &result.repairs {
        body.field(TOOLMEND_FIELD_REPAIR_KIND, repair.kind.name().as_bytes())?;
        body.field(TOOLMEND_FIELD_REPAIR_PATH, repair.path.as_bytes())?;
    }
    for note in &result.notes {
        body.field(TOOLMEND_FIELD_NOTE, note.as_bytes())?;
    }
    if let Some(error) = &result.error {
        body.field(TOOLMEND_FIELD_ERROR, error.as_bytes())?;
    }
    if let Some(index) = result.native_index {
        body.field(TOOLMEND_FIELD_NATIVE_INDEX, &(index as u64).to_le_bytes())?;
    }
    // Labels with no head code (a variant newer than this ABI revision's codes).
    if head.status == 0 {
        body.field(TOOLMEND_FIELD_STATUS, &serde_name(&result.status)?)?;
    }
    if head.origin == 0 {
        body.field(TOOLMEND_FIELD_ORIGIN, &serde_name(&result.origin)?)?;
    }
    if let (0, Some(outcome)) = (head.outcome, result.outcome) {
        body.field(TOOLMEND_FIELD_OUTCOME, &serde_name(&outcome)?)?;
    }
    Ok(body.0)
}

/// The body being written.
struct Body(Vec<u8>);

impl Body {
    /// A field with `bytes` (`tag`, length, bytes).
    fn field(&mut self, tag: u8, bytes: &[u8]) -> Result<(), InputError> {
        let len = u32::try_from(bytes.len())
            .map_err(|_| InputError(format!("a result field of {} bytes", bytes.len())))?;
        self.0.push(tag);
        self.0.extend_from_slice(&len.to_le_bytes());
        self.0.extend_from_slice(bytes);
        Ok(())
    }

    /// A text field, left out when empty (a reader takes absent as empty).
    fn text(&mut self, tag: u8, text: &str) -> Result<(), InputError> {
        if text.is_empty() {
            return Ok(());
        }
        self.field(tag, text.as_bytes())
    }
}

/// A unit variant's serde name (`"valid"`, `"local-salvage"`), for labels with no code.
fn serde_name<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, InputError> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => Ok(name.into_bytes()),
        _ => Err(InputError("a label with no name".into())),
    }
}

fn status_code(status: Status) -> u8 {
    match status {
        Status::Valid => TOOLMEND_CALL_STATUS_VALID,
        Status::Repaired => TOOLMEND_CALL_STATUS_REPAIRED,
        Status::Recovered => TOOLMEND_CALL_STATUS_RECOVERED,
        Status::Invalid => TOOLMEND_CALL_STATUS_INVALID,
        Status::Suppressed => TOOLMEND_CALL_STATUS_SUPPRESSED,
        Status::Unvalidated => TOOLMEND_CALL_STATUS_UNVALIDATED,
        _ => 0,
    }
}

fn origin_code(origin: Origin) -> u8 {
    match origin {
        Origin::Native => TOOLMEND_CALL_ORIGIN_NATIVE,
        Origin::Content => TOOLMEND_CALL_ORIGIN_CONTENT,
        Origin::Reasoning => TOOLMEND_CALL_ORIGIN_REASONING,
        _ => 0,
    }
}

fn outcome_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::LocalSalvage => TOOLMEND_CALL_OUTCOME_LOCAL_SALVAGE,
        Outcome::Reprompt => TOOLMEND_CALL_OUTCOME_REPROMPT,
        Outcome::GaveUp => TOOLMEND_CALL_OUTCOME_GAVE_UP,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each code names the variant whose serde name the Go side gives it.
    #[test]
    fn codes_are_the_serde_names() {
        let statuses = [
            (Status::Valid, "valid"),
            (Status::Repaired, "repaired"),
            (Status::Recovered, "recovered"),
            (Status::Invalid, "invalid"),
            (Status::Suppressed, "suppressed"),
            (Status::Unvalidated, "unvalidated"),
        ];
        for (i, (status, name)) in statuses.into_iter().enumerate() {
            assert_eq!(usize::from(status_code(status)), i + 1);
            assert_eq!(serde_name(&status).unwrap(), name.as_bytes());
        }
        let origins = [
            (Origin::Native, "native"),
            (Origin::Content, "content"),
            (Origin::Reasoning, "reasoning"),
        ];
        for (i, (origin, name)) in origins.into_iter().enumerate() {
            assert_eq!(usize::from(origin_code(origin)), i + 1);
            assert_eq!(serde_name(&origin).unwrap(), name.as_bytes());
        }
        let outcomes = [
            (Outcome::LocalSalvage, "local-salvage"),
            (Outcome::Reprompt, "re-prompt"),
            (Outcome::GaveUp, "gave-up"),
        ];
        for (i, (outcome, name)) in outcomes.into_iter().enumerate() {
            assert_eq!(usize::from(outcome_code(outcome)), i + 1);
            assert_eq!(serde_name(&outcome).unwrap(), name.as_bytes());
        }
    }

    fn mender() -> toolmend::Mender {
        let tools = serde_json::json!([{"type": "function", "function": {"name": "read",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"},
            "limit": {"type": "integer"}}, "required": ["path"], "additionalProperties": false}}}]);
        toolmend::Mender::new(toolmend::ToolSet::from_json(&tools))
    }

    /// A valid call is all head: the name, text and arguments are the input; no body.
    #[test]
    fn a_valid_call_has_no_body() {
        let input = r#"{ "path": "/a" }"#;
        let result = mender().repair_call("read", input);
        let (head, body) = encode(&result, "read", input).unwrap();
        assert_eq!(head.status, TOOLMEND_CALL_STATUS_VALID);
        assert_eq!(head.origin, TOOLMEND_CALL_ORIGIN_NATIVE);
        assert_eq!(head.outcome, 0);
        assert_eq!(
            head.flags,
            TOOLMEND_CALL_NAME_IS_INPUT
                | TOOLMEND_CALL_TEXT_IS_INPUT
                | TOOLMEND_CALL_ARGUMENTS_IS_TEXT
        );
        assert!(body.is_empty());
    }

    /// A repaired call writes its text and each repair (kind, then path); its arguments are
    /// the text.
    #[test]
    fn a_repaired_call_writes_its_text_and_repairs() {
        let input = r#"{"path": "/a", "limit": "3",}"#;
        let result = mender().repair_call("read", input);
        let (head, body) = encode(&result, "read", input).unwrap();
        assert_eq!(head.status, TOOLMEND_CALL_STATUS_REPAIRED);
        assert_eq!(head.outcome, TOOLMEND_CALL_OUTCOME_LOCAL_SALVAGE);
        assert_eq!(
            head.flags,
            TOOLMEND_CALL_NAME_IS_INPUT | TOOLMEND_CALL_ARGUMENTS_IS_TEXT
        );
        let fields = read(&body);
        assert_eq!(
            fields[0],
            (
                TOOLMEND_FIELD_ARGUMENTS_TEXT,
                br#"{"path":"/a","limit":3}"#.to_vec()
            )
        );
        let kinds: Vec<_> = fields
            .iter()
            .filter(|(tag, _)| *tag == TOOLMEND_FIELD_REPAIR_KIND)
            .map(|(_, name)| String::from_utf8(name.clone()).unwrap())
            .collect();
        let want: Vec<_> = result.repairs.iter().map(|r| r.kind.name()).collect();
        assert_eq!(kinds, want);
        assert!(!kinds.is_empty());
    }

    /// An unsavable call keeps its input text, and writes no arguments it does not have and
    /// its retry message.
    #[test]
    fn an_invalid_call_writes_its_error() {
        let input = r#"{"limit": 3}"#;
        let result = mender().repair_call("read", input);
        let (head, body) = encode(&result, "read", input).unwrap();
        assert_eq!(head.status, TOOLMEND_CALL_STATUS_INVALID);
        assert_eq!(head.flags & TOOLMEND_CALL_ARGUMENTS_IS_TEXT, 0);
        let fields = read(&body);
        let error = fields
            .iter()
            .find(|(tag, _)| *tag == TOOLMEND_FIELD_ERROR)
            .map(|(_, bytes)| bytes.clone());
        assert_eq!(error, result.error.map(String::into_bytes));
        let arguments = fields
            .iter()
            .find(|(tag, _)| *tag == TOOLMEND_FIELD_ARGUMENTS)
            .map(|(_, bytes)| serde_json::from_slice::<serde_json::Value>(bytes).unwrap());
        assert_eq!(arguments, result.arguments);
    }

    /// The fields of a body, as a reader sees them.
    fn read(mut body: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let mut fields = Vec::new();
        while let [tag, a, b, c, d, rest @ ..] = body {
            let len = u32::from_le_bytes([*a, *b, *c, *d]) as usize;
            fields.push((*tag, rest[..len].to_vec()));
            body = &rest[len..];
        }
        assert!(body.is_empty());
        fields
    }
}
