//! The chunks the proxy writes for a choice (its held text, its repaired calls), written from
//! the bytes of the chunks whose keys they copy instead of from their trees.
//!
//! A written chunk copies the envelope of a received chunk (`id`, `model`,
//! `system_fingerprint`, …, its `usage` as `null`) and the keys of one of its choices
//! (`logprobs`, …). The tree path parses that chunk into a `serde_json::Value` and serialises
//! it again; this writer copies the members' bytes, which gives the same bytes exactly when the
//! received text is already in serde_json's compact form ([`Canonical`]): no whitespace between
//! tokens, strings escaped as serde_json escapes them, no key repeated in any object, numbers
//! without an exponent (they keep their text, `arbitrary_precision`; an exponent is re-spelt).
//! Any other text is left to the tree path (`None`), so a chunk the writer does not take is
//! written as before.

use serde_json::Value;

/// How deep the writer follows nested values before leaving a text to the tree path.
const MAX_DEPTH: usize = 64;
/// How many members an object may have before the writer leaves its text to the tree path
/// (repeated keys are found by comparing each key with those before it).
const MAX_MEMBERS: usize = 64;

/// A JSON object's members as their texts (key with its quotes, value), when the whole object
/// is in serde_json's compact form.
struct Canonical<'a> {
    members: Vec<(&'a str, &'a str)>,
}

impl<'a> Canonical<'a> {
    /// The members of `text` when it is one object in compact form, `None` otherwise.
    fn object(text: &'a str) -> Option<Self> {
        let bytes = text.as_bytes();
        let mut at = 0;
        let members = object(bytes, &mut at, 0)?;
        (at == bytes.len()).then(|| Self {
            members: members
                .into_iter()
                .map(|(key, value)| (&text[key.0..key.1], &text[value.0..value.1]))
                .collect(),
        })
    }

    /// The value of `key` (its text with quotes, as written), and its position.
    fn find(&self, key: &str) -> Option<(usize, &'a str)> {
        self.members
            .iter()
            .position(|(k, _)| *k == key)
            .map(|at| (at, self.members[at].1))
    }

    /// Removes `key` as `serde_json::Map::remove` does with `preserve_order` (the last member
    /// takes its place); returns its value.
    fn swap_remove(&mut self, key: &str) -> Option<&'a str> {
        let (at, value) = self.find(key)?;
        self.members.swap_remove(at);
        Some(value)
    }

    /// Sets `key` as `Map::insert` does: in place when present, else appended.
    fn set(&mut self, key: &'a str, value: &'a str) {
        match self.find(key) {
            Some((at, _)) => self.members[at].1 = value,
            None => self.members.push((key, value)),
        }
    }

    /// The object's compact text.
    fn write(&self, out: &mut String) {
        out.push('{');
        for (n, (key, value)) in self.members.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(key);
            out.push(':');
            out.push_str(value);
        }
        out.push('}');
    }
}

/// The items of a compact array's text (`None` for another value).
fn items(text: &str) -> Option<Vec<&str>> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'[') {
        return None;
    }
    let mut at = 1;
    let mut out = Vec::new();
    if bytes.get(at) == Some(&b']') {
        return Some(out);
    }
    loop {
        let start = at;
        value(bytes, &mut at, 1)?;
        out.push(&text[start..at]);
        match bytes.get(at)? {
            b',' => at += 1,
            b']' => return Some(out),
            _ => return None,
        }
    }
}

