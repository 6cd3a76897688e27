//! Text spread over several parts of one message (Anthropic text blocks, Responses
//! `output_text` parts): joined into the turn's one content text, and the library's text for it
//! split back into one text per part, so calls leaked into any part are recovered and each part
//! keeps what the library kept of it, where it was.

use std::ops::Range;

use toolmend::ToolSet;
use toolmend::recover::recover_text;

/// What joins the parts: a line break, as between paragraphs of one text.
const JOIN: &str = "\n";

/// The parts as the turn's one text.
pub(crate) fn join(parts: &[&str]) -> String {
    parts.join(JOIN)
}

/// The library's text for [`join`]`(parts)` as one text per part: each part with the markup
/// blocks the library took out removed and those it refused in place. When the library's text
/// cannot be read that way (a block it found spans two parts, or is not one a part holds), the
/// whole text is the first part's and the others are empty: nothing is lost, in order.
pub(crate) fn split(
    parts: &[&str],
    result: &str,
    tools: &ToolSet,
    max_calls: usize,
) -> Vec<String> {
    if result.trim().is_empty() {
        // Blanks between removed markup were dropped with it.
        return vec![String::new(); parts.len()];
    }
    aligned(parts, result, tools, max_calls).unwrap_or_else(|| {
        let mut texts = vec![String::new(); parts.len()];
        if let Some(first) = texts.first_mut() {
            result.clone_into(first);
        }
        texts
    })
}

/// [`split`] when every part's blocks line up with the library's text.
fn aligned(parts: &[&str], result: &str, tools: &ToolSet, max_calls: usize) -> Option<Vec<String>> {
    let mut rest = result;
    let mut texts = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            rest = rest.strip_prefix(JOIN)?;
        }
        let mut spans: Vec<Range<usize>> = recover_text(part, tools, max_calls)
            .calls
            .into_iter()
            .map(|c| c.span)
            .collect();
        spans.sort_by_key(|s| (s.start, s.end));
        spans.dedup();
        let mut text = String::with_capacity(part.len());
        let mut at = 0;
        for span in spans {
            if span.start < at {
                continue;
            }
            let before = part.get(at..span.start)?;
            rest = rest.strip_prefix(before)?;
            text.push_str(before);
            let block = part.get(span.clone())?;
            if let Some(after) = rest.strip_prefix(block) {
                // Refused: it stays where it was.
                rest = after;
                text.push_str(block);
            }
            at = span.end;
        }
        let tail = part.get(at..)?;
        rest = rest.strip_prefix(tail)?;
        text.push_str(tail);
        texts.push(text);
    }
    rest.is_empty().then_some(texts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> ToolSet {
        let tools = serde_json::json!([{"type": "function", "function": {"name": "read_file",
            "parameters": {"type": "object", "required": ["path"],
                "properties": {"path": {"type": "string"}}}}}]);
        ToolSet::from_json(&tools)
    }

    const CALL: &str =
        "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>";

    #[test]
    fn each_part_loses_only_its_taken_blocks() {
        let parts = ["one", &format!("two {CALL} three")];
        let result = "one\ntwo  three";
        assert_eq!(split(&parts, result, &tools(), 8), ["one", "two  three"]);
    }

    #[test]
    fn a_refused_block_stays_in_its_part() {
        let parts = [&format!("a {CALL}") as &str, &format!("b {CALL}")];
        let result = format!("a \nb {CALL}");
        assert_eq!(
            split(&parts, &result, &tools(), 8),
            ["a ".to_owned(), format!("b {CALL}")]
        );
    }

    #[test]
    fn text_that_does_not_line_up_goes_whole_into_the_first_part() {
        let parts = ["x", "y"];
        assert_eq!(
            split(&parts, "something else", &tools(), 8),
            ["something else", ""]
        );
        assert_eq!(split(&parts, " \n ", &tools(), 8), ["", ""]);
    }
}
