//! Compact JSON text: byte for byte what `serde_json::to_string` writes, for a `Value` and for
//! a string, shared by salvage's text ([`super::node`]) and the repaired call's text
//! (`crate::repair::splice`).
//!
//! Strings, nearly all of a large call, are copied eight bytes at a time up to the next byte
//! JSON escapes, where serde_json looks each byte up in turn.

use serde_json::Value;

/// Writes `value` as compact JSON.
pub(crate) fn write_compact(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        // The number's own text (`arbitrary_precision`), as serde_json writes it.
        // Its text as read (`arbitrary_precision`), which is what its `Display` writes,
        // copied without the formatting machinery.
        Value::Number(n) => out.push_str(n.as_str()),
        Value::String(text) => write_string(out, text),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_compact(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_compact(out, item);
            }
            out.push('}');
        }
    }
}

/// Bytes that are all `0x01`, and all `0x80`, for the eight-at-a-time test.
const ONES: u64 = u64::from_le_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// The high bit of each of the eight bytes of `word` that is a control character, `"` or `\`
/// (the classic "has a byte less than n" and "has a zero byte" tests). Bits above a true one may
/// be false, so only the lowest set bit is used: it is exact.
fn escape_mask(word: u64) -> u64 {
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let zero = |w: u64| w.wrapping_sub(ONES) & !w;
    (control | zero(quote) | zero(backslash)) & HIGHS
}

/// The index of the first byte at or after `from` that JSON escapes in a string, or the length.
/// Eight bytes at a time, jumping straight to the byte: the content of a code file holds one
/// every few bytes.
fn next_escape(bytes: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = escape_mask(u64::from_le_bytes(word));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b < 0x20 || b == b'"' || b == b'\\' {
            return i;
        }
        i += 1;
    }
    bytes.len()
}

/// `text` as a JSON string literal, escaped as serde_json escapes it.
pub(crate) fn write_string(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.push('"');
    let mut start = 0;
    loop {
        let i = next_escape(bytes, start);
        // Every byte escaped is ASCII, so `i` is a character boundary.
        out.push_str(&text[start..i]);
        let Some(&b) = bytes.get(i) else {
            break;
        };
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            _ => "",
        };
        if escape.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length around the word size, with an escaped byte at every place (or none), and a
    /// second one after it: the tail word read over bytes already written finds the same byte.
    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        for len in 0..24usize {
            for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', 'é'] {
                for at in 0..=len {
                    for second in [None, Some(at + 1), Some(len.saturating_sub(1))] {
                        let mut text: Vec<char> =
                            (0..len).map(|i| (b'a' + i as u8) as char).collect();
                        if at < len {
                            text[at] = special;
                        }
                        if let Some(j) = second.filter(|&j| j < len) {
                            text[j] = '"';
                        }
                        let text: String = text.into_iter().collect();
                        let mut out = String::new();
                        write_string(&mut out, &text);
                        assert_eq!(out, serde_json::to_string(&text).unwrap(), "{text:?}");
                    }
                }
            }
        }
    }
}
