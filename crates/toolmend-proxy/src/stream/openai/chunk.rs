//! One Chat Completions stream chunk read from its bytes in one pass: the deltas' text, the
//! call fragments, ids, indices and finish reasons as borrowed spans, no tree.
//!
//! The reader walks the chunk once with [`Cursor`] (chunk → choices → choice → delta →
//! fragments → function), where the serde views scanned each level again. It reads exactly what
//! those views read (the test module keeps them as its oracle): a chunk that finishes a choice,
//! an `error`, a `choices` that is not an array of objects, a repeated member the reader takes,
//! a key with an escape where the reader must know the key, anything that is not JSON, is
//! [`Unread`], and the transformer reads its tree instead.

use std::borrow::Cow;

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

/// One choice of a chunk read from its bytes (one that does not finish).
#[derive(Debug)]
pub(super) struct ChoiceRead<'a> {
    pub(super) index: u64,
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

/// Reads a chunk that finishes no choice from its data; [`Unread`] for anything else (not an
/// object, an `error`, no `choices` array, a non-object choice, a finish reason, a repeated
/// member, …), which the tree path takes.
pub(super) fn read_chunk(data: &str) -> Result<ChunkRead<'_>, Unread> {
    let mut cursor = Cursor::new(data);
    if cursor.peek() != Some(b'{') {
        return Err(Unread);
    }
    let (mut id, mut usage) = (Single::new(), Single::new());
    let mut choices = None;
    cursor.object(|cursor, key| match key {
        Some("id") => id.set(cursor.value()?),
        Some("usage") => usage.set(cursor.value()?),
        Some("choices") if choices.is_none() && cursor.peek() == Some(b'[') => {
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
    })?;
    cursor.end()?;
    Ok(ChunkRead {
        id: id.get().map(string_of).transpose()?.flatten(),
        usage: usage.get().is_some_and(|raw| raw != "null"),
        choices: choices.ok_or(Unread)?,
    })
}

/// One choice (an object that finishes nothing), at the cursor.
fn read_choice<'a>(cursor: &mut Cursor<'a>) -> Result<ChoiceRead<'a>, Unread> {
    if cursor.peek() != Some(b'{') {
        return Err(Unread);
    }
    let (mut index, mut finish) = (Single::new(), Single::new());
    let mut delta: Option<Option<DeltaRead<'a>>> = None;
    cursor.object(|cursor, key| match key {
        Some("index") => index.set(cursor.value()?),
        Some("finish_reason") => {
            finish.set(cursor.value()?)?;
            match finish.get() {
                Some("null") => Ok(()),
                _ => Err(Unread),
            }
        }
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
    Ok(ChoiceRead {
        index: index.get().and_then(u64_of).unwrap_or(0),
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
