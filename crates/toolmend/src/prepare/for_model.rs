//! `prepare`: the tools array rewritten for one model (DESIGN §7).
//!
//! What a model is shown need not be what its calls are validated against. Calls are always
//! validated against the tools as declared (the [`crate::ToolSet`]); this rewrites only the copy
//! sent upstream: anchor-free patterns for models that copy anchors, flat dot-notation keys for
//! deep or wide schemas, contract sentences in the description, and none of toolmend's own
//! annotations. Each step can be switched off in [`PrepareOptions`].

use serde_json::Value;

use super::anchors::{DEFAULT_ANCHOR_MODELS, model_matches, strip_schema_anchors};
use super::contract::{DEFAULT_MAX_HINT_BYTES, describe, schema_hints};
use super::flatten::{FlattenThresholds, flatten_schema};
use super::hints::ToolHints;
use super::spec::{ToolFormat, read_spec};
use super::strip::strip_hints;
use crate::Error;

/// What [`prepare_tools`] does; every step is on by default.
///
/// Built with `PrepareOptions::default()` and then adjusted field by field.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrepareOptions {
    /// Remove `x-toolmend`, `dirge-hints` and `x-dirge-kind` from every subschema.
    pub strip_hints: bool,
    /// Remove leading `^` / trailing `$` from every `pattern`, for the models of
    /// [`PrepareOptions::anchor_models`].
    pub strip_anchors: bool,
    /// Model-id substrings (case-insensitive) whose models get anchor-free patterns; by default
    /// `kimi-k2`, `minimax` and `glm`.
    pub anchor_models: Vec<String>,
    /// Present deep or wide schemas as one level of dotted keys.
    pub flatten: bool,
    /// Flatten a schema with more leaf parameters than this (default 10).
    pub flatten_leaves_over: usize,
    /// Flatten a schema with a leaf deeper than this many levels (default 2).
    pub flatten_depth_over: usize,
    /// Append the tool's `contract` hint and hints generated from the schema to the description.
    pub contract_hints: bool,
    /// Most bytes the contract hints may add to one description (default 400).
    pub max_hint_bytes: usize,
}

impl Default for PrepareOptions {
    fn default() -> Self {
        let thresholds = FlattenThresholds::default();
        Self {
            strip_hints: true,
            strip_anchors: true,
            anchor_models: DEFAULT_ANCHOR_MODELS
                .iter()
                .map(|&m| m.to_owned())
                .collect(),
            flatten: true,
            flatten_leaves_over: thresholds.leaves_over,
            flatten_depth_over: thresholds.depth_over,
            contract_hints: true,
            max_hint_bytes: DEFAULT_MAX_HINT_BYTES,
        }
    }
}

impl PrepareOptions {
    /// Whether [`prepare_tools`] with these options shows `schema` (a tool's parameters) flat.
    ///
    /// A harness that prepared its tools with these options re-nests dotted keys of such a tool
    /// *before* validating: when the declared schema is open (no `required`, extra keys allowed),
    /// flat arguments validate as they are and would otherwise reach the tool with dotted keys.
    #[must_use]
    pub fn flattens(&self, schema: &Value) -> bool {
        self.flatten && flatten_schema(schema, self.thresholds()).is_some()
    }

    fn thresholds(&self) -> FlattenThresholds {
        FlattenThresholds {
            leaves_over: self.flatten_leaves_over,
            depth_over: self.flatten_depth_over,
        }
    }
}

