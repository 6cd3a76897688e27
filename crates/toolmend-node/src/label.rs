//! The serde names of the library's enums (`Status::Repaired` → `"repaired"`), the strings the
//! TypeScript unions list.

/// `value`'s serde name, or `""` for a value that does not serialize as a string.
pub(crate) fn label<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}