/// The source of a written chunk's choice keys.
#[derive(Debug, Clone, Copy)]
pub(super) enum ChoiceKeys<'a> {
    /// A whole choice of a received chunk (its `index`, `delta` and `finish_reason` replaced
    /// where they stand): the chunk's text and the choice's position in its `choices`.
    Whole(&'a str, usize),
    /// A choice's keys besides `index`, `delta` and `finish_reason` (those follow them).
    Extras(&'a str, usize),
    /// No keys of a received choice.
    None,
}

/// The JSON text of a chunk the proxy writes: the envelope of `envelope` (a received chunk's
/// text, without its `choices`, its `usage` as `null`; none when `None`) and one choice made
/// of `keys` with this `index`, `delta` and `finish_reason`. `None` when a text it copies is
/// not in compact form (the tree path writes that chunk).
pub(super) fn chunk(
    envelope: Option<&str>,
    keys: ChoiceKeys<'_>,
    index: u64,
    delta: &Value,
    finish: Option<&str>,
) -> Option<String> {
    let mut object = match envelope {
        Some(text) => Canonical::object(text)?,
        None => Canonical {
            members: Vec::new(),
        },
    };
    let mut choice = match keys {
        // The choice of the chunk whose envelope this is (a call chunk's template): read
        // from the same parse.
        ChoiceKeys::Whole(text, position) if envelope.is_some_and(|e| std::ptr::eq(e, text)) => {
            choice_in(&object, position)?
        }
        ChoiceKeys::Whole(text, position) => choice_of(text, position)?,
        ChoiceKeys::Extras(text, position) => {
            let mut choice = choice_of(text, position)?;
            choice.members.retain(|(key, _)| {
                !matches!(*key, "\"index\"" | "\"delta\"" | "\"finish_reason\"")
            });
            choice
        }
        ChoiceKeys::None => Canonical {
            members: Vec::new(),
        },
    };
    object.swap_remove("\"choices\"");
    if object.find("\"usage\"").is_some() {
        object.set("\"usage\"", "null");
    }
    let index = index.to_string();
    let delta = delta.to_string();
    let finish = serde_json::to_string(&finish).ok()?;
    choice.set("\"index\"", &index);
    choice.set("\"delta\"", &delta);
    choice.set("\"finish_reason\"", &finish);
    let mut choices = String::with_capacity(delta.len() + 64);
    choices.push('[');
    choice.write(&mut choices);
    choices.push(']');
    object.members.push(("\"choices\"", &choices));
    let mut out = String::with_capacity(choices.len() + envelope.map_or(0, str::len));
    object.write(&mut out);
    Some(out)
}

/// The JSON text of a received chunk (`text`) as the tree path writes it back with new finish
/// reasons: each item of its `choices` with `Some` in `finishes` gets that `finish_reason` (in
/// place), and `choices` moves to the end (`Map::remove`, then `insert`). `None` when the text
/// is not in compact form or its `choices` is not an array of as many objects.
pub(super) fn with_finishes(text: &str, finishes: &[Option<&str>]) -> Option<String> {
    let mut object = Canonical::object(text)?;
    let choices = object.swap_remove("\"choices\"")?;
    let items = items(choices)?;
    if items.len() != finishes.len() {
        return None;
    }
    let mut written = String::with_capacity(choices.len() + 16);
    written.push('[');
    for (n, (item, finish)) in items.into_iter().zip(finishes).enumerate() {
        if n > 0 {
            written.push(',');
        }
        match finish {
            Some(finish) => {
                let mut choice = Canonical::object(item)?;
                let finish = serde_json::to_string(finish).ok()?;
                choice.set("\"finish_reason\"", &finish);
                choice.write(&mut written);
            }
            None => written.push_str(item),
        }
    }
    written.push(']');
    object.members.push(("\"choices\"", &written));
    let mut out = String::with_capacity(text.len() + 16);
    object.write(&mut out);
    Some(out)
}

/// The choice at `position` of the `choices` of a received chunk's text, as
/// `Sent::read` takes it: no members when the chunk has no such choice object.
fn choice_of(text: &str, position: usize) -> Option<Canonical<'_>> {
    choice_in(&Canonical::object(text)?, position)
}

/// [`choice_of`] in a chunk already read.
fn choice_in<'a>(object: &Canonical<'a>, position: usize) -> Option<Canonical<'a>> {
    let empty = Canonical {
        members: Vec::new(),
    };
    let Some((_, choices)) = object.find("\"choices\"") else {
        return Some(empty);
    };
    let Some(mut items) = items(choices) else {
        return Some(empty);
    };
    if position >= items.len() {
        return Some(empty);
    }
    let item = items.swap_remove(position);
    if !item.starts_with('{') {
        return Some(empty);
    }
    Canonical::object(item)
}

