//! The compiled tool set: one validator per tool, built once.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

use super::hints::{ToolHints, field_semantic};
use super::spec::{ToolFormat, read_spec};
use crate::Error;
use crate::repair::rules::enum_case_fixed::{self, FoldedEnum};

/// One tool: its name, its schema, the compiled validator and its hints.
pub struct Tool {
    name: Arc<str>,
    description: Option<String>,
    schema: Option<Value>,
    validator: Option<Validator>,
    /// Why the schema was refused (it does not compile, or it is over the evaluation budget):
    /// then calls of the tool are never valid.
    refused: Option<Arc<str>>,
    format: ToolFormat,
    hints: ToolHints,
    has_path_fields: bool,
    /// The most patterns one key of a call is matched against (see [`super::cost::Widths`]);
    /// each call is charged its keys times this before validation.
    key_matches: u64,
    /// Every wide `enum` of the schema, indexed by folded spelling for `enum_case_fixed`, by
    /// the address of its members (stable: the schema is never changed once built).
    folded_enums: HashMap<usize, FoldedEnum>,
    /// Every `pattern` of the schema, compiled once for the `anchor_stripped` rule.
    patterns: HashMap<String, regex::Regex>,
    /// The model was shown this tool's schema flattened (`prepare`), so dotted keys are
    /// re-nested before validation.
    flattened: bool,
    /// What was read differently from what the schema says (see [`Self::schema_notes`]).
    schema_notes: Vec<String>,
    /// The expected shape retry messages draw (it depends on the schema alone), drawn for
    /// the tool's first rejected call and kept.
    expected_shape: std::sync::OnceLock<String>,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("compiled", &self.validator.is_some())
            .field("hints", &self.hints)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// The tool's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's name, shared.
    #[must_use]
    pub fn shared_name(&self) -> Arc<str> {
        Arc::clone(&self.name)
    }

    /// The tool's description, if it has one.
    #[must_use]
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The parameters schema as given; `None` when the tool declares none.
    #[must_use]
    pub fn schema(&self) -> Option<&Value> {
        self.schema.as_ref()
    }

    /// Where the expected shape of the tool's retry messages is kept once drawn.
    pub(crate) fn expected_shape(&self) -> &std::sync::OnceLock<String> {
        &self.expected_shape
    }

    /// The wire form the tool was declared in.
    #[must_use]
    pub fn format(&self) -> ToolFormat {
        self.format
    }

    /// The tool-level hints.
    #[must_use]
    pub fn hints(&self) -> &ToolHints {
        &self.hints
    }

    /// What toolmend read differently from what the tool's schema says, one sentence each:
    /// today a `type` spelt as a Python type (`"float"`, `"int"`, `"str"`, `"bool"`, `"dict"`,
    /// `"list"`) is read as the JSON Schema type it names. Empty for a schema taken as written.
    #[must_use]
    pub fn schema_notes(&self) -> &[String] {
        &self.schema_notes
    }

    /// Whether the tool may change the world. Undeclared counts as mutating: a truncated call of
    /// a tool nobody vouched for is never closed and dispatched.
    #[must_use]
    pub fn is_mutating(&self) -> bool {
        self.hints.mutating != Some(false)
    }

    /// Whether `value` validates against the tool's schema. A tool without a schema accepts
    /// any JSON object; a tool whose schema was refused accepts nothing (fail closed: its calls
    /// are [`crate::Status::Unvalidated`]). Inlined: every call is checked here once (issue #31).
    #[must_use]
    #[inline]
    pub fn is_valid(&self, value: &Value) -> bool {
        match &self.validator {
            Some(validator) => validator.is_valid(value),
            None => self.refused.is_none() && value.is_object(),
        }
    }

