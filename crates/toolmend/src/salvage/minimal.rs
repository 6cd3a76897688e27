//! The minimal salvage: empty arguments and double-encoded objects.
//!
//! This is the seam the lenient parser replaces; its contract is [`salvage`]'s doc.

use serde_json::Value;

use super::{SalvageError, SalvageErrorKind, SalvageOptions, Salvaged, SyntaxRepair};
use crate::RepairKind;

/// Salvages `text`, which did not parse as strict JSON or parsed as a bare JSON string or `null`.
///
/// # Errors
///
/// A [`SalvageError`] when the text is too large, too deep, or holds nothing salvageable. Never
/// returns `{}` for garbage: only empty text and `null` give `{}` (as `empty_arguments`).
pub fn salvage(text: &str, options: &SalvageOptions) -> Result<Salvaged, SalvageError> {
    if text.len() > options.max_bytes {
        return Err(SalvageError::at(SalvageErrorKind::TooLarge, text, options.max_bytes));
    }
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "null" {
        return Ok(one(Value::Object(serde_json::Map::new()), RepairKind::EmptyArguments, 0));
    }
    let start = text.len() - text.trim_start().len();
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::String(inner)) => {
            let inner_trimmed = inner.trim();
            if inner_trimmed.starts_with('{')
                && let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(inner_trimmed)
            {
                return Ok(one(value, RepairKind::DoubleEncoded, start));
            }
            Err(SalvageError::at(SalvageErrorKind::NoJson, text, start))
        }
        Ok(_) => Err(SalvageError::at(SalvageErrorKind::Syntax, text, start)),
        Err(e) => {
            let kind = if trimmed.starts_with(['{', '[']) {
                SalvageErrorKind::Syntax
            } else {
                SalvageErrorKind::NoJson
            };
            let offset = line_col_to_offset(text, e.line(), e.column());
            Err(SalvageError::at(kind, text, offset))
        }
    }
}

fn one(value: Value, kind: RepairKind, offset: usize) -> Salvaged {
    Salvaged { values: vec![value], repairs: vec![SyntaxRepair { kind, offset }], truncated: false }
}

fn line_col_to_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Result<Salvaged, SalvageError> {
        salvage(text, &SalvageOptions::default())
    }

    #[test]
    fn empty_and_null_become_empty_object() {
        for text in ["", "   ", "\n", "null", " null "] {
            let s = run(text).unwrap();
            assert_eq!(s.values, vec![serde_json::json!({})], "{text:?}");
            assert!(s.has(RepairKind::EmptyArguments));
        }
    }

    #[test]
    fn double_encoded_object_is_unwrapped() {
        let s = run(r#""{\"path\": \"a\"}""#).unwrap();
        assert_eq!(s.values, vec![serde_json::json!({"path": "a"})]);
        assert!(s.has(RepairKind::DoubleEncoded));
    }

    #[test]
    fn a_string_that_is_not_an_object_is_no_json() {
        assert_eq!(run(r#""ls -la""#).unwrap_err().kind, SalvageErrorKind::NoJson);
    }

    #[test]
    fn garbage_is_an_error_never_an_empty_object() {
        assert_eq!(run("{\"a\": ").unwrap_err().kind, SalvageErrorKind::Syntax);
        assert_eq!(run("hello").unwrap_err().kind, SalvageErrorKind::NoJson);
    }

    #[test]
    fn oversize_text_is_refused() {
        let options = SalvageOptions { max_bytes: 4, ..SalvageOptions::default() };
        assert_eq!(salvage("{\"a\":1", &options).unwrap_err().kind, SalvageErrorKind::TooLarge);
    }
}
