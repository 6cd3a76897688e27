//! One Chat Completions stream chunk read from its bytes in one pass: the deltas' text, the
//! call fragments, ids, indices and finish reasons as borrowed spans, no tree.
//!
//! The reader walks the chunk once with [`Cursor`] (chunk → choices → choice → delta →
//! fragments → function), where the serde views scanned each level again. It reads exactly what
//! those views read (the test module keeps them as its oracle): an `error`, a `choices` that is
//! not an array of objects, a finish reason that is neither a string nor `null`, a repeated
//! member the reader takes, a key with an escape where the reader must know the key, anything
//! that is not JSON, is [`Unread`], and the transformer reads its tree instead.
//!
//! A stream repeats each chunk's envelope (the members before `choices`: `id`, `object`,
//! `created`, `model`, `system_fingerprint`, …) byte for byte. The reader remembers the last
//! envelope it read ([`Envelope`]); a chunk that starts with exactly those bytes is read from
//! its `choices` on, with what the envelope held. Any other chunk is read whole.

use std::borrow::Cow;
use std::ops::Range;

use serde_json::Value;

use crate::spans::{Cursor, Unread, string_of, u64_of};

/// One tool-call fragment of a delta, as `Value::get` reads it.
#[derive(Debug, PartialEq)]
pub(super) struct Fragment<'a> {
    pub(super) index: Option<u64>,
    /// Non-empty.
    pub(super) id: Option<Cow<'a, str>>,
    /// Non-empty.
    pub(super) name: Option<Cow<'a, str>>,
    /// The string arguments, another value's compact JSON, or empty (absent or `null`).
    pub(super) arguments: Cow<'a, str>,
}

impl<'a> Fragment<'a> {
    /// A fragment of a tree.
    fn of_value(fragment: &'a Value) -> Self {
        let function = fragment.get("function");
        Self {
            index: fragment.get("index").and_then(Value::as_u64),
            id: fragment
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(Cow::Borrowed),
            name: function
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(Cow::Borrowed),
            arguments: match function.and_then(|f| f.get("arguments")) {
                Some(Value::String(s)) => Cow::Borrowed(s),
                None | Some(Value::Null) => Cow::Borrowed(""),
                Some(other) => Cow::Owned(other.to_string()),
            },
        }
    }

    /// The fragments of a delta's `tool_calls` tree: an array's items, none for `null`, else
    /// the one value.
    pub(super) fn of_tree(fragments: &'a Value) -> Vec<Self> {
        match fragments {
            Value::Array(items) => items.iter().map(Self::of_value).collect(),
            Value::Null => Vec::new(),
            other => vec![Self::of_value(other)],
        }
    }

    fn empty() -> Self {
        Self {
            index: None,
            id: None,
            name: None,
            arguments: Cow::Borrowed(""),
        }
    }

    /// [`Fragment::of_tree`] from the cursor, at the `tool_calls` value.
    fn read_all(cursor: &mut Cursor<'a>) -> Result<Vec<Self>, Unread> {
        match cursor.peek() {
            Some(b'[') => {
                let mut all = Vec::new();
                cursor.array(|cursor| {
                    all.push(Self::read(cursor)?);
                    Ok(())
                })?;
                Ok(all)
            }
            // Only `null` starts with `n`.
            Some(b'n') => cursor.value().map(|_| Vec::new()),
            _ => Ok(vec![Self::read(cursor)?]),
        }
    }

    /// [`Fragment::of_value`] from the cursor, at the fragment (a value that is not an object
    /// holds nothing).
    fn read(cursor: &mut Cursor<'a>) -> Result<Self, Unread> {
        let mut fragment = Self::empty();
        if cursor.peek() != Some(b'{') {
            cursor.value()?;
            return Ok(fragment);
        }
        let (mut index, mut id, mut function) = (Single::new(), Single::new(), Single::new());
        cursor.object(|cursor, key| match key {
            Some("index") => index.set(cursor.value()?),
            Some("id") => id.set(cursor.value()?),
            Some("function") => {
                let text = if cursor.peek() == Some(b'{') {
                    fragment.read_function(cursor)?;
                    "{"
                } else {
                    cursor.value()?
                };
                function.set(text)
            }
            Some(_) => cursor.value().map(drop),
            None => Err(Unread),
        })?;
        fragment.index = index.get().and_then(u64_of);
        fragment.id = nonempty_string(id.get())?;
        Ok(fragment)
    }

