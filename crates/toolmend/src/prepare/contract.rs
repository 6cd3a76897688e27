//! Contract hints: a few sentences appended to a tool's description.
//!
//! The schema already says `"type": "array"`, yet the commonest broken call is a JSON array sent
//! as a string. A plain sentence in the description ("`paths` is a JSON array of strings, not a
//! string") is the cheapest fix there is, so `prepare` appends the tool author's `contract` hint
//! and a sentence for each top-level field whose type models get wrong: arrays, objects, and
//! small string enums. Nothing is generated for scalars (their type is rarely missed) and the
//! whole addition is bounded in bytes.

use serde_json::Value;

/// Default for the byte budget of the hints added to one description.
pub const DEFAULT_MAX_HINT_BYTES: usize = 400;

/// Most members a string enum may have and still get a hint.
const MAX_ENUM_MEMBERS: usize = 8;
/// Longest enum member, in bytes, that still gets a hint.
const MAX_ENUM_MEMBER_BYTES: usize = 40;

/// One sentence per top-level property whose type models commonly get wrong, in schema order.
pub(crate) fn schema_hints(schema: &Value) -> Vec<String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter_map(|(name, field)| field_hint(name, field))
        .collect()
}

/// The hint for one field, if its type is one models get wrong.
fn field_hint(name: &str, field: &Value) -> Option<String> {
    let types = declared_types(field);
    let only = |wanted: &str| {
        types.contains(&wanted)
            && !types.contains(&"string")
            && types.iter().all(|t| *t == wanted || *t == "null")
    };
    if only("array") {
        let what = match field.get("items").map(declared_types).as_deref() {
            Some([item]) => plural(item).map(|p| format!(" of {p}")),
            _ => None,
        };
        return Some(format!(
            "`{name}` is a JSON array{}, not a string.",
            what.unwrap_or_default()
        ));
    }
    if only("object") {
        return Some(format!("`{name}` is a JSON object, not a string."));
    }
    let members = field.get("enum")?.as_array()?;
    let members: Vec<&str> = members.iter().map(Value::as_str).collect::<Option<_>>()?;
    let small = (2..=MAX_ENUM_MEMBERS).contains(&members.len())
        && members.iter().all(|m| m.len() <= MAX_ENUM_MEMBER_BYTES);
    if !small {
        return None;
    }
    let quoted: Vec<String> = members
        .iter()
        .map(|m| Value::from(*m).to_string())
        .collect();
    Some(format!("`{name}` is exactly one of {}.", quoted.join(", ")))
}

/// The `type` keyword as a list (empty when absent or malformed).
fn declared_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn plural(item_type: &str) -> Option<&'static str> {
    Some(match item_type {
        "string" => "strings",
        "integer" => "integers",
        "number" => "numbers",
        "boolean" => "booleans",
        "object" => "objects",
        "array" => "arrays",
        _ => return None,
    })
}

/// The description with the hints appended, or `None` when there is nothing to add.
///
/// The author's `contract` comes first and is cut (at a character boundary, with `…`) if it
/// alone exceeds `max_bytes`; generated hints follow, each only if it fits whole in what is left.
/// A hint the description already contains is not repeated, so preparing twice adds nothing.
pub(crate) fn describe(
    description: Option<&str>,
    contract: Option<&str>,
    generated: &[String],
    max_bytes: usize,
) -> Option<String> {
    let existing = description.unwrap_or("");
    let mut added: Vec<String> = Vec::new();
    let mut used = 0;
    if let Some(contract) = contract
        .map(str::trim)
        .filter(|c| !c.is_empty() && !existing.contains(*c))
    {
        let contract = cut(contract, max_bytes);
        used += contract.len();
        added.push(contract);
    }
    for hint in generated {
        let cost = hint.len() + usize::from(!added.is_empty());
        if existing.contains(hint.as_str()) || used + cost > max_bytes {
            continue;
        }
        used += cost;
        added.push(hint.clone());
    }
    if added.is_empty() {
        return None;
    }
    let hints = added.join(" ");
    Some(match existing.trim_end() {
        "" => hints,
        text => format!("{text}\n\n{hints}"),
    })
}

/// `text` within `max_bytes`, cut at a character boundary and marked with `…`.
fn cut(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let ellipsis = '…';
    let Some(room) = max_bytes.checked_sub(ellipsis.len_utf8()) else {
        return String::new();
    };
    let end = (0..=room)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}{ellipsis}", &text[..end])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn hints_arrays_objects_and_small_enums() {
        let schema = json!({"properties": {
            "paths": {"type": "array", "items": {"type": "string"}},
            "edits": {"type": ["array", "null"], "items": {"type": "object"}},
            "any": {"type": "array"},
            "opts": {"type": "object"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "limit": {"type": "integer"},
            "either": {"type": ["array", "string"]},
            "huge": {"enum": ["a", "b", "c", "d", "e", "f", "g", "h", "i"]},
            "mixed": {"enum": ["a", 1]}
        }});
        assert_eq!(
            schema_hints(&schema),
            [
                "`paths` is a JSON array of strings, not a string.",
                "`edits` is a JSON array of objects, not a string.",
                "`any` is a JSON array, not a string.",
                "`opts` is a JSON object, not a string.",
                "`mode` is exactly one of \"fast\", \"slow\".",
            ]
        );
    }

    #[test]
    fn appends_the_contract_first_then_the_hints() {
        let hints = ["`paths` is a JSON array of strings, not a string.".to_owned()];
        let out = describe(Some("Reads files. "), Some("path is absolute"), &hints, 400).unwrap();
        assert_eq!(
            out,
            "Reads files.\n\npath is absolute `paths` is a JSON array of strings, not a string."
        );
        assert_eq!(describe(None, None, &hints, 400).unwrap(), hints[0]);
    }

    #[test]
    fn adds_nothing_twice() {
        let hints = ["`a` is a JSON object, not a string.".to_owned()];
        let once = describe(Some("D"), Some("C."), &hints, 400).unwrap();
        assert_eq!(describe(Some(&once), Some("C."), &hints, 400), None);
        assert_eq!(describe(Some("D"), None, &[], 400), None);
    }

    #[test]
    fn stays_within_the_byte_budget() {
        let hints: Vec<String> = (0..50)
            .map(|i| format!("`f{i}` is a JSON object, not a string."))
            .collect();
        let out = describe(None, None, &hints, 100).unwrap();
        assert!(out.len() <= 100, "{}", out.len());
        assert_eq!(out.matches("JSON object").count(), 2);
        let long = "é".repeat(300);
        let out = describe(Some("D"), Some(&long), &hints, 101).unwrap();
        let added = out.strip_prefix("D\n\n").unwrap();
        assert!(
            added.len() <= 101 && added.ends_with('…'),
            "{}",
            added.len()
        );
    }
}
