//! OpenAI Chat Completions read from the body's bytes: the turn of each choice taken in one
//! pass over the text ([`Cursor`]), the tree built only when a choice must change (issue #29 §3).
//!
//! A valid completion is read without building its tree and goes out as the upstream's bytes.
//! It reads exactly what [`super::openai::repair_completion`] reads, the same way; a body in a
//! shape this reader does not take (a duplicate member, a key with an escape, a call that is
//! not an object, …) is left to that function, before anything about it was run or counted.

use serde_json::Value;
use toolmend::{AssistantTurn, ToolCall, TurnResult};

use crate::config::ProxyConfig;
use crate::mend::{Annotations, BodyContext, ChoiceSessions, Fate, fates, repairing};
use crate::spans::{Cursor, Single, Unread, string_of};

/// The choices of a completion read from its text in one pass ([`Cursor`]): each choice whose
/// message is an object, by its index in `choices`, with its message's turn. None when
/// `choices` is absent or not an array.
///
/// The serde views it replaced scanned the body once per nesting level (the body, `choices`,
/// each choice, its message, each call, its function: the content six times); this reads
/// what they read in one scan, and leaves the same shapes (and some more: a key with an
/// escape where the reader must know the key) to the tree path as [`Unread`].
fn read_completion(body: &str) -> Result<Vec<(usize, AssistantTurn)>, Unread> {
    let mut cursor = Cursor::new(body);
    // A struct also reads from an array, by position: only an object is read here.
    if cursor.peek() != Some(b'{') {
        return Err(Unread);
    }
    let mut choices = Single::new();
    let mut turns = Vec::new();
    cursor.object(|cursor, key| match key {
        Some("choices") => {
            if cursor.peek() == Some(b'[') {
                let mut index = 0;
                cursor.array(|cursor| {
                    if let Some(turn) = read_choice(cursor)? {
                        turns.push((index, turn));
                    }
                    index += 1;
                    Ok(())
                })?;
                choices.set("[")
            } else {
                choices.set(cursor.value()?)
            }
        }
        // A key with an escape may be `choices`.
        None => Err(Unread),
        Some(_) => cursor.value().map(drop),
    })?;
    cursor.end()?;
    Ok(turns)
}

/// One choice, at the cursor: its message's turn, `None` when the choice or its message is
/// not an object.
fn read_choice(cursor: &mut Cursor<'_>) -> Result<Option<AssistantTurn>, Unread> {
    if cursor.peek() != Some(b'{') {
        cursor.value()?;
        return Ok(None);
    }
    let (mut finish_reason, mut message) = (Single::new(), Single::new());
    let mut turn = None;
    cursor.object(|cursor, key| match key {
        Some("finish_reason") => finish_reason.set(cursor.value()?),
        Some("message") => {
            if cursor.peek() == Some(b'{') {
                turn = Some(read_message(cursor)?);
                message.set("{")
            } else {
                message.set(cursor.value()?)
            }
        }
        None => Err(Unread),
        Some(_) => cursor.value().map(drop),
    })?;
    let Some(mut turn) = turn else {
        return Ok(None);
    };
    turn.finish_reason = text(finish_reason.get())?;
    Ok(Some(turn))
}

/// A message object, at the cursor: its text, reasoning and native calls.
fn read_message(cursor: &mut Cursor<'_>) -> Result<AssistantTurn, Unread> {
    let (mut content, mut reasoning_content, mut reasoning) =
        (Single::new(), Single::new(), Single::new());
    let mut tool_calls = Single::new();
    let mut calls = Vec::new();
    cursor.object(|cursor, key| match key {
        Some("content") => content.set(cursor.value()?),
        Some("reasoning_content") => reasoning_content.set(cursor.value()?),
        Some("reasoning") => reasoning.set(cursor.value()?),
        Some("tool_calls") => {
            if cursor.peek() == Some(b'[') {
                cursor.array(|cursor| {
                    calls.push(read_call(cursor)?);
                    Ok(())
                })?;
                tool_calls.set("[")
            } else {
                tool_calls.set(cursor.value()?)
            }
        }
        None => Err(Unread),
        Some(_) => cursor.value().map(drop),
    })?;
    let mut turn = AssistantTurn::default();
    turn.content = text(content.get())?;
    turn.reasoning = match text(reasoning_content.get())? {
        Some(text) => Some(text),
        None => text(reasoning.get())?,
    };
    turn.tool_calls = calls;
    Ok(turn)
}

