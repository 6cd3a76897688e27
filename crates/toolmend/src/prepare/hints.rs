//! Schema hints: what a tool author declares under `x-toolmend` (DESIGN §6).
//!
//! The `dirge-hints` namespace and the legacy `x-dirge-kind` key of the seed are read too.
//! Hints only ever widen what toolmend may do for a field the author tagged; an untagged schema
//! gets none of the opt-in rules.

use serde_json::{Map, Value};

/// The keys hints live under, in order of precedence.
pub(crate) const HINT_KEYS: [&str; 2] = ["x-toolmend", "dirge-hints"];

/// What a string field holds, as its author tagged it (`"semantic": …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldSemantic {
    /// An absolute filesystem path.
    AbsolutePath,
    /// A path relative to the workspace.
    RelativePath,
    /// A path of either kind.
    Path,
    /// A URL.
    Url,
    /// A glob pattern.
    Glob,
    /// A regular expression: never touched by value rules.
    Regex,
    /// A shell command: never touched by value rules.
    Command,
    /// Free content (file text, a message): never touched by value rules.
    Content,
}

impl FieldSemantic {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "absolute_path" => Self::AbsolutePath,
            "relative_path" => Self::RelativePath,
            "path" => Self::Path,
            "url" => Self::Url,
            "glob" => Self::Glob,
            "regex" => Self::Regex,
            "command" => Self::Command,
            "content" => Self::Content,
            _ => return None,
        })
    }

    /// Whether the field holds a filesystem path (the `md_link_unwrapped` rule applies).
    #[must_use]
    pub const fn is_path(self) -> bool {
        matches!(self, Self::AbsolutePath | Self::RelativePath | Self::Path)
    }

    /// Whether value rules must leave the field's text alone (regex, command, content).
    #[must_use]
    pub const fn is_verbatim(self) -> bool {
        matches!(self, Self::Regex | Self::Command | Self::Content)
    }
}

/// A declared group of fields that go together (`offset` with `limit`).
#[derive(Debug, Clone, PartialEq)]
pub struct RelationalGroup {
    /// The fields of the group.
    pub fields: Vec<String>,
    /// The value each missing field takes when some of the group is present.
    pub defaults: Map<String, Value>,
}

/// The tool-level hints of one tool.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolHints {
    /// `Some(true)`: the tool changes the world (truncated calls are never closed and
    /// dispatched; a call clears read entries from the storm window). `None`: not declared,
    /// treated as mutating where safety asks.
    pub mutating: Option<bool>,
    /// Cheap reads that never count towards a call storm.
    pub storm_exempt: bool,
    /// `Some(true)`: calling the tool again with the same arguments changes nothing more (MCP
    /// `idempotentHint`). The storm breaker then treats a repeated identical call as no write:
    /// it does not clear the reads before it.
    pub idempotent: Option<bool>,
    /// A sentence for the model, appended to the description by `prepare`.
    pub contract: Option<String>,
    /// Declared relational groups.
    pub relational: Vec<RelationalGroup>,
}

/// The hint object of a schema node, if any (`x-toolmend` first, then `dirge-hints`).
pub(crate) fn hint_object(schema: &Value) -> Option<&Map<String, Value>> {
    HINT_KEYS
        .iter()
        .find_map(|key| schema.get(*key).and_then(Value::as_object))
}

/// The semantic tag of a field schema, if its author gave one.
pub(crate) fn field_semantic(schema: &Value) -> Option<FieldSemantic> {
    if let Some(name) = hint_object(schema)
        .and_then(|h| h.get("semantic"))
        .and_then(Value::as_str)
    {
        return FieldSemantic::from_name(name);
    }
    // The seed's legacy single-key annotation.
    match schema.get("x-dirge-kind").and_then(Value::as_str) {
        Some("path") => Some(FieldSemantic::Path),
        _ => None,
    }
}

/// The aliases a field's author declared for it.
pub(crate) fn field_aliases(schema: &Value) -> impl Iterator<Item = &str> {
    hint_object(schema)
        .and_then(|h| h.get("aliases"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

impl ToolHints {
    /// Reads the tool-level hints from a parameters schema.
    pub(crate) fn read(schema: &Value) -> Self {
        let Some(hints) = hint_object(schema) else {
            return Self::default();
        };
        let relational = hints
            .get("relational")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(read_group)
            .collect();
        Self {
            mutating: hints.get("mutating").and_then(Value::as_bool),
            idempotent: hints.get("idempotent").and_then(Value::as_bool),
            storm_exempt: hints
                .get("storm_exempt")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            contract: hints
                .get("contract")
                .and_then(Value::as_str)
                .map(str::to_owned),
            relational,
        }
    }

    /// Whether any hint makes a rule run on calls that validate (DESIGN §3, invariant 2).
    pub(crate) fn has_opt_in_rules(&self) -> bool {
        !self.relational.is_empty()
    }
}

/// One group, in our form `{fields, default}` or the seed's `{requires, defaults}`.
fn read_group(group: &Value) -> Option<RelationalGroup> {
    let fields = group
        .get("fields")
        .or_else(|| group.get("requires"))?
        .as_array()?;
    let defaults = group
        .get("default")
        .or_else(|| group.get("defaults"))?
        .as_object()?;
    let fields: Vec<String> = fields
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    if fields.len() < 2 {
        return None;
    }
    // Null defaults fill nothing (the seed's behaviour): a default must be a real value.
    let defaults = defaults
        .iter()
        .filter(|(k, v)| !v.is_null() && fields.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Some(RelationalGroup { fields, defaults })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_tool_level_hints_in_both_namespaces() {
        for key in HINT_KEYS {
            let schema = json!({"type": "object", key: {
                "mutating": true, "storm_exempt": true, "contract": "c",
                "relational": [{"fields": ["offset", "limit"], "default": {"offset": 0, "limit": 2000}}]
            }});
            let hints = ToolHints::read(&schema);
            assert_eq!(hints.mutating, Some(true));
            assert!(hints.storm_exempt);
            assert_eq!(hints.contract.as_deref(), Some("c"));
            assert_eq!(hints.relational.len(), 1);
            assert_eq!(hints.relational[0].defaults["limit"], json!(2000));
        }
    }

    #[test]
    fn reads_the_seed_relational_form_and_skips_null_defaults() {
        let schema = json!({"dirge-hints": {"relational": [
            {"requires": ["a", "b"], "defaults": {"a": 1, "b": null}}]}});
        let group = &ToolHints::read(&schema).relational[0];
        assert_eq!(group.fields, ["a", "b"]);
        assert_eq!(group.defaults.len(), 1);
    }

    #[test]
    fn field_semantics_and_aliases() {
        let field = json!({"type": "string", "x-toolmend": {"semantic": "absolute_path", "aliases": ["target"]}});
        assert_eq!(field_semantic(&field), Some(FieldSemantic::AbsolutePath));
        assert_eq!(field_aliases(&field).collect::<Vec<_>>(), ["target"]);
        assert_eq!(
            field_semantic(&json!({"x-dirge-kind": "path"})),
            Some(FieldSemantic::Path)
        );
        assert_eq!(field_semantic(&json!({"type": "string"})), None);
        assert_eq!(
            field_semantic(&json!({"x-toolmend": {"semantic": "nonsense"}})),
            None
        );
    }

    #[test]
    fn untagged_schema_has_no_hints() {
        assert_eq!(
            ToolHints::read(&json!({"type": "object"})),
            ToolHints::default()
        );
    }
}
