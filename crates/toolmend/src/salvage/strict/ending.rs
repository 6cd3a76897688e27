//! What the last bytes of an object text say before it is read: one that does not end with a
//! `}` after a value cannot be strict JSON (issue #31).
//!
//! Strict JSON whose first byte is `{` ends, blanks aside, with the root's `}`, and the byte
//! before that `}` ends a value or is the `{` itself, never a comma. A text that ends otherwise
//! (cut off, something after the root, a trailing comma) is refused whatever its other bytes
//! are, so the value-building read would only build members for salvage to go on after:
//! salvage reads it from its start instead, or the syntax-only check (`syntax.rs`) tells how it
//! failed, for a mutating tool's cut call. It must never fire on strict JSON (a valid call would
//! lose its value); it may miss faults (a trailing comma inside, a Python literal), which are
//! then read as before. It looks at two bytes when the text ends as strict JSON usually does.

use super::super::scan;

/// How an object text that cannot be strict JSON ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// Not with a `}`: cut off, or something after the root object.
    Unclosed,
    /// With a comma before its last `}`.
    Comma,
}

/// How the object text `bytes`, whose `{` is at `root`, ends when that alone shows it cannot
/// be strict JSON (see the module doc); `None` as well when its first key is not quoted (the
/// value-building read then fails at once, as cheaply).
#[inline(always)]
pub(super) fn broken_ending(bytes: &[u8], root: usize) -> Option<Ending> {
    let ending = match bytes {
        // Strict JSON's usual ending, told at once: a value's last byte (or `{`), then `}`.
        [.., before, b'}'] if *before > b' ' && *before != b',' => return None,
        _ => ending_after_blanks(bytes)?,
    };
    (bytes.get(scan::skip_ws(bytes, root + 1)) == Some(&b'"')).then_some(ending)
}

/// [`broken_ending`] of a text whose last two bytes are not a value's end and `}`; the text
/// holds a `{` before that.
#[cold]
#[inline(never)]
fn ending_after_blanks(bytes: &[u8]) -> Option<Ending> {
    let end = scan::back_over_ws(bytes, 0, bytes.len());
    if end == 0 || bytes[end - 1] != b'}' {
        return Some(Ending::Unclosed);
    }
    (bytes[..end - 1].iter().rev().find(|&&b| !scan::is_ws(b)) == Some(&b','))
        .then_some(Ending::Comma)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ending(text: &str) -> Option<Ending> {
        broken_ending(text.as_bytes(), text.find('{').unwrap())
    }

    #[test]
    fn only_an_ending_strict_json_never_has_is_told() {
        for text in [
            r#"{"a": 1}"#,
            " {\"a\": [1, {}] }\n",
            r#"{"a": "x,}"}"#,
            r#"{"a": {}}"#,
            "{}",
            "{ }",
            "{'a': 1,}",
        ] {
            assert_eq!(ending(text), None, "{text}");
        }
        for text in [
            r#"{"a": 1"#,
            r#"{"a": 1} x"#,
            r#"{"a": "#,
            r#"{""#,
            "{\"a\": 1}}\n,",
        ] {
            assert_eq!(ending(text), Some(Ending::Unclosed), "{text}");
        }
        for text in [r#"{"a": 1,}"#, "{\"a\": 1 ,\n}  ", r#"{"a": "x,}"#] {
            assert_eq!(ending(text), Some(Ending::Comma), "{text}");
        }
    }
}
