//! MiniCPM 5 XML: `<function name="NAME">` with `<param name="KEY">VALUE</param>` children.
//!
//! ```text
//! <function name="get_weather"><param name="city">上海</param><param name="days">3</param></function>
//! ```
//!
//! **Detects** `<function name="NAME">`, zero or more `<param name="KEY">` elements whose value
//! is raw text (or one `<![CDATA[…]]>` section, taken as written), and `</function>`. Values
//! are untyped, converted with the tool's schema, and keep their whitespace (the template adds
//! none). Shares its sentinel with Hermes' llama.cpp variant (`<function name="NAME">{json}`),
//! which is tried after this one.
//!
//! Variants MiniCPM 5 emits (issue #28): the tokenizer's space marker `Ġ` (U+0120) in place of
//! the space in a tag (`<functionĠname="…">`, `<paramĠname="…">`), and the space missing
//! (`<functionname="…">`, `<paramname="…">`); a block may mix them. A call whose only
//! parameter is `properties` (or `arguments`, `input`) holding the whole argument object is
//! unwrapped when the tool declares no parameter of that name: the object may be JSON
//! (unwrapped as for every XML family) or a Python dict literal (`{'city': 'Paris', 'days':
//! 3}`, read here with Python semantics).
//!
//! **Never accepts** a block without `</function>`, a parameter without a name, the same
//! parameter twice, or text between parameters.

use serde_json::Value;

use super::{Block, Grammar, Input, pythonic};
use crate::recover::call::{Field, RawCall, WRAPPERS};
use crate::recover::coerce::property;
use crate::recover::cursor::{Step, Stop, attr, expect, expect_ws, find, find_before, skip_ws};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "minicpm",
    sentinels: &["<function name=", "<functionĠname=", "<functionname="],
    parse,
};

/// What opens a new parameter or call: met inside a value, the value was cut off.
const STOPS: &[&str] = &[
    "<param name=",
    "<paramĠname=",
    "<paramname=",
    "<function name=",
    "<functionĠname=",
    "<functionname=",
];

/// The tokenizer's marker for a space (GPT-2 byte-level BPE writes U+0120 for the byte 0x20).
const SPACE_MARKER: &str = "Ġ";

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let (name, i) = attr(s, body - "name=".len(), "name")?;
    let mut i = expect_ws(s, i, ">")?;
    let mut fields: Vec<(String, Field)> = Vec::new();
    loop {
        let at = skip_ws(s, i);
        match expect(s, at, "</function>") {
            Ok(end) => {
                let fields = python_wrapper(input, &name, fields);
                return Block::new(end, vec![RawCall::fields(name, fields)]);
            }
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let open = expect(s, at, "<param")?;
        // `<param name=`, `<paramĠname=` or `<paramname=` (`attr` skips the space).
        let open = expect(s, open, SPACE_MARKER).unwrap_or(open);
        let (key, after) = attr(s, open, "name")?;
        let value_at = expect_ws(s, after, ">")?;
        let (value, close) = match expect(s, value_at, "<![CDATA[") {
            Ok(data) => {
                let end = find(s, data, "]]>")?;
                (&s[data..end], end + "]]>".len())
            }
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {
                let end = find_before(s, value_at, "</param>", STOPS)?;
                (&s[value_at..end], end)
            }
        };
        i = expect(s, close, "</param>")?;
        if fields.iter().any(|(k, _)| *k == key) {
            return Err(Stop::Invalid);
        }
        fields.push((key, Field::Untyped(value.to_owned())));
    }
}