    /// Why the tool's schema was refused, if it was: it does not compile, or it could cost more
    /// than [`crate::limits::MAX_SCHEMA_EVALUATIONS`] evaluations at one location. Calls of
    /// such a tool are never valid.
    #[must_use]
    pub fn refusal(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// The key-against-pattern matches validating `value` would cost, when that is over
    /// `budget` ([`crate::Limits::max_call_key_matches`]): the keys of every object of `value`
    /// times the most patterns one key of this tool's schema is matched against. `None`
    /// (within the budget) for a tool whose schema matches keys against no pattern, without
    /// looking at `value`.
    ///
    /// Inlined: nearly every schema matches keys against no pattern, and then this is one test
    /// (issue #31); the count is [`Self::count_over_key_budget`].
    #[inline]
    pub(crate) fn over_key_budget(&self, value: &Value, budget: u64) -> Option<CallCost> {
        if self.key_matches == 0 {
            return None;
        }
        self.count_over_key_budget(value, budget)
    }

    /// [`Self::over_key_budget`] for a schema that matches keys against patterns: the keys of
    /// `value` counted, up to just past the budget.
    fn count_over_key_budget(&self, value: &Value, budget: u64) -> Option<CallCost> {
        // Counting stops once over the budget: the count is only ever compared with it.
        let most_keys = budget / self.key_matches;
        let mut keys: u64 = 0;
        let mut stack = vec![value];
        while let Some(node) = stack.pop() {
            match node {
                Value::Object(map) => {
                    keys = keys.saturating_add(map.len() as u64);
                    if keys > most_keys {
                        break;
                    }
                    stack.extend(map.values().filter(|v| is_container(v)));
                }
                Value::Array(items) => stack.extend(items.iter().filter(|v| is_container(v))),
                _ => {}
            }
        }
        (keys > most_keys).then_some(CallCost {
            keys,
            patterns: self.key_matches,
            budget,
        })
    }

    /// Whether the model was shown this tool's schema flattened (see [`ToolSet::mark_prepared`]).
    #[must_use]
    pub fn is_flattened(&self) -> bool {
        self.flattened
    }

    /// The schema's `pattern` compiled by the linear-time engine, if it compiles.
    pub(crate) fn pattern(&self, pattern: &str) -> Option<&regex::Regex> {
        self.patterns.get(pattern)
    }

    /// Every `pattern` and `patternProperties` key of the schema that the linear-time engine
    /// compiles (at most `MAX_PATTERNS`), compiled once.
    pub(crate) fn patterns(&self) -> &HashMap<String, regex::Regex> {
        &self.patterns
    }

    /// The index of an `enum` of this tool's schema with at least
    /// [`enum_case_fixed::INDEXED_ENUM_MEMBERS`] members, by its members.
    pub(crate) fn folded_enum(&self, members: &[Value]) -> Option<&FoldedEnum> {
        self.folded_enums.get(&(members.as_ptr() as usize))
    }

    /// Whether some field of the schema is tagged as a path (`md_link_unwrapped` applies).
    pub(crate) fn has_path_fields(&self) -> bool {
        self.has_path_fields
    }

    pub(crate) fn validator(&self) -> Option<&Validator> {
        self.validator.as_ref()
    }

    /// Whether a rule may change a value that validates: a path-tagged field (Markdown link
    /// unwrap) or a relational group. Untagged tools take the pure fast path.
    pub(crate) fn has_opt_in_rules(&self) -> bool {
        self.has_path_fields || self.flattened || self.hints.has_opt_in_rules()
    }
}

/// A call refused before validation: its keys times the patterns each is matched against is
/// over [`crate::Limits::max_call_key_matches`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallCost {
    /// Keys counted in the call (counting stops once the budget is passed: at least this many).
    pub(crate) keys: u64,
    /// Patterns one key can be matched against in the tool's schema.
    pub(crate) patterns: u64,
    /// The budget it is over ([`crate::Limits::max_call_key_matches`]).
    pub(crate) budget: u64,
}

fn is_container(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Array(_))
}

/// Up to this many tools, [`ToolSet::get`] scans instead of hashing.
const LINEAR_LOOKUP_MAX: usize = 16;

