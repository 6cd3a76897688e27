//! JSON text as Python's `json.dumps` writes a value, written from a `serde_json::Value`.
//!
//! `toolmend.repair_json(text)` returns `json.dumps(value)` with its defaults: `", "` and
//! `": "` between items, `ensure_ascii=True` (every character outside `' '`..`'~'` escaped,
//! lower-case hex, astral characters as surrogate pairs), numbers as Python prints the `int` or
//! `float` the value converts to (`convert::to_py`), `Infinity` for an infinite float. Writing
//! the text here saves building the Python objects only to serialise them (issue #31); the
//! text is the same, byte for byte. A float is printed by Python itself (`float.__repr__`, the
//! shortest text that reads back), and so is an integer too large for 64 bits.

use std::fmt::Write as _;

use pyo3::prelude::*;
use pyo3::types::PyFloat;
use serde_json::{Number, Value};

use crate::convert::number_to_py;

/// `json.dumps(to_py(value))`.
pub(crate) fn dumps(py: Python<'_>, value: &Value) -> PyResult<String> {
    let mut out = String::with_capacity(128);
    write_value(py, &mut out, value)?;
    Ok(out)
}

/// The value's nesting is bounded by the salvage depth limit (128), so recursion is bounded.
fn write_value(py: Python<'_>, out: &mut String, value: &Value) -> PyResult<()> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(py, out, n)?,
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(py, out, item)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_string(out, k);
                out.push_str(": ");
                write_value(py, out, v)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A number as `json.dumps` prints the `int` or `float` `to_py` makes of it.
fn write_number(py: Python<'_>, out: &mut String, n: &Number) -> PyResult<()> {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
        return Ok(());
    }
    if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
        return Ok(());
    }
    let object = number_to_py(py, n)?;
    if let Ok(f) = object.cast::<PyFloat>() {
        let f = f.value();
        // json.dumps' spellings (allow_nan=True); `float.__repr__` says `inf`.
        if f.is_nan() {
            out.push_str("NaN");
            return Ok(());
        }
        if f.is_infinite() {
            out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
            return Ok(());
        }
        out.push_str(&object.repr()?.to_cow()?);
        return Ok(());
    }
    out.push_str(&object.str()?.to_cow()?);
    Ok(())
}

/// A string as `json.dumps` writes it with `ensure_ascii=True`.
fn write_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let (mut plain, mut i) = (0, 0);
    while i < bytes.len() {
        let b = bytes[i];
        if (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\' {
            i += 1;
            continue;
        }
        out.push_str(&s[plain..i]);
        // `i` is at a character's first byte: every byte before it was ASCII or a whole
        // character skipped below.
        let c = s[i..].chars().next().unwrap_or('\u{fffd}');
        i += c.len_utf8();
        plain = i;
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push_str(&s[plain..]);
    out.push('"');
}
