//! `name_repaired`: a call name that is not a tool but plainly means exactly one.
//!
//! **Detects:** a name not in the tool set that matches exactly one tool after removing a
//! `functions.` prefix, undoing a doubled name (`read_fileread_file`), or ignoring case.
//!
//! **Does:** the call takes the tool's name.
//!
//! **Never fires when:** zero or several tools match.

use crate::ToolSet;

/// The tool a misspelt `name` plainly means, if exactly one.
pub(crate) fn repair_name<'a>(name: &str, tools: &'a ToolSet) -> Option<&'a str> {
    let mut candidates: Vec<&'a str> = Vec::new();
    let mut consider = |candidate: &str| {
        for tool in tools.iter() {
            if tool.name().eq_ignore_ascii_case(candidate) && !candidates.contains(&tool.name()) {
                candidates.push(tool.name());
            }
        }
    };
    let stripped = name.strip_prefix("functions.").unwrap_or(name);
    consider(stripped);
    if stripped.len() % 2 == 0 && stripped.is_char_boundary(stripped.len() / 2) {
        let (a, b) = stripped.split_at(stripped.len() / 2);
        if a == b {
            consider(a);
        }
    }
    match candidates[..] {
        [one] if one != name => Some(one),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> ToolSet {
        ToolSet::from_json(&json!([{"name": "read_file"}, {"name": "Grep"}, {"name": "grep"}]))
    }

    #[test]
    fn repairs_prefix_doubling_and_case() {
        let tools = tools();
        assert_eq!(
            repair_name("functions.read_file", &tools),
            Some("read_file")
        );
        assert_eq!(repair_name("read_fileread_file", &tools), Some("read_file"));
        assert_eq!(repair_name("READ_FILE", &tools), Some("read_file"));
    }

    #[test]
    fn never_guesses_between_several_or_none() {
        let tools = tools();
        assert_eq!(repair_name("GREP", &tools), None);
        assert_eq!(repair_name("write_file", &tools), None);
    }
}