/// The compiled set of tools a turn may call.
///
/// Build it once per tool list and reuse it: compiling the schemas is the expensive part.
/// A tool whose schema is refused (it does not compile, or it is over the evaluation budget)
/// is kept, its error is listed in [`ToolSet::rejected`], and its calls are
/// [`crate::Status::Unvalidated`], never valid; the rest of the set works as usual.
#[derive(Debug, Default)]
pub struct ToolSet {
    tools: Vec<Tool>,
    index: HashMap<String, usize>,
    rejected: Vec<Error>,
}

impl ToolSet {
    /// An empty set.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a set from tool objects in any of the four forms (OpenAI, flat, Anthropic, MCP),
    /// or from a whole MCP `tools/list` result `{"tools": [...]}`.
    ///
    /// Objects of no known form, duplicate names and schemas that do not compile are listed in
    /// [`ToolSet::rejected`]; they never stop the rest of the set from being built.
    ///
    /// # Examples
    ///
    /// ```
    /// let tools = serde_json::json!([{"name": "read", "parameters": {"type": "object"}}]);
    /// let set = toolmend::ToolSet::from_json(&tools);
    /// assert!(set.get("read").is_some() && set.rejected().is_empty());
    /// ```
    #[must_use]
    pub fn from_json(tools: &Value) -> Self {
        let mut set = Self::new();
        if let Some(items) = super::mcp::tool_list(tools) {
            for (index, tool) in items.iter().enumerate() {
                set.push(index, tool);
            }
            return set;
        }
        match tools {
            Value::Array(items) => {
                for (index, tool) in items.iter().enumerate() {
                    set.push(index, tool);
                }
            }
            other => set.push(0, other),
        }
        set
    }

    /// Adds one tool object; `index` names it in errors.
    fn push(&mut self, index: usize, tool: &Value) {
        match read_spec(index, tool) {
            Ok(spec) => {
                if self.index.contains_key(spec.name) {
                    self.rejected.push(Error::DuplicateTool {
                        tool: spec.name.to_owned(),
                    });
                    return;
                }
                let (tool, error) = Tool::compile(spec);
                self.rejected.extend(error);
                self.index.insert(tool.name.to_string(), self.tools.len());
                self.tools.push(tool);
            }
            Err(error) => self.rejected.push(error),
        }
    }

    /// The tool of that exact name.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Tool> {
        // A request carries a handful of tools: comparing names beats hashing one.
        if self.tools.len() <= LINEAR_LOOKUP_MAX {
            return self.tools.iter().find(|t| &*t.name == name);
        }
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// Every tool, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter()
    }

    /// How many tools the set holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the set holds no tool.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// What could not be built as declared.
    #[must_use]
    pub fn rejected(&self) -> &[Error] {
        &self.rejected
    }

    /// Marks a tool as mutating or not, overriding its hints. Returns false for an unknown name.
    pub fn set_mutating(&mut self, name: &str, mutating: bool) -> bool {
        self.tool_mut(name)
            .map(|t| t.hints.mutating = Some(mutating))
            .is_some()
    }

    /// Marks a tool as exempt from storm detection. Returns false for an unknown name.
    pub fn set_storm_exempt(&mut self, name: &str, exempt: bool) -> bool {
        self.tool_mut(name)
            .map(|t| t.hints.storm_exempt = exempt)
            .is_some()
    }

    /// Records that the tools were sent to the model through [`crate::prepare_tools`] with
    /// `options`: the tools it flattened get their dotted keys re-nested before validation,
    /// even when the dotted arguments would validate as they are (an open schema).
    pub fn mark_prepared(&mut self, options: &super::PrepareOptions) {
        for tool in &mut self.tools {
            tool.flattened = tool
                .schema
                .as_ref()
                .is_some_and(|schema| options.flattens(schema));
        }
    }

    fn tool_mut(&mut self, name: &str) -> Option<&mut Tool> {
        self.index.get(name).map(|&i| &mut self.tools[i])
    }
}

