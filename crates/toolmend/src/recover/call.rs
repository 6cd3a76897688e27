//! What a grammar hands back before names are checked and untyped values are converted.

use serde_json::{Map, Value};

use std::ops::Range;

use super::coerce::{coerce, property};
use super::{LostCall, NameResolver, RecoveredCall};
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
    /// A call its grammar found but could not read (broken JSON that still reaches the call's
    /// own terminator, a list entry whose arguments are no object): the text as written. It
    /// is never recovered; its block's other calls are, and it is reported as lost (issue #28:
    /// a bad entry loses only itself, and never silently).
    Unreadable(String),
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

    /// A call its grammar could not read: `name` as written, `text` its arguments (or its
    /// whole list entry) as written.
    pub(crate) fn unreadable(name: String, text: String) -> Self {
        Self {
            name,
            args: Args::Unreadable(text),
        }
    }

    /// Whether this is a call its grammar could not read.
    pub(crate) fn is_unreadable(&self) -> bool {
        matches!(self.args, Args::Unreadable(_))
    }

    /// The declared name this call's written name stands for, and the written name when
    /// `resolve` mapped it (GRAMMARS §1.4: names are compared exactly, never fuzzy-matched).
    fn declared_name(
        &self,
        tools: &ToolSet,
        resolve: Option<NameResolver>,
    ) -> Option<(String, Option<String>)> {
        match tools.get(&self.name) {
            Some(_) => Some((self.name.clone(), None)),
            None => {
                let resolved = resolve?(tools, &self.name)?;
                Some((resolved, Some(self.name.clone())))
            }
        }
    }

    /// The call of a declared tool, or `None` (GRAMMARS §1.4: names are compared exactly,
    /// never fuzzy-matched). Only the caller's `resolve` may map an undeclared name to a
    /// declared one; the written name is then kept in `written_name`. An unreadable call is
    /// never recovered ([`Self::lost`] reports it).
    pub(crate) fn recovered(
        &self,
        tools: &ToolSet,
        resolve: Option<NameResolver>,
        family: &'static str,
        span: Range<usize>,
    ) -> Option<RecoveredCall> {
        if self.is_unreadable() {
            return None;
        }
        let (name, written_name) = self.declared_name(tools, resolve)?;
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

    /// The report of an unreadable call of a declared tool, at `position` among its block's
    /// recovered calls; `None` for any other call (an undeclared name is dropped like any
    /// undeclared call).
    pub(crate) fn lost(
        &self,
        tools: &ToolSet,
        resolve: Option<NameResolver>,
        family: &'static str,
        span: Range<usize>,
        position: usize,
    ) -> Option<LostCall> {
        let Args::Unreadable(text) = &self.args else {
            return None;
        };
        let (name, _) = self.declared_name(tools, resolve)?;
        Some(LostCall {
            name,
            family,
            text: text.clone(),
            position,
            span,
        })
    }

    /// The arguments as JSON text for `tool`, and whether they were unwrapped from a sole
    /// `arguments` / `input` / `properties` parameter.
    fn arguments_for(&self, tool: &Tool) -> (String, bool) {
        match &self.args {
            Args::Json(text) | Args::Unreadable(text) => (text.clone(), false),
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

/// A block's calls, sorted by what becomes of them.
pub(crate) struct Sorted {
    /// The calls of declared tools, in block order.
    pub calls: Vec<RecoveredCall>,
    /// The unreadable calls of declared tools, each placed among `calls`.
    pub lost: Vec<LostCall>,
    /// How many readable calls name no declared tool (dropped).
    pub undeclared: usize,
}

/// Sorts a block's `raw` calls (consumed as `range`) into recovered, lost and undeclared.
pub(crate) fn sort_calls(
    raw: &[RawCall],
    tools: &ToolSet,
    resolve: Option<NameResolver>,
    family: &'static str,
    range: &Range<usize>,
) -> Sorted {
    let mut sorted = Sorted {
        calls: Vec::with_capacity(raw.len()),
        lost: Vec::new(),
        undeclared: 0,
    };
    for call in raw {
        if call.is_unreadable() {
            let at = sorted.calls.len();
            sorted
                .lost
                .extend(call.lost(tools, resolve, family, range.clone(), at));
        } else if let Some(found) = call.recovered(tools, resolve, family, range.clone()) {
            sorted.calls.push(found);
        } else {
            sorted.undeclared += 1;
        }
    }
    sorted
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
