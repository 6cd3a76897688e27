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
//! **Never accepts** a block without `</function>`, a parameter without a name, the same
//! parameter twice, or text between parameters.

use super::{Block, Grammar, Input};
use crate::recover::call::{Field, RawCall};
use crate::recover::cursor::{Step, Stop, attr, expect, expect_ws, find, find_before, skip_ws};

pub(crate) const GRAMMAR: Grammar = Grammar {
    lead: "",
    family: "minicpm",
    sentinels: &["<function name="],
    parse,
};

/// What opens a new parameter or call: met inside a value, the value was cut off.
const STOPS: &[&str] = &["<param name=", "<function name="];

fn parse(input: &Input<'_>, _start: usize, body: usize) -> Step<Block> {
    let s = input.text;
    let (name, i) = attr(s, body - "name=".len(), "name")?;
    let mut i = expect_ws(s, i, ">")?;
    let mut fields: Vec<(String, Field)> = Vec::new();
    loop {
        let at = skip_ws(s, i);
        match expect(s, at, "</function>") {
            Ok(end) => return Block::new(end, vec![RawCall::fields(name, fields)]),
            Err(Stop::Incomplete) => return Err(Stop::Incomplete),
            Err(Stop::Invalid) => {}
        }
        let open = expect(s, at, "<param ")?;
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
    }

    #[test]
    fn rejects_truncated_blocks() {
        rejects_truncation(ONE);
    }
}
