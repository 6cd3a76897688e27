//! A document cut right after its opening bracket: the empty container it opened.

use serde_json::Value;

use super::Document;
use crate::RepairKind;
use crate::salvage::SyntaxRepair;

/// A document cut right after its opening bracket (`[`, `{`, `{"`, `["`, `[-`): the empty
/// container, closed (a string or number cut before its first character or digit kept
/// nothing, as a key cut there).
/// Call salvage refuses this (a call that kept nothing is no call); a document that kept
/// nothing is still the container it opened.
pub(in crate::salvage) fn bare_opener(text: &str, start: usize) -> Option<Document> {
    let value = match text[start..].trim_end() {
        "[" | "[\"" | "[-" => Value::Array(Vec::new()),
        "{" | "{\"" => Value::Object(serde_json::Map::new()),
        _ => return None,
    };
    Some(Document {
        values: vec![value],
        repairs: vec![SyntaxRepair {
            kind: RepairKind::TruncationClosed,
            offset: text.len(),
        }],
        truncated: true,
    })
}