/// Rewrites a tools array for the model `model`, in the shape it came in.
///
/// `tools` is an array of tool objects (or one tool object) in the OpenAI
/// (`{"type": "function", "function": {…}}`), flat (`{"name", "parameters"}`) or Anthropic
/// (`{"name", "input_schema"}`) form; each comes back in its own form with every field toolmend
/// does not rewrite kept as it was. Only `description` and the parameters schema change.
///
/// Calls the model makes against a flattened schema carry dotted keys (`"user.profile.name"`);
/// the `unflattened` repair re-nests them against the original schema, so keep validating with a
/// [`crate::ToolSet`] built from the *original* tools.
///
/// # Errors
///
/// [`Error::ToolSpec`] when an element is not a tool object of a known form: the output is sent
/// to a provider, which would reject it anyway.
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use toolmend::{PrepareOptions, prepare_tools};
///
/// let tools = json!([{"name": "grep", "parameters": {"type": "object", "properties": {
///     "pattern": {"type": "string", "pattern": "^\\S+$"},
///     "paths": {"type": "array", "items": {"type": "string"}, "x-toolmend": {"semantic": "path"}}
/// }}}]);
/// let sent = prepare_tools(&tools, "kimi-k2-instruct", &PrepareOptions::default()).unwrap();
/// let schema = &sent[0]["parameters"];
/// assert_eq!(schema["properties"]["pattern"]["pattern"], "\\S+");
/// assert!(schema["properties"]["paths"].get("x-toolmend").is_none());
/// assert_eq!(sent[0]["description"], "`paths` is a JSON array of strings, not a string.");
/// ```
pub fn prepare_tools(tools: &Value, model: &str, options: &PrepareOptions) -> Result<Value, Error> {
    match tools {
        Value::Array(items) => {
            // Sized once: collecting `Result`s gives no size hint, and a vector grown by
            // doubling copied 16 384 tools' worth for 10 000 (`growth_ratio prepare`).
            let mut prepared = Vec::with_capacity(items.len());
            for (index, tool) in items.iter().enumerate() {
                prepared.push(prepare_tool(index, tool, model, options)?);
            }
            Ok(Value::Array(prepared))
        }
        tool => prepare_tool(0, tool, model, options),
    }
}

/// Rewrites one tool object.
fn prepare_tool(
    index: usize,
    tool: &Value,
    model: &str,
    options: &PrepareOptions,
) -> Result<Value, Error> {
    let spec = read_spec(index, tool)?;
    let schema = spec
        .schema
        .map(|schema| present_schema(schema, model, options));
    let description = if options.contract_hints {
        let contract = spec.schema.map(ToolHints::read).and_then(|h| h.contract);
        let generated = schema.as_ref().map(schema_hints).unwrap_or_default();
        describe(
            spec.description,
            contract.as_deref(),
            &generated,
            options.max_hint_bytes,
        )
    } else {
        None
    };
    let schema_key = spec.format.schema_key();
    let schema = schema.filter(|s| Some(s) != spec.schema);
    let in_function = spec.format == ToolFormat::OpenAi;

    // A new schema replaces the old one in place (same key order): the copy leaves the old one
    // out, since it is often the bulk of the tool and a copy of it was dropped at once.
    let mut out = match schema {
        Some(_) => clone_without_schema(tool, in_function, schema_key),
        None => tool.clone(),
    };
    let body = if in_function {
        &mut out["function"]
    } else {
        &mut out
    };
    let Value::Object(body) = body else {
        return Ok(out);
    };
    if let Some(schema) = schema {
        body.insert(schema_key.to_owned(), schema);
    }
    if let Some(description) = description {
        body.insert("description".to_owned(), Value::String(description));
    }
    Ok(out)
}

/// `tool` copied with `null` for its schema (`key`, inside `function` when `in_function`), which
/// the caller replaces.
fn clone_without_schema(tool: &Value, in_function: bool, key: &str) -> Value {
    let Value::Object(map) = tool else {
        return tool.clone();
    };
    let copy = map
        .iter()
        .map(|(k, v)| {
            let v = match k.as_str() {
                "function" if in_function => clone_without_schema(v, false, key),
                k if !in_function && k == key => Value::Null,
                _ => v.clone(),
            };
            (k.clone(), v)
        })
        .collect();
    Value::Object(copy)
}