/// `fields`, with a sole wrapper parameter's Python dict literal read as the object it holds,
/// so that the call is unwrapped like a JSON one. Only for a declared tool without a parameter
/// of that name: there the text is the parameter's value, converted by its own schema.
fn python_wrapper(
    input: &Input<'_>,
    name: &str,
    fields: Vec<(String, Field)>,
) -> Vec<(String, Field)> {
    let [(key, Field::Untyped(text))] = fields.as_slice() else {
        return fields;
    };
    let declared = input.tools.get(name).and_then(|tool| {
        let free = tool.schema().and_then(|s| property(s, key)).is_none();
        free.then_some(())
    });
    let object = declared
        .filter(|()| WRAPPERS.contains(&key.as_str()))
        .filter(|()| serde_json::from_str::<Value>(text.trim()).is_err())
        .and_then(|()| pythonic::dict_literal(text));
    match object {
        Some(object) => vec![(key.clone(), Field::Typed(Value::Object(object)))],
        None => fields,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{ignores, recovers, rejects_truncation};

    const ONE: &str = "<function name=\"get_weather\"><param name=\"city\">上海</param><param name=\"days\">3</param></function>";

    #[test]
    fn recovers_the_sample_with_prose_and_cdata() {
        let text = format!("Intro before.\n{ONE}\nOutro after.\n");
        let rest = recovers(
            &text,
            &[("get_weather", json!({"city": "上海", "days": 3}))],
        );
        assert_eq!(rest, "Intro before.\n\nOutro after.\n");
        let cdata = "<function name=\"write_file\"><param name=\"path\">a.py</param><param name=\"content\"><![CDATA[def f():\n    return 1 < 2\n]]></param></function>";
        recovers(
            cdata,
            &[(
                "write_file",
                json!({"path": "a.py", "content": "def f():\n    return 1 < 2\n"}),
            )],
        );
        recovers(
            "<function name=\"bash\"></function>",
            &[("bash", json!({}))],
        );
    }

    #[test]
    fn values_keep_their_whitespace() {
        let text = "<function name=\"write_file\"><param name=\"path\">a.py</param><param name=\"content\">    indented\n</param></function>";
        recovers(
            text,
            &[(
                "write_file",
                json!({"path": "a.py", "content": "    indented\n"}),
            )],
        );
    }

    #[test]
    fn reads_space_marker_and_collapsed_tags() {
        let expected = [("get_weather", json!({"city": "上海", "days": 3}))];
        for text in [
            "<functionĠname=\"get_weather\"><paramĠname=\"city\">上海</param><paramĠname=\"days\">3</param></function>",
            "<functionname=\"get_weather\"><paramname=\"city\">上海</param><paramname=\"days\">3</param></function>",
            "<function name=\"get_weather\"><paramĠname=\"city\">上海</param><paramname=\"days\">3</param></function>",
        ] {
            assert_eq!(
                recovers(&format!("Checking.\n{text}"), &expected),
                "Checking.\n"
            );
        }
        recovers(
            "<functionĠname=\"write_file\"><paramĠname=\"content\"><![CDATA[a < b\n]]></param></function>",
            &[("write_file", json!({"content": "a < b\n"}))],
        );
    }

    #[test]
    fn unwraps_a_sole_properties_parameter_in_json_or_python() {
        let expected = [("get_weather", json!({"city": "Paris", "days": 3}))];
        recovers(
            "<function name=\"get_weather\"><param name=\"properties\">{\"city\": \"Paris\", \"days\": 3}</param></function>",
            &expected,
        );
        recovers(
            "<functionname=\"get_weather\"><paramname=\"properties\">{'city': 'Paris', 'days': 3}</param></function>",
            &expected,
        );
        recovers(
            "<function name=\"write_file\"><param name=\"arguments\"><![CDATA[{'content': 'a < b', 'overwrite': True}]]></param></function>",
            &[("write_file", json!({"content": "a < b", "overwrite": true}))],
        );
        let found = crate::recover::recover_text(
            "<function name=\"get_weather\"><param name=\"properties\">{'city': 'Paris'}</param></function>",
            &super::super::testing::tools(),
            4,
        );
        assert!(found.calls[0].arguments_unwrapped);
    }

    #[test]
    fn a_declared_properties_parameter_is_a_value() {
        let tools = crate::ToolSet::from_json(&json!([{"name": "schema_edit", "parameters": {
            "type": "object", "properties": {"properties": {"type": "string"}}}}]));
        let text =
            "<function name=\"schema_edit\"><param name=\"properties\">{'a': 1}</param></function>";
        let found = crate::recover::recover_text(text, &tools, 4);
        assert_eq!(found.calls[0].arguments, r#"{"properties":"{'a': 1}"}"#);
        assert!(!found.calls[0].arguments_unwrapped);
        // Not a dict, or more than one parameter: nothing is unwrapped.
        recovers(
            "<function name=\"get_weather\"><param name=\"properties\">['Paris']</param></function>",
            &[("get_weather", json!({"properties": "['Paris']"}))],
        );
        recovers(
            "<function name=\"get_weather\"><param name=\"properties\">{'city': 'Paris'}</param><param name=\"days\">2</param></function>",
            &[(
                "get_weather",
                json!({"properties": "{'city': 'Paris'}", "days": 2}),
            )],
        );
    }

    #[test]
    fn the_hermes_json_variant_still_works() {
        recovers(
            "<function name=\"bash\">{\"command\": \"ls\"}</function>",
            &[("bash", json!({"command": "ls"}))],
        );
    }

    #[test]
    fn ignores_bad_params_unknown_names_and_a_missing_closer() {
        ignores("<function name=\"get_weather\"><param>北京</param></function>");
        ignores(
            "<function name=\"get_weather\"><param name=\"city\">北京</param><param name=\"city\">上海</param></function>",
        );
        ignores("<function name=\"unknown\"><param name=\"x\">1</param></function>");
        ignores("<function name=\"get_weather\"><param name=\"city\">北京</param>");
        ignores("MiniCPM writes <functionname=\"x\"> when the space is lost.");
        ignores(
            "<functionĠname=\"get_weather\"><paramĠname=\"city\">北京<paramĠname=\"days\">2</param></function>",
        );
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(ONE);
        rejects_truncation(
            "<functionĠname=\"get_weather\"><paramname=\"properties\">{'city': 'Paris', 'days': 3}</param></function>",
        );
    }
}
