//! Python tuples and sets in a document: `(1, 2)` and `{'a', 'b'}` are the lists they print as.
//!
//! A document-only reading ([`super::DocumentOptions::lenient_scalars`]), tried only when the
//! text as written cannot be read: [`respell`] writes the text again with each tuple's
//! parentheses as brackets, each set's braces as brackets and the parentheses of a group around
//! one value (`(1)`, `("x")`) as blanks, byte for byte the same length (offsets stay true), and
//! the lenient parser reads that.
//!
//! - Detects: `(` where a value starts (at the start of the text or of a fenced block, after
//!   `:`, `,`, `(`, `[` inside brackets) and its matching `)`; `{` there whose members hold no
//!   `:` and no bare word, only quoted strings, numbers and brackets (`{'a', 'b'}`, `{5}`).
//! - Does: `(a, b)` and `()` → `[a, b]`, `[]`; `(a)` → ` a `; `{'a', 'b'}` → `['a', 'b']`
//!   (reported as `python_literal`, as `True` → `true`).
//! - Never fires when: the quotes cannot be paired plainly (each string closed by its own
//!   quote and followed by `,`, `:`, a closer, a blank or the end), a bracket is unmatched,
//!   a `(` follows a word (prose: `bla (note)`), or the text reads without it.
//! - Example: `{"coords": (1, 2), "tags": {'a'}}` → `{"coords": [1, 2], "tags": ["a"]}`.

use crate::salvage::scan;

/// One open bracket while respelling.
struct Open {
    /// Where the opener is.
    at: usize,
    /// The opener, `(`, `[` or `{`.
    byte: u8,
    /// A `,` at this level.
    comma: bool,
    /// A `:` or a bare word at this level: a `{` that is an object (or prose), not a set.
    not_set: bool,
    /// Anything but blanks at this level.
    filled: bool,
    /// The opener stands where a value starts (a tuple or set may be rewritten).
    at_value: bool,
}

/// The text with its Python tuples, sets and groups respelt as JSON (see the module docs), and
/// the offset of the first change; `None` when there is nothing to respell or the text is not
/// plain enough to tell strings from structure.
pub(in crate::salvage) fn respell(text: &str, max_depth: usize) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    // Nothing to respell without a parenthesis or a brace.
    memchr::memchr2(b'(', b'{', bytes)?;
    let mut out = bytes.to_vec();
    let mut first = None;
    let mut stack: Vec<Open> = Vec::new();
    let mut at_value = true;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' | b'\'' => {
                i = string_end(bytes, i)?;
                if let Some(top) = stack.last_mut() {
                    top.filled = true;
                }
                at_value = false;
                continue;
            }
            b'`' if stack.is_empty() && bytes[i..].starts_with(b"```") => {
                // A fence line: a value may start on the next line.
                i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n + 1);
                at_value = true;
                continue;
            }
            b'(' | b'[' | b'{' => {
                if stack.len() >= max_depth {
                    return None;
                }
                if let Some(top) = stack.last_mut() {
                    top.filled = true;
                }
                stack.push(Open {
                    at: i,
                    byte: b,
                    comma: false,
                    not_set: false,
                    filled: false,
                    at_value,
                });
                at_value = true;
            }
            b')' | b']' | b'}' => {
                let open = stack.pop()?;
                let want = match open.byte {
                    b'(' => b')',
                    b'[' => b']',
                    _ => b'}',
                };
                if want != b {
                    return None;
                }
                let respelt = match open.byte {
                    b'(' if open.at_value && (open.comma || !open.filled) => Some((b'[', b']')),
                    b'(' if open.at_value => Some((b' ', b' ')),
                    b'{' if open.at_value && open.filled && !open.not_set => Some((b'[', b']')),
                    _ => None,
                };
                if let Some((o, c)) = respelt {
                    out[open.at] = o;
                    out[i] = c;
                    first.get_or_insert(open.at);
                }
                if let Some(top) = stack.last_mut() {
                    top.filled = true;
                }
                at_value = false;
            }
            b',' | b':' => {
                if let Some(top) = stack.last_mut() {
                    if b == b',' {
                        top.comma = true;
                    } else {
                        top.not_set = true;
                    }
                    at_value = true;
                } else {
                    at_value = false;
                }
            }
            _ if scan::is_ws(b) => {}
            _ => {
                if let Some(top) = stack.last_mut() {
                    top.filled = true;
                    top.not_set |= b.is_ascii_alphabetic() || b == b'_';
                }
                at_value = false;
            }
        }
        i += 1;
    }
    let first = first?;
    // Only ASCII brackets were swapped for ASCII brackets or blanks: still UTF-8.
    String::from_utf8(out).ok().map(|s| (s, first))
}

/// Where the string opened by the quote at `open` ends (after its closing quote), when it
/// closes plainly: by its own quote, not escaped, followed by a blank, `,`, `:`, a closer or
/// the end. `None` otherwise (an apostrophe in prose, a quote inside a string).
fn string_end(bytes: &[u8], open: usize) -> Option<usize> {
    let quote = bytes[open];
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => {
                let after = i + 1;
                return match bytes.get(after) {
                    None => Some(after),
                    Some(&n) if scan::is_ws(n) || matches!(n, b',' | b':' | b')' | b']' | b'}') => {
                        Some(after)
                    }
                    Some(_) => None,
                };
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn respelt(text: &str) -> Option<String> {
        respell(text, 64).map(|(s, _)| s)
    }

    #[test]
    fn tuples_sets_and_groups_are_respelt_in_place() {
        for (text, want) in [
            ("(1, 2)", "[1, 2]"),
            ("((1, 2), (3, 4))", "[[1, 2], [3, 4]]"),
            ("{\"c\": (1, 2), \"e\": ()}", "{\"c\": [1, 2], \"e\": []}"),
            ("(1)", " 1 "),
            ("{\"g\": (\"x\")}", "{\"g\":  \"x\" }"),
            ("{'a', 'b'}", "['a', 'b']"),
            ("[{5}s ", "[[5]s "),
            ("```json\n(1, 2)\n```", "```json\n[1, 2]\n```"),
            ("[(1, 'a)b'), 2]", "[[1, 'a)b'], 2]"),
        ] {
            assert_eq!(respelt(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn objects_prose_and_unclear_quotes_are_left_alone() {
        for text in [
            // An object, an empty object, a brace around a bare word.
            "{\"a\": 1}",
            "{}",
            "{name}",
            // A parenthesis after a word is prose.
            "bla, bla (some clarification): {\"a\": 1}",
            "note (1, 2)",
            // Quotes that do not pair plainly, unmatched brackets.
            "(don't, 1)",
            "(\"a\"b, 1)",
            "(1, 2]",
            "(1, 2",
            "[1, 2]",
        ] {
            assert_eq!(respelt(text), None, "{text}");
        }
    }

    #[test]
    fn depth_is_bounded() {
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(respell(&deep, 64), None);
        assert!(respell(&deep, 128).is_some());
    }
}
