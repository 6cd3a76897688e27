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
        Value::Number(n) => write_number(&n.to_string(), out),
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

/// Writes a JSON number literal as its exact decimal value, one spelling per value: `1.0`,
/// `1e0` and `10E-1` are `1`, `0.50` is `0.5`. Numbers keep their text (serde_json's
/// `arbitrary_precision`), so digits past f64's precision still tell two calls apart.
fn write_number(literal: &str, out: &mut String) {
    let (negative, body) = match literal.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, literal),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (
            &body[..i],
            body[i + 1..].strip_prefix('+').unwrap_or(&body[i + 1..]),
        ),
        None => (body, "0"),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // An exponent past i32 is kept as written: still one value per spelling, never a panic.
    let Ok(exponent) = exponent.parse::<i32>() else {
        out.push_str(literal);
        return;
    };
    let digits: String = int.chars().chain(frac.chars()).collect();
    let digits = digits.trim_start_matches('0');
    let trimmed = digits.trim_end_matches('0');
    if trimmed.is_empty() {
        out.push('0');
        return;
    }
    // The value is `trimmed × 10^scale`.
    let scale = i64::from(exponent) - frac.len() as i64 + (digits.len() - trimmed.len()) as i64;
    if negative {
        out.push('-');
    }
    let len = trimmed.len() as i64;
    if (0..=40).contains(&scale) {
        out.push_str(trimmed);
        out.extend(std::iter::repeat_n('0', scale as usize));
    } else if scale < 0 && -scale < len {
        let point = (len + scale) as usize;
        out.push_str(&trimmed[..point]);
        out.push('.');
        out.push_str(&trimmed[point..]);
    } else if scale < 0 && -scale - len <= 40 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-scale - len) as usize));
        out.push_str(trimmed);
    } else {
        let _ = write!(out, "{trimmed}e{scale}");
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
    fn numbers_are_canonical_by_exact_value() {
        let canon = |text: &str| canonical(&serde_json::from_str(text).unwrap());
        for (a, b) in [
            ("1", "1.0"),
            ("100", "1e2"),
            ("100", "10E+1"),
            ("0.5", "0.50"),
            ("0.5", "5e-1"),
            ("0.001", "1E-3"),
            ("0", "-0.0"),
            ("-12.5", "-125e-1"),
            ("1e400", "10e399"),
        ] {
            assert_eq!(canon(a), canon(b), "{a} = {b}");
        }
        assert_eq!(canon("0.50"), "0.5");
        assert_eq!(canon("1e400"), "1e400");
        // Digits past f64's precision are not the same call.
        assert_ne!(
            canon("12345678901234567890123"),
            canon("12345678901234567890124")
        );
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
