//! Canonical arguments: the identity of a call for duplicates, storms and retry budgets.
//!
//! Compact JSON with object keys sorted and numbers normalised (`1.0` = `1`), so that key order
//! and number spelling never make two calls distinct.

use std::fmt::Write;

use serde_json::Value;

/// The canonical text of `value`.
#[must_use]
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out, 0);
    out
}

fn write_canonical(value: &Value, out: &mut String, depth: usize) {
    if depth > crate::limits::MAX_DEPTH {
        out.push('…');
        return;
    }
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if !(n.is_i64() || n.is_u64()) && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                // Exact: |f| < 2^53, so the integer conversion loses nothing.
                #[allow(clippy::cast_possible_truncation)]
                let _ = write!(out, "{}", f as i64);
            }
            _ => {
                let _ = write!(out, "{n}");
            }
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out, depth + 1);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out, depth + 1);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The identity of a call for duplicates and storms: its tool name and canonical arguments.
pub(crate) fn signature(name: &str, arguments: &Value) -> String {
    format!("{name}\u{0}{}", canonical(arguments))
}

/// The canonical identity of raw argument text: its canonical JSON when it parses, else the
/// trimmed text itself.
pub(crate) fn fingerprint(raw: &str) -> String {
    match serde_json::from_str::<Value>(raw) {
        Ok(value) => canonical(&value),
        Err(_) => raw.trim().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_and_number_spelling_do_not_matter() {
        assert_eq!(
            canonical(&json!({"b": 1.0, "a": [2, {"d": 1, "c": 0}]})),
            r#"{"a":[2,{"c":0,"d":1}],"b":1}"#
        );
        assert_eq!(canonical(&json!({"x": 1.5})), r#"{"x":1.5}"#);
        assert_ne!(canonical(&json!({"x": 1})), canonical(&json!({"x": "1"})));
    }

    #[test]
    fn fingerprints_of_raw_text() {
        assert_eq!(
            fingerprint(r#"{"b":1, "a":2}"#),
            fingerprint(r#"{"a":2,"b":1.0}"#)
        );
        assert_eq!(fingerprint(" {broken "), "{broken");
    }
}