/// Byte spans of one object's members (key with quotes, value), at `at` (its `{`), in compact
/// form; `at` moves past its `}`.
#[allow(clippy::type_complexity)]
fn object(
    bytes: &[u8],
    at: &mut usize,
    depth: usize,
) -> Option<Vec<((usize, usize), (usize, usize))>> {
    if bytes.get(*at) != Some(&b'{') || depth > MAX_DEPTH {
        return None;
    }
    *at += 1;
    let mut members: Vec<((usize, usize), (usize, usize))> = Vec::new();
    if bytes.get(*at) == Some(&b'}') {
        *at += 1;
        return Some(members);
    }
    loop {
        let key_start = *at;
        string(bytes, at)?;
        let key = (key_start, *at);
        // A repeated key: the tree keeps one member where the text has two.
        if members.len() >= MAX_MEMBERS
            || members
                .iter()
                .any(|((s, e), _)| bytes[*s..*e] == bytes[key.0..key.1])
        {
            return None;
        }
        if bytes.get(*at) != Some(&b':') {
            return None;
        }
        *at += 1;
        let value_start = *at;
        value(bytes, at, depth + 1)?;
        members.push((key, (value_start, *at)));
        match bytes.get(*at)? {
            b',' => *at += 1,
            b'}' => {
                *at += 1;
                return Some(members);
            }
            _ => return None,
        }
    }
}

/// One value in compact form at `at`; `at` moves past it.
fn value(bytes: &[u8], at: &mut usize, depth: usize) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    match bytes.get(*at)? {
        b'{' => object(bytes, at, depth).map(drop),
        b'[' => {
            *at += 1;
            if bytes.get(*at) == Some(&b']') {
                *at += 1;
                return Some(());
            }
            loop {
                value(bytes, at, depth + 1)?;
                match bytes.get(*at)? {
                    b',' => *at += 1,
                    b']' => {
                        *at += 1;
                        return Some(());
                    }
                    _ => return None,
                }
            }
        }
        b'"' => string(bytes, at),
        b't' => literal(bytes, at, b"true"),
        b'f' => literal(bytes, at, b"false"),
        b'n' => literal(bytes, at, b"null"),
        b'-' | b'0'..=b'9' => number(bytes, at),
        _ => None,
    }
}

fn literal(bytes: &[u8], at: &mut usize, word: &[u8]) -> Option<()> {
    bytes.get(*at..*at + word.len()).filter(|w| *w == word)?;
    *at += word.len();
    Some(())
}

/// A JSON number without an exponent, which serde_json writes back as written
/// (`arbitrary_precision`).
fn number(bytes: &[u8], at: &mut usize) -> Option<()> {
    let digits = |at: &mut usize| {
        let start = *at;
        while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at > start
    };
    if bytes.get(*at) == Some(&b'-') {
        *at += 1;
    }
    match bytes.get(*at)? {
        b'0' => *at += 1,
        b'1'..=b'9' => {
            digits(at);
        }
        _ => return None,
    }
    if bytes.get(*at) == Some(&b'.') {
        *at += 1;
        if !digits(at) {
            return None;
        }
    }
    // serde_json re-spells exponents (`1E5` and `1e5` as `1e+5`): a text with one is left to
    // the tree.
    if matches!(bytes.get(*at), Some(b'e' | b'E')) {
        return None;
    }
    Some(())
}

/// A string escaped as serde_json escapes it: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and
/// `\u00xx` (lowercase) for the other control characters; everything else as itself.
fn string(bytes: &[u8], at: &mut usize) -> Option<()> {
    if bytes.get(*at) != Some(&b'"') {
        return None;
    }
    *at += 1;
    loop {
        let off = memchr::memchr2(b'"', b'\\', bytes.get(*at..)?)?;
        if bytes[*at..*at + off].iter().any(|b| *b < 0x20) {
            return None;
        }
        *at += off;
        if bytes[*at] == b'"' {
            *at += 1;
            return Some(());
        }
        match bytes.get(*at + 1)? {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => *at += 2,
            b'u' => {
                let hex = bytes.get(*at + 2..*at + 6)?;
                let lower = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
                if &hex[..2] != b"00" || !hex.iter().all(lower) {
                    return None;
                }
                let code = u8::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()?;
                // Control characters without a short escape.
                if code >= 0x20 || matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                    return None;
                }
                *at += 6;
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests;