    /// The fragment's `function` object: its name and arguments.
    fn read_function(&mut self, cursor: &mut Cursor<'a>) -> Result<(), Unread> {
        let (mut name, mut arguments) = (Single::new(), Single::new());
        cursor.object(|cursor, key| match key {
            Some("name") => name.set(cursor.value()?),
            Some("arguments") => arguments.set(cursor.value()?),
            Some(_) => cursor.value().map(drop),
            None => Err(Unread),
        })?;
        self.name = nonempty_string(name.get())?;
        self.arguments = match arguments.get() {
            None | Some("null") => Cow::Borrowed(""),
            Some(text) if text.starts_with('"') => string_of(text)?.unwrap_or_default(),
            Some(text) => Cow::Owned(serde_json::from_str::<Value>(text)?.to_string()),
        };
        Ok(())
    }
}

/// A string member that is present and non-empty (`as_str` and `filter(!empty)`).
fn nonempty_string(raw: Option<&str>) -> Result<Option<Cow<'_, str>>, Unread> {
    Ok(raw
        .map(string_of)
        .transpose()?
        .flatten()
        .filter(|s| !s.is_empty()))
}

/// A member the reader takes at most once (the serde views refuse a repeated one).
struct Single<'a>(Option<&'a str>);

impl<'a> Single<'a> {
    fn new() -> Self {
        Self(None)
    }

    fn set(&mut self, raw: &'a str) -> Result<(), Unread> {
        if self.0.replace(raw).is_some() {
            return Err(Unread);
        }
        Ok(())
    }

    fn get(&self) -> Option<&'a str> {
        self.0
    }
}

/// A chunk read from its bytes: what the transformer takes from it.
#[derive(Debug)]
pub(super) struct ChunkRead<'a> {
    /// The chunk's `id` when it is a string.
    pub(super) id: Option<Cow<'a, str>>,
    /// A `usage` other than `null`.
    pub(super) usage: bool,
    pub(super) choices: Vec<ChoiceRead<'a>>,
}

/// One choice of a chunk read from its bytes.
#[derive(Debug)]
pub(super) struct ChoiceRead<'a> {
    pub(super) index: u64,
    /// The finish reason when it is a string (`null` and absent: `None`).
    pub(super) finish: Option<Cow<'a, str>>,
    /// The delta when it is an object.
    pub(super) delta: Option<DeltaRead<'a>>,
}

/// The delta members the reader takes, in the order of [`DeltaRead::known`].
pub(super) const KNOWN: [&str; 4] = ["content", "reasoning_content", "reasoning", "tool_calls"];

/// A delta read from its bytes.
#[derive(Debug, Default)]
pub(super) struct DeltaRead<'a> {
    /// The delta's text.
    pub(super) text: &'a str,
    /// The string `content`.
    pub(super) content: Option<Cow<'a, str>>,
    /// The string reasoning members, in the order they are scanned.
    pub(super) reasoning: Vec<(&'static str, Cow<'a, str>)>,
    /// `tool_calls`, when present (with any value).
    pub(super) tool_calls: Option<Vec<Fragment<'a>>>,
    /// The raw values of the members [`KNOWN`] names, when present; `None` when the delta has
    /// other members too (read again to judge them).
    pub(super) known: Option<[Option<&'a str>; 4]>,
}

/// The members of the last chunk read before its `choices`, as the reader saw them.
#[derive(Debug, Default)]
pub(super) struct Envelope {
    /// The chunk's bytes from its start through `"choices":` (and the blanks after it); empty
    /// before a chunk was read.
    prefix: Vec<u8>,
    /// The spans of the `id` and `usage` values in them.
    id: Option<Range<usize>>,
    usage: Option<Range<usize>>,
}

impl Envelope {
    /// The envelope of `data` through byte `len`, with these `id` and `usage` values (slices
    /// of `data`).
    fn of(data: &str, len: usize, id: Option<&str>, usage: Option<&str>) -> Self {
        let span = |raw: &str| {
            let start = raw.as_ptr() as usize - data.as_ptr() as usize;
            start..start + raw.len()
        };
        Self {
            prefix: data.as_bytes()[..len].to_vec(),
            id: id.map(span),
            usage: usage.map(span),
        }
    }
}

/// [`read_chunk_after`] with no envelope known (tests).
#[cfg(test)]
pub(super) fn read_chunk(data: &str) -> Result<ChunkRead<'_>, Unread> {
    read_chunk_after(data, &mut Envelope::default())
}