/// The schema as the model is to see it: flattened, then without hints, then without anchors.
fn present_schema(schema: &Value, model: &str, options: &PrepareOptions) -> Value {
    // Flatten first: it reads the original structure (hints are allowed on the objects it lifts).
    let flat = options
        .flatten
        .then(|| flatten_schema(schema, options.thresholds()))
        .flatten();
    let mut schema = match flat {
        Some(flat) => flat,
        None => schema.clone(),
    };
    if options.strip_hints {
        strip_hints(&mut schema);
    }
    if options.strip_anchors && model_matches(model, &options.anchor_models) {
        strip_schema_anchors(&mut schema);
    }
    schema
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "path": {"type": "string", "pattern": "^/.*$", "x-toolmend": {"semantic": "path"}}},
            "x-toolmend": {"contract": "path is absolute."}})
    }

    #[test]
    fn each_form_keeps_its_shape_and_unknown_fields() {
        let tools = json!([
            {"type": "function", "function": {"name": "a", "parameters": schema(), "strict": false},
             "extra": 1},
            {"name": "b", "description": "B", "parameters": schema(), "vendor": {"k": 2}},
            {"name": "c", "input_schema": schema(), "cache_control": {"type": "ephemeral"}}
        ]);
        let out = prepare_tools(&tools, "glm-4.6", &PrepareOptions::default()).unwrap();
        let clean =
            json!({"type": "object", "properties": {"path": {"type": "string", "pattern": "/.*"}}});
        assert_eq!(
            out[0],
            json!({"type": "function", "function": {"name": "a",
            "parameters": clean, "strict": false, "description": "path is absolute."}, "extra": 1})
        );
        assert_eq!(
            out[1],
            json!({"name": "b", "description": "B\n\npath is absolute.",
            "parameters": clean, "vendor": {"k": 2}})
        );
        assert_eq!(
            out[2],
            json!({"name": "c", "input_schema": clean,
            "cache_control": {"type": "ephemeral"}, "description": "path is absolute."})
        );
    }

    #[test]
    fn a_rewritten_schema_keeps_its_place_among_the_keys() {
        let tools = json!([
            {"function": {"parameters": schema(), "name": "a", "strict": false},
             "type": "function", "parameters": schema()},
            {"input_schema": schema(), "name": "c"}
        ]);
        let out = prepare_tools(&tools, "glm-4.6", &PrepareOptions::default()).unwrap();
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&out[0]), ["function", "type", "parameters"]);
        assert_eq!(
            keys(&out[0]["function"]),
            ["parameters", "name", "strict", "description"]
        );
        // Outside `function`, a key of the same name is another field: copied as sent.
        assert_eq!(out[0]["parameters"], schema());
        assert_eq!(keys(&out[1]), ["input_schema", "name", "description"]);
        assert_eq!(out[1]["input_schema"], out[0]["function"]["parameters"]);
    }

    #[test]
    fn says_which_schemas_it_flattens() {
        let deep = json!({"type": "object", "properties": {"a": {"type": "object", "properties": {
            "b": {"type": "object", "properties": {"c": {"type": "string"}}}}}}});
        let options = PrepareOptions::default();
        assert!(options.flattens(&deep));
        assert!(!options.flattens(&schema()));
        assert!(
            !PrepareOptions {
                flatten: false,
                ..options
            }
            .flattens(&deep)
        );
    }

    #[test]
    fn a_single_tool_object_comes_back_as_one() {
        let out = prepare_tools(
            &json!({"name": "now"}),
            "gpt-4o",
            &PrepareOptions::default(),
        );
        assert_eq!(out.unwrap(), json!({"name": "now"}));
    }

    #[test]
    fn every_step_can_be_switched_off() {
        let tools = json!([{"name": "t", "parameters": schema()}]);
        let options = PrepareOptions {
            strip_hints: false,
            strip_anchors: false,
            contract_hints: false,
            flatten: false,
            ..PrepareOptions::default()
        };
        assert_eq!(prepare_tools(&tools, "glm-4", &options).unwrap(), tools);
    }

    #[test]
    fn anchors_stay_for_other_models() {
        let tools = json!([{"name": "t", "parameters": schema()}]);
        let out = prepare_tools(&tools, "gpt-4o", &PrepareOptions::default()).unwrap();
        assert_eq!(
            out[0]["parameters"]["properties"]["path"]["pattern"],
            "^/.*$"
        );
        let options = PrepareOptions {
            anchor_models: vec!["GPT".into()],
            ..PrepareOptions::default()
        };
        let out = prepare_tools(&tools, "gpt-4o", &options).unwrap();
        assert_eq!(out[0]["parameters"]["properties"]["path"]["pattern"], "/.*");
    }

    #[test]
    fn a_non_tool_element_is_a_typed_error() {
        let tools = json!([{"name": "ok"}, 7]);
        let error = prepare_tools(&tools, "m", &PrepareOptions::default()).unwrap_err();
        assert!(matches!(error, Error::ToolSpec { index: 1, .. }), "{error}");
    }
}
