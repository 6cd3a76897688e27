//! `scalar_coerced`: a scalar of the wrong type that converts without loss.
//!
//! **Detects:** a string where an integer, number or boolean is expected whose text is exactly
//! such a value (`"42"`, `"-3"`, `"3.5"`, `"true"`); or a number or boolean where a string is
//! expected.
//!
//! **Does:** converts it: `"42"` → `42`, `42` → `"42"`.
//!
//! **Never fires when:** the conversion would lose or invent anything: `"007"`, `"+5"`, `" 42"`,
//! `"-0"`, `"1e3"` or `"3.0"` for an integer, `"yes"` or `"1"` for a boolean, a number whose
//! digits do not survive (`"0.30000000000000000001"`, `"1e3"` for a number), a float sent for a
//! string (its written form is gone once parsed), or the field's text must be kept verbatim
//! (tagged regex, command or content).
//!
//! **Example:** `{"limit": "20"}` → `{"limit": 20}`.

use serde_json::{Number, Value};

use super::{Fix, Rule, Site};
use crate::RepairKind;
use crate::repair::failures::Keywords;
use crate::repair::schema::{SchemaView, Types};

/// See the module docs.
#[derive(Debug)]
pub(crate) struct ScalarCoerced;

impl Rule for ScalarCoerced {
    fn kind(&self) -> RepairKind {
        RepairKind::ScalarCoerced
    }

    fn triggers(&self) -> Keywords {
        Keywords::TYPE.or(Keywords::BRANCHES)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        coerce(site.value, site.view).map(Fix::Replace)
    }
}

/// The lossless conversion of `value` to a scalar type `view` allows, if there is one; `None`
/// when the value's own type is allowed. Also asked by `bare_value_to_array`, whose wrap this
/// conversion of the item completes in the next round.
pub(crate) fn coerce(value: &Value, view: &SchemaView<'_>) -> Option<Value> {
    if view.allows(Types::of(value)) {
        return None;
    }
    let converted = match value {
        Value::String(text) => {
            if view.semantic().is_some_and(|s| s.is_verbatim()) {
                return None;
            }
            if view.allows(Types::INTEGER)
                && let Some(n) = integer(text)
            {
                Value::Number(n)
            } else if view.allows(Types::NUMBER)
                && let Some(n) = number(text)
            {
                Value::Number(n)
            } else if view.allows(Types::BOOLEAN) && (text == "true" || text == "false") {
                Value::Bool(text == "true")
            } else {
                return None;
            }
        }
        // Only integers, in their one canonical spelling: a float's text (`1e2`, `1.50`)
        // is what the model wrote, not a decimal it meant as a string.
        Value::Number(n) if view.allows(Types::STRING) && (n.is_i64() || n.is_u64()) => {
            Value::String(n.to_string())
        }
        Value::Bool(b) if view.allows(Types::STRING) => Value::String(b.to_string()),
        _ => return None,
    };
    Some(converted)
}

/// `-?(0|[1-9][0-9]*)` that fits 64 bits, and not `-0`.
fn integer(text: &str) -> Option<Number> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0";
    if !canonical {
        return None;
    }
    text.parse::<i64>()
        .map(Number::from)
        .or_else(|_| text.parse::<u64>().map(Number::from))
        .ok()
}

/// A JSON number literal (no leading `+`, zeros or spaces) with a finite value.
fn number(text: &str) -> Option<Number> {
    let bytes = text.as_bytes();
    let first = *bytes.first()?;
    if !(first == b'-' || first.is_ascii_digit()) || !bytes.last()?.is_ascii_digit() {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        // Lossless only when the number as an f64 writes back as the same decimal: no digits a
        // tool reading f64 would lose (`0.30000000000000000001`), no exponent (`1e3`). The
        // value keeps its text either way (serde_json `arbitrary_precision`).
        Ok(Value::Number(n))
            if n.as_f64()
                .and_then(Number::from_f64)
                .is_some_and(|f| same_decimal(&f.to_string(), text)) =>
        {
            Some(n)
        }
        _ => None,
    }
}

/// Whether two decimal literals are the same number written the same way, up to trailing
/// zeros of the fraction (`3.50` = `3.5`, `2.0` = `2`).
fn same_decimal(a: &str, b: &str) -> bool {
    fn trim(s: &str) -> &str {
        if s.contains(['e', 'E']) || !s.contains('.') {
            return s;
        }
        s.trim_end_matches('0').trim_end_matches('.')
    }
    trim(a) == trim(b)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use crate::{RepairKind::ScalarCoerced as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "limit": {"type": "integer"}, "ratio": {"type": "number"},
            "force": {"type": "boolean"}, "name": {"type": "string"},
            "pattern": {"type": "integer", "x-toolmend": {"semantic": "regex"}}}})
    }

    #[test]
    fn fires_on_lossless_conversions() {
        assert_fires(
            schema(),
            r#"{"limit": "42"}"#,
            K,
            "/limit",
            json!({"limit": 42}),
        );
        assert_fires(
            schema(),
            r#"{"limit": "-3"}"#,
            K,
            "/limit",
            json!({"limit": -3}),
        );
        assert_fires(
            schema(),
            r#"{"ratio": "3.5"}"#,
            K,
            "/ratio",
            json!({"ratio": 3.5}),
        );
        assert_fires(
            schema(),
            r#"{"force": "true"}"#,
            K,
            "/force",
            json!({"force": true}),
        );
        assert_fires(
            schema(),
            r#"{"name": 42}"#,
            K,
            "/name",
            json!({"name": "42"}),
        );
        assert_fires(
            schema(),
            r#"{"name": false}"#,
            K,
            "/name",
            json!({"name": "false"}),
        );
    }

    #[test]
    fn never_fires_on_lossy_text() {
        for args in [
            r#"{"limit": "007"}"#,
            r#"{"limit": "1e3"}"#,
            r#"{"limit": "3.0"}"#,
            r#"{"limit": " 42"}"#,
            r#"{"limit": "+5"}"#,
            r#"{"limit": "-0"}"#,
            r#"{"force": "yes"}"#,
            r#"{"force": "1"}"#,
            r#"{"ratio": "NaN"}"#,
            r#"{"limit": "99999999999999999999999"}"#,
            r#"{"ratio": "0.30000000000000000001"}"#,
            r#"{"ratio": "12345678901234567890123"}"#,
            r#"{"ratio": "1e3"}"#,
            r#"{"name": 1e2}"#,
            r#"{"name": 2.5}"#,
        ] {
            assert_never_fires(schema(), args, K, Status::Invalid);
        }
    }

    #[test]
    fn never_fires_on_verbatim_fields() {
        assert_never_fires(schema(), r#"{"pattern": "42"}"#, K, Status::Invalid);
    }
}