/// Reads a chunk from its data; [`Unread`] for anything the tree path takes (not an object, an
/// `error`, no `choices` array, a non-object choice, a finish reason neither a string nor
/// `null`, a repeated member, …). A chunk that starts with the bytes of `seen` is read from its
/// `choices` on; a chunk read whole leaves its envelope in `seen`.
pub(super) fn read_chunk_after<'a>(
    data: &'a str,
    seen: &mut Envelope,
) -> Result<ChunkRead<'a>, Unread> {
    let known = !seen.prefix.is_empty() && data.as_bytes().starts_with(&seen.prefix);
    let (mut id, mut usage) = (Single::new(), Single::new());
    let mut cursor = if known {
        // The same bytes as the envelope read before: the same members, the cursor where it
        // stood after them.
        id = Single(seen.id.clone().and_then(|span| data.get(span)));
        usage = Single(seen.usage.clone().and_then(|span| data.get(span)));
        Cursor::resumed(data, seen.prefix.len(), 1).ok_or(Unread)?
    } else {
        Cursor::new(data)
    };
    let mut choices = None;
    let mut fresh = None;
    let member = |cursor: &mut Cursor<'a>, key| match key {
        Some("id") => id.set(cursor.value()?),
        Some("usage") => usage.set(cursor.value()?),
        Some("choices") if choices.is_none() && cursor.peek() == Some(b'[') => {
            if !known {
                fresh = Some(Envelope::of(data, cursor.at(), id.get(), usage.get()));
            }
            let mut read = Vec::new();
            cursor.array(|cursor| {
                read.push(read_choice(cursor)?);
                Ok(())
            })?;
            choices = Some(read);
            Ok(())
        }
        // An error, `choices` twice or not an array, a key that may be one of these.
        Some("error" | "choices") | None => Err(Unread),
        Some(_) => cursor.value().map(drop),
    };
    if known {
        cursor.rest_of_object(Some("choices"), member)?;
    } else {
        if cursor.peek() != Some(b'{') {
            return Err(Unread);
        }
        cursor.object(member)?;
    }
    cursor.end()?;
    let read = ChunkRead {
        id: id.get().map(string_of).transpose()?.flatten(),
        usage: usage.get().is_some_and(|raw| raw != "null"),
        choices: choices.ok_or(Unread)?,
    };
    if let Some(fresh) = fresh {
        *seen = fresh;
    }
    Ok(read)
}

/// One choice (an object), at the cursor.
fn read_choice<'a>(cursor: &mut Cursor<'a>) -> Result<ChoiceRead<'a>, Unread> {
    if cursor.peek() != Some(b'{') {
        return Err(Unread);
    }
    let (mut index, mut finish) = (Single::new(), Single::new());
    let mut delta: Option<Option<DeltaRead<'a>>> = None;
    cursor.object(|cursor, key| match key {
        Some("index") => index.set(cursor.value()?),
        Some("finish_reason") => finish.set(cursor.value()?),
        Some("delta") if delta.is_none() => {
            delta = Some(if cursor.peek() == Some(b'{') {
                Some(read_delta(cursor)?)
            } else {
                cursor.value()?;
                None
            });
            Ok(())
        }
        Some("delta") | None => Err(Unread),
        Some(_) => cursor.value().map(drop),
    })?;
    let finish = match finish.get() {
        None | Some("null") => None,
        // `Value::as_str`: another value finishes nothing there, a shape left to the tree.
        Some(raw) => Some(string_of(raw)?.ok_or(Unread)?),
    };
    Ok(ChoiceRead {
        index: index.get().and_then(u64_of).unwrap_or(0),
        finish,
        delta: delta.flatten(),
    })
}

/// A delta object, at the cursor.
fn read_delta<'a>(cursor: &mut Cursor<'a>) -> Result<DeltaRead<'a>, Unread> {
    let mut raw = [
        ("content", Single::new()),
        ("reasoning_content", Single::new()),
        ("reasoning", Single::new()),
    ];
    let mut tool_calls: Option<(&'a str, Vec<Fragment<'a>>)> = None;
    let mut others = false;
    let (text, ()) = cursor.spanned(|cursor| {
        cursor.object(|cursor, key| match key {
            Some("tool_calls") if tool_calls.is_none() => {
                tool_calls = Some(cursor.spanned(Fragment::read_all)?);
                Ok(())
            }
            Some("tool_calls") | None => Err(Unread),
            Some(key) => match raw.iter_mut().find(|(k, _)| *k == key) {
                Some((_, member)) => member.set(cursor.value()?),
                None => {
                    others = true;
                    cursor.value().map(drop)
                }
            },
        })
    })?;
    let [(_, content), (_, reasoning_content), (_, reasoning)] = raw;
    let mut read = DeltaRead {
        text,
        content: content.get().map(string_of).transpose()?.flatten(),
        ..DeltaRead::default()
    };
    for (key, member) in [
        ("reasoning_content", reasoning_content.get()),
        ("reasoning", reasoning.get()),
    ] {
        if let Some(text) = member.map(string_of).transpose()?.flatten() {
            read.reasoning.push((key, text));
        }
    }
    read.known = (!others).then(|| {
        [
            content.get(),
            reasoning_content.get(),
            reasoning.get(),
            tool_calls.as_ref().map(|(raw, _)| *raw),
        ]
    });
    read.tool_calls = tool_calls.map(|(_, fragments)| fragments);
    Ok(read)
}

#[cfg(test)]
mod tests;