/// One native call, at the cursor, as [`super::openai::read_calls`] reads it: `function`'s
/// name and arguments, or the call's own when it has no `function`. An element that is not an
/// object is left to the tree (which skips it).
fn read_call(cursor: &mut Cursor<'_>) -> Result<ToolCall, Unread> {
    if cursor.peek() != Some(b'{') {
        return Err(Unread);
    }
    let (mut index, mut id, mut function) = (Single::new(), Single::new(), Single::new());
    // The call's own `name` and `arguments`: read when it has no `function`.
    let (mut name, mut arguments) = (Single::new(), Single::new());
    let mut inner = None;
    cursor.object(|cursor, key| match key {
        Some("index") => index.set(cursor.value()?),
        Some("id") => id.set(cursor.value()?),
        Some("function") => {
            if cursor.peek() == Some(b'{') {
                inner = Some(read_function(cursor)?);
                function.set("{")
            } else {
                function.set(cursor.value()?)
            }
        }
        Some("name") => name.set(cursor.value()?),
        Some("arguments") => arguments.set(cursor.value()?),
        None => Err(Unread),
        Some(_) => cursor.value().map(drop),
    })?;
    let (name, arguments) = match (function.get(), inner) {
        (None, _) => (text(name.get())?, arguments_of(arguments.get())?),
        (Some(_), Some(read)) => read,
        // Not an object: `get` finds nothing in it.
        (Some(_), None) => (None, String::new()),
    };
    let id = text(id.get())?.unwrap_or_default();
    Ok(ToolCall::new(id, name.unwrap_or_default(), arguments))
}

/// A call's `function` object, at the cursor: its name and arguments.
fn read_function(cursor: &mut Cursor<'_>) -> Result<(Option<String>, String), Unread> {
    let (mut name, mut arguments) = (Single::new(), Single::new());
    cursor.object(|cursor, key| match key {
        Some("name") => name.set(cursor.value()?),
        Some("arguments") => arguments.set(cursor.value()?),
        None => Err(Unread),
        Some(_) => cursor.value().map(drop),
    })?;
    Ok((text(name.get())?, arguments_of(arguments.get())?))
}

/// The string a member holds (`Value::as_str`, owned), `None` when absent or not a string.
fn text(raw: Option<&str>) -> Result<Option<String>, Unread> {
    Ok(raw
        .map(string_of)
        .transpose()?
        .flatten()
        .map(std::borrow::Cow::into_owned))
}

/// A call's argument text (`arguments_text`): a string as it holds, nothing for absent or
/// `null`, another value's compact JSON.
fn arguments_of(raw: Option<&str>) -> Result<String, Unread> {
    Ok(match raw {
        None | Some("null") => String::new(),
        Some(raw) if raw.starts_with('"') => text(Some(raw))?.unwrap_or_default(),
        Some(raw) => serde_json::from_str::<Value>(raw)?.to_string(),
    })
}

/// Whether writing `result` into the message would leave it as it is (`apply` reports no
/// change): every native call kept as sent, no native call dropped, the text as it was.
fn unchanged(turn: &AssistantTurn, result: &TurnResult, config: &ProxyConfig) -> bool {
    let calls_kept = result
        .calls
        .iter()
        .zip(fates(&result.calls, config))
        .all(|(call, fate)| match fate {
            Fate::AsSent => true,
            Fate::Drop => call.native_index.is_none(),
            Fate::Rewrite | Fate::DropWithText(_) => false,
        });
    let reasoning_kept = result.reasoning == turn.reasoning || result.reasoning.is_none();
    calls_kept && result.content == turn.content && reasoning_kept
}

/// What [`repair_completion`] found: the notes, and the repaired tree when a choice changed
/// (`None`: the body goes out as received).
#[derive(Debug)]
pub(crate) struct Read {
    pub(crate) notes: Annotations,
    pub(crate) repaired: Option<Value>,
}

/// Repairs a completion read from its bytes; the same reading, session, results and notes as
/// [`super::openai::repair_completion`], whose writing it calls for a choice that changes.
///
/// # Errors
///
/// [`Unread`] when the body is not in the shape read here; nothing was run or counted then.
pub(crate) fn repair_completion(
    body: &[u8],
    cx: &BodyContext<'_>,
    history: impl FnOnce() -> Vec<Vec<ToolCall>>,
) -> Result<Read, Unread> {
    let BodyContext {
        mender,
        config,
        model,
        turn_id,
    } = *cx;
    // Not UTF-8: not JSON either (the tree path says so).
    let text = std::str::from_utf8(body).map_err(|_| Unread)?;
    // Every choice is read before any is run: a shape not read here is found before anything
    // was counted.
    let mut turns = read_completion(text)?;
    let mut read = Read {
        notes: Annotations::default(),
        repaired: None,
    };
    turns.retain(|(_, turn)| {
        !(turn.tool_calls.is_empty() && turn.content.is_none() && turn.reasoning.is_none())
    });
    for (_, turn) in &mut turns {
        turn.id = Some(turn_id.to_owned());
    }
    let mut sessions = ChoiceSessions::new(history);
    let mut changes = Vec::new();
    for (index, turn) in turns {
        let result = mender.run_last_turn(sessions.for_turn(mender, &turn), &turn);
        for call in &result.calls {
            read.notes.add(model, call);
        }
        if repairing(config) && !unchanged(&turn, &result, config) {
            changes.push((index, turn, result));
        }
    }
    if changes.is_empty() {
        return Ok(read);
    }
    // The same bytes were read above: they parse (if not, the body goes out as received).
    let Ok(mut tree) = serde_json::from_slice::<Value>(body) else {
        return Ok(read);
    };
    let mut changed = false;
    for (index, turn, result) in changes {
        changed |= super::openai::apply_choice(&mut tree, index, &turn, &result, config);
    }
    read.repaired = changed.then_some(tree);
    Ok(read)
}

#[cfg(test)]
mod tests;