impl Tool {
    fn compile(spec: super::spec::ToolSpec<'_>) -> (Self, Option<Error>) {
        let (schema, schema_notes) =
            match spec.schema.map(|s| (s, super::type_aliases::normalized(s))) {
                Some((_, Some((fixed, notes)))) => (Some(fixed), notes),
                Some((schema, None)) => (Some(schema.clone()), Vec::new()),
                None => (None, Vec::new()),
            };
        for note in &schema_notes {
            tracing::info!(target: "tool_schema", tool = %crate::feedback::escape_name(spec.name), note = %note);
        }
        let (validator, key_matches, refused, error) = match &schema {
            None => (None, 0, None, None),
            Some(schema) => match compile_schema(schema) {
                Ok((validator, widths)) => (Some(validator), widths.key_matches, None, None),
                Err(reason) => (
                    None,
                    0,
                    Some(Arc::from(reason.as_str())),
                    Some(Error::Schema {
                        tool: crate::feedback::escape_name(spec.name).into_owned(),
                        reason,
                    }),
                ),
            },
        };
        let mut hints = schema.as_ref().map(ToolHints::read).unwrap_or_default();
        super::mcp::apply_annotations(&mut hints, spec.annotations);
        let has_path_fields = schema.as_ref().is_some_and(has_path_field);
        let patterns = schema.as_ref().map(compile_patterns).unwrap_or_default();
        let folded_enums = schema.as_ref().map(index_enums).unwrap_or_default();
        let tool = Self {
            name: Arc::from(spec.name),
            description: spec.description.map(str::to_owned),
            schema,
            validator,
            refused,
            format: spec.format,
            hints,
            has_path_fields,
            key_matches,
            folded_enums,
            patterns,
            flattened: false,
            schema_notes,
            expected_shape: std::sync::OnceLock::new(),
        };
        (tool, error)
    }
}

/// Compiles a schema, since schemas come from clients: first its cost is bounded
/// ([`super::cost::check`]), then it is compiled offline (no `$ref` is ever fetched) with the
/// linear-time `regex` engine for `pattern`. A schema whose patterns that engine cannot compile
/// (lookaround, backreferences: valid JSON Schema, common in real tools) is compiled again with
/// the backtracking engine under [`crate::limits::PATTERN_BACKTRACK_LIMIT`], so no match can
/// run for ever.
fn compile_schema(schema: &Value) -> Result<(Validator, super::cost::Widths), String> {
    let widths = super::cost::check(schema)?;
    let linear = jsonschema::options()
        .offline()
        .with_pattern_options(PatternOptions::regex().size_limit(REGEX_SIZE_LIMIT))
        .build(schema);
    match linear {
        Ok(validator) => Ok((validator, widths)),
        Err(_) => jsonschema::options()
            .offline()
            .with_pattern_options(
                PatternOptions::fancy_regex()
                    .backtrack_limit(crate::limits::PATTERN_BACKTRACK_LIMIT)
                    .size_limit(REGEX_SIZE_LIMIT),
            )
            .build(schema)
            .map(|validator| (validator, widths))
            .map_err(|e| e.masked().to_string()),
    }
}

