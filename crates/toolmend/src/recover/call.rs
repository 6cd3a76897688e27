//! What a grammar hands back before names are checked and untyped values are converted.

use serde_json::{Map, Value};

use std::ops::Range;

use super::coerce::{coerce, property};
use super::{NameResolver, RecoveredCall};
use crate::{Tool, ToolSet};

/// One call as a grammar read it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawCall {
    /// The name as written (after the grammar's own prefix rules).
    pub name: String,
    /// The arguments.
    pub args: Args,
}

/// Arguments in the form the markup gave them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Args {
    /// JSON object text, passed through as written.
    Json(String),
    /// Key/value pairs, in order (XML-like markups).
    Fields(Vec<(String, Field)>),
}

/// One value of an XML-like markup.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Field {
    /// Raw text whose type the markup does not say: converted with the tool's schema.
    Untyped(String),
    /// A value whose type the markup says (DSML `string=`, Kimi K3 `type=`, Gemma quoting).
    Typed(Value),
    /// Nested elements (MiniMax M3): objects and arrays as the markup says, string leaves raw
    /// text converted with the nested schema (a leaf without one stays a string).
    Nested(Value),
}

impl RawCall {
    /// A call whose arguments are JSON text.
    pub(crate) fn json(name: String, args: String) -> Self {
        Self {
            name,
            args: Args::Json(args),
        }
    }

    /// A call whose arguments are named fields (XML-style markups).
    pub(crate) fn fields(name: String, fields: Vec<(String, Field)>) -> Self {
        Self {
            name,
            args: Args::Fields(fields),
        }
    }

    /// The call of a declared tool, or `None` (GRAMMARS §1.4: names are compared exactly,
    /// never fuzzy-matched). Only the caller's `resolve` may map an undeclared name to a
    /// declared one; the written name is then kept in `written_name`.
    pub(crate) fn recovered(
        &self,
        tools: &ToolSet,
        resolve: Option<NameResolver>,
        family: &'static str,
        span: Range<usize>,
    ) -> Option<RecoveredCall> {
        if self.name.is_empty() {
            // A placeholder for a call its grammar could not read (Kimi K2's broken neighbour).
            return None;
        }
        let (name, written_name) = match tools.get(&self.name) {
            Some(_) => (self.name.clone(), None),
            None => {
                let resolved = resolve?(tools, &self.name)?;
                (resolved, Some(self.name.clone()))
            }
        };
        let (arguments, arguments_unwrapped) = self.arguments_for(tools.get(&name)?);
        Some(RecoveredCall {
            name,
            written_name,
            family,
            arguments,
            arguments_unwrapped,
            span,
        })
    }

    /// The arguments as JSON text for `tool`, and whether they were unwrapped from a sole
    /// `arguments` / `input` / `properties` parameter.
    fn arguments_for(&self, tool: &Tool) -> (String, bool) {
        match &self.args {
            Args::Json(text) => (text.clone(), false),
            Args::Fields(fields) => {
                let schema = tool.schema();
                if let Some(inner) = wrapped(fields, schema) {
                    return (inner.to_string(), true);
                }
                let mut map = Map::new();
                for (key, field) in fields {
                    let value = match field {
                        Field::Untyped(raw) => coerce(schema, key, raw),
                        Field::Typed(value) => value.clone(),
                        Field::Nested(value) => coerce_nested(schema, key, value),
                    };
                    map.insert(key.clone(), value);
                }
                (Value::Object(map).to_string(), false)
            }
        }
    }
}

/// Parameter names a model wraps the whole argument object in (`properties`: MiniCPM 5 copies
/// the key of the tool's JSON Schema, issue #28).
pub(crate) const WRAPPERS: [&str; 3] = ["arguments", "input", "properties"];

/// The argument object of an XML call whose only parameter is `arguments`, `input` or
/// `properties` holding it, for a tool that declares no parameter of that name.
fn wrapped(fields: &[(String, Field)], schema: Option<&Value>) -> Option<Value> {
    let [(key, field)] = fields else {
        return None;
    };
    if !WRAPPERS.contains(&key.as_str()) || schema.and_then(|s| property(s, key)).is_some() {
        return None;
    }
    match field {
        Field::Typed(inner @ Value::Object(_)) => Some(inner.clone()),
        Field::Typed(Value::String(text)) | Field::Untyped(text) => {
            match serde_json::from_str(text.trim()) {
                Ok(inner @ Value::Object(_)) => Some(inner),
                _ => None,
            }
        }
        Field::Typed(_) | Field::Nested(_) => None,
    }
}

/// `value` of parameter `key` under `parent` (an object schema), its string leaves converted
/// with their own schemas: an object's members by `properties`, an array's items by `items`.
fn coerce_nested(parent: Option<&Value>, key: &str, value: &Value) -> Value {
    let own = parent.and_then(|p| property(p, key));
    match value {
        Value::String(raw) => coerce(parent, key, raw),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), coerce_nested(own, k, v)))
                .collect(),
        ),
        Value::Array(items) => {
            // The items schema, under a parameter name of its own.
            let holder = own
                .and_then(|o| o.get("items"))
                .map(|items| serde_json::json!({"properties": {"item": items}}));
            Value::Array(
                items
                    .iter()
                    .map(|v| coerce_nested(holder.as_ref(), "item", v))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}
