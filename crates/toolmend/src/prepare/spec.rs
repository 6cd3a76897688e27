//! Reading tool objects in the four wire forms.

use serde_json::Value;

use crate::Error;

/// The wire form a tool object was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolFormat {
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`.
    OpenAi,
    /// `{"name", "description", "parameters"}`.
    Flat,
    /// `{"name", "description", "input_schema"}`.
    Anthropic,
    /// An MCP `tools/list` entry: `{"name", "description", "inputSchema", "annotations"?}`.
    Mcp,
}

impl ToolFormat {
    /// The key the parameters schema lives under in this form.
    pub(crate) const fn schema_key(self) -> &'static str {
        match self {
            Self::Anthropic => "input_schema",
            Self::Mcp => "inputSchema",
            Self::OpenAi | Self::Flat => "parameters",
        }
    }
}

/// A tool object taken apart; borrowed from the caller's JSON.
#[derive(Debug)]
pub(crate) struct ToolSpec<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: Option<&'a str>,
    /// The parameters schema; `None` when the tool declares none (any object is accepted).
    pub(crate) schema: Option<&'a Value>,
    pub(crate) format: ToolFormat,
    /// The MCP `annotations` object (`readOnlyHint`, …) of an MCP tool.
    pub(crate) annotations: Option<&'a Value>,
}

/// Reads one tool object of any of the four forms.
pub(crate) fn read_spec(index: usize, tool: &Value) -> Result<ToolSpec<'_>, Error> {
    let fail = |reason: &str| Error::ToolSpec {
        index,
        reason: reason.to_owned(),
    };
    let object = tool.as_object().ok_or_else(|| fail("not a JSON object"))?;
    let (body, format) = match object.get("function") {
        Some(function @ Value::Object(_)) => (function, ToolFormat::OpenAi),
        Some(_) => return Err(fail("`function` is not an object")),
        None if object.contains_key("input_schema") => (tool, ToolFormat::Anthropic),
        None if object.contains_key("inputSchema") => (tool, ToolFormat::Mcp),
        None => (tool, ToolFormat::Flat),
    };
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| fail("no string `name`"))?;
    if name.is_empty() {
        return Err(fail("empty `name`"));
    }
    let schema = match body.get(format.schema_key()) {
        None | Some(Value::Null) => None,
        Some(schema @ (Value::Object(_) | Value::Bool(_))) => Some(schema),
        Some(_) => return Err(fail("the schema is neither an object nor a boolean")),
    };
    let description = body.get("description").and_then(Value::as_str);
    let annotations = match format {
        ToolFormat::Mcp => object.get("annotations").filter(|a| a.is_object()),
        _ => None,
    };
    Ok(ToolSpec {
        name,
        description,
        schema,
        format,
        annotations,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_the_four_forms() {
        let schema = json!({"type": "object"});
        let openai = json!({"type": "function", "function": {"name": "a", "parameters": schema}});
        let flat = json!({"name": "b", "parameters": schema});
        let anthropic = json!({"name": "c", "input_schema": schema});
        let mcp =
            json!({"name": "d", "inputSchema": schema, "annotations": {"readOnlyHint": true}});
        for (tool, name, format) in [
            (&openai, "a", ToolFormat::OpenAi),
            (&flat, "b", ToolFormat::Flat),
            (&anthropic, "c", ToolFormat::Anthropic),
            (&mcp, "d", ToolFormat::Mcp),
        ] {
            let spec = read_spec(0, tool).unwrap();
            assert_eq!((spec.name, spec.format), (name, format));
            assert_eq!(spec.schema, Some(&schema));
        }
    }

    #[test]
    fn rejects_objects_of_no_known_form() {
        for tool in [
            json!([]),
            json!({"description": "x"}),
            json!({"name": ""}),
            json!({"function": 1}),
        ] {
            assert!(
                matches!(read_spec(3, &tool), Err(Error::ToolSpec { index: 3, .. })),
                "{tool}"
            );
        }
    }

    #[test]
    fn a_tool_without_parameters_has_no_schema() {
        assert_eq!(read_spec(0, &json!({"name": "now"})).unwrap().schema, None);
    }
}