/// Most patterns compiled per tool; a schema with more gets the rest compiled on demand.
const MAX_PATTERNS: usize = 256;
/// Bound on the compiled size of one schema pattern.
pub(crate) const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Every string `pattern` keyword and `patternProperties` key in the schema, compiled; those that do not compile are left
/// out (the validator reports them).
fn compile_patterns(schema: &Value) -> HashMap<String, regex::Regex> {
    let mut patterns = HashMap::new();
    visit_objects(schema, |_, map| {
        let keyword = match map.get("pattern") {
            Some(Value::String(pattern)) => Some(pattern),
            _ => None,
        };
        // `patternProperties` keys too: repair rules match keys against them.
        let keys = map
            .get("patternProperties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(serde_json::Map::keys);
        for pattern in keyword.into_iter().chain(keys) {
            if patterns.len() >= MAX_PATTERNS {
                break;
            }
            if !patterns.contains_key(pattern)
                && let Ok(regex) = regex::RegexBuilder::new(pattern)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
            {
                patterns.insert(pattern.clone(), regex);
            }
        }
        patterns.len() < MAX_PATTERNS
    });
    patterns
}

/// Every `enum` of the schema with at least [`enum_case_fixed::INDEXED_ENUM_MEMBERS`]
/// members, indexed by the address of its members (the schema's heap nodes stay where they are
/// when the schema value itself moves into its [`Tool`]).
fn index_enums(schema: &Value) -> HashMap<usize, FoldedEnum> {
    let mut indexes = HashMap::new();
    visit_objects(schema, |_, map| {
        if let Some(Value::Array(members)) = map.get("enum")
            && members.len() >= enum_case_fixed::INDEXED_ENUM_MEMBERS
        {
            indexes.insert(members.as_ptr() as usize, enum_case_fixed::index(members));
        }
        true
    });
    indexes
}

/// Whether any field anywhere in the schema is tagged path-shaped.
fn has_path_field(schema: &Value) -> bool {
    let mut found = false;
    visit_objects(schema, |node, _| {
        found = field_semantic(node).is_some_and(|s| s.is_path());
        !found
    });
    found
}

/// Calls `visit` with every object of `schema` (and its map) down to [`MAX_DEPTH`] levels, until
/// it returns `false`. Every object, data included: the readers above look for keywords
/// wherever a schema may hold them, and what they find is checked where it is used.
///
/// [`MAX_DEPTH`]: crate::limits::MAX_DEPTH
fn visit_objects<'a>(
    schema: &'a Value,
    mut visit: impl FnMut(&'a Value, &'a serde_json::Map<String, Value>) -> bool,
) {
    let mut stack = vec![(schema, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > crate::limits::MAX_DEPTH {
            continue;
        }
        match node {
            Value::Object(map) => {
                if !visit(node, map) {
                    return;
                }
                stack.extend(map.values().map(|v| (v, depth + 1)));
            }
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_bad_schema_is_a_typed_error_and_the_rest_still_works() {
        let tools = json!([
            {"name": "bad", "parameters": {"type": "object", "properties": {"x": {"pattern": "("}}}},
            {"name": "good", "parameters": {"type": "object", "required": ["x"]}}
        ]);
        let set = ToolSet::from_json(&tools);
        assert!(matches!(&set.rejected()[0], Error::Schema { tool, .. } if tool == "bad"));
        assert!(set.get("good").unwrap().is_valid(&json!({"x": 1})));
        assert!(!set.get("good").unwrap().is_valid(&json!({})));
        // The refused tool accepts nothing: its calls are unvalidated, never valid.
        assert!(!set.get("bad").unwrap().is_valid(&json!({"x": 1})));
        assert!(set.get("bad").unwrap().refusal().is_some());
        assert!(set.get("good").unwrap().refusal().is_none());
    }

    #[test]
    fn duplicates_keep_the_first() {
        let tools =
            json!([{"name": "a", "description": "one"}, {"name": "a", "description": "two"}]);
        let set = ToolSet::from_json(&tools);
        assert_eq!(set.len(), 1);
        assert_eq!(set.get("a").unwrap().description(), Some("one"));
        assert!(matches!(&set.rejected()[0], Error::DuplicateTool { .. }));
    }

    #[test]
    fn remote_refs_are_never_fetched() {
        let tools = json!([{"name": "r", "parameters": {"$ref": "https://example.com/s.json"}}]);
        assert!(matches!(
            &ToolSet::from_json(&tools).rejected()[0],
            Error::Schema { .. }
        ));
    }

    #[test]
    fn undeclared_tools_count_as_mutating() {
        let mut set = ToolSet::from_json(&json!([{"name": "a"}]));
        assert!(set.get("a").unwrap().is_mutating());
        assert!(set.set_mutating("a", false));
        assert!(!set.get("a").unwrap().is_mutating());
        assert!(!set.set_mutating("nope", false));
    }

    #[test]
    fn path_tagged_fields_are_found_at_any_depth() {
        let schema = json!({"type": "object", "properties": {"edits": {"type": "array", "items": {
            "type": "object", "properties": {"path": {"type": "string", "x-toolmend": {"semantic": "path"}}}}}}});
        assert!(has_path_field(&schema));
        assert!(!has_path_field(
            &json!({"type": "object", "properties": {"path": {"type": "string"}}})
        ));
    }
}
