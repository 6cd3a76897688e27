//! Model-readable retry messages for calls that cannot be saved (DESIGN §8).
//!
//! A message names every failing location, the expected shape from the schema, the type that
//! was received and one concrete hint. It never quotes argument values, and it is bounded.

use std::borrow::Cow;
use std::fmt::Write;

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::Tool;
use crate::limits::MAX_ECHOED_NAME;
use crate::pointer;
use crate::repair::Rejection;
use crate::repair::schema::{SchemaView, Types};
use crate::salvage::SalvageErrorKind;

/// How many failing locations one message names.
const MAX_PROBLEMS: usize = 8;
/// How deep the expected shape is drawn.
const SHAPE_DEPTH: usize = 3;
/// How many fields of an object the expected shape draws.
const MAX_SHAPE_FIELDS: usize = 16;
/// How many enum members a message lists.
const MAX_ENUM_MEMBERS: usize = 10;

/// Where in the retry budget this failure falls (DESIGN §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryContext {
    /// The first failure of this call.
    First,
    /// The same invalid call again, within the budget.
    Repeated,
    /// Past the budget: the model should stop retrying; `repeated` when it is the same call
    /// again (not the first failure of a budget of 0).
    GaveUp {
        /// Whether this exact call failed before.
        repeated: bool,
    },
}

/// How a retry message is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MessageOptions {
    /// The longest message, in bytes.
    pub(crate) max_bytes: usize,
    /// Quote the received value at each failing path (bounded to [`MAX_VALUE_PREVIEW`]); off by
    /// default, because argument values may hold secrets and messages reach logs.
    pub(crate) include_values: bool,
    /// [`crate::Limits::max_call_errors`]: a value whose errors could be over it is not
    /// described error by error (the validator would build them all).
    pub(crate) max_call_errors: u64,
}

#[cfg(test)]
impl MessageOptions {
    /// Value-free messages of at most `max_bytes`.
    pub(crate) const fn value_free(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            include_values: false,
            max_call_errors: crate::limits::MAX_CALL_ERRORS,
        }
    }
}

/// How many bytes of a received value a message quotes when values are on.
pub(crate) const MAX_VALUE_PREVIEW: usize = 120;

/// The retry message for a rejected call of `tool`; `value` is the best attempt, if any.
pub(crate) fn retry_message(
    tool: &Tool,
    value: Option<&Value>,
    rejection: &Rejection,
    context: RetryContext,
    options: MessageOptions,
) -> String {
    let name = escape_name(tool.name());
    // Room for a usual message at once: grown line by line, it was reallocated many times.
    let mut out = String::with_capacity(1024);
    if matches!(
        context,
        RetryContext::Repeated | RetryContext::GaveUp { repeated: true }
    ) {
        out.push_str(
            "You sent exactly the same invalid call again; change it as described below.\n",
        );
    }
    // The fixed sentences are borrowed: a refused cut-off call (the one rejection most small
    // calls meet) builds no `String` but the message (issue #31).
    let (problems, hint): (Cow<'static, str>, Cow<'static, str>) = match rejection {
        Rejection::Unvalidated => return unvalidated_message(tool, options.max_bytes),
        Rejection::Truncated => (
            Cow::Borrowed(
                "the arguments were cut off before they were complete, probably by the output token limit",
            ),
            Cow::Borrowed(
                "resend the complete call; split large content into several smaller calls.",
            ),
        ),
        Rejection::Syntax(error) => {
            let what = match error.kind {
                SalvageErrorKind::TooLarge => Cow::Borrowed("the arguments are too large to read"),
                SalvageErrorKind::TooDeep => Cow::Borrowed("the arguments are nested too deeply"),
                SalvageErrorKind::NonFinite => Cow::Owned(format!(
                    "the arguments hold NaN or Infinity, which JSON does not allow (line {}, column {})",
                    error.line, error.column
                )),
                _ => Cow::Owned(format!(
                    "the arguments are not valid JSON (line {}, column {})",
                    error.line, error.column
                )),
            };
            (
                what,
                Cow::Borrowed(
                    "send the arguments as one JSON object, with no text or code fence around it.",
                ),
            )
        }
        Rejection::Schema => owned(schema_problems(tool, value, options)),
        Rejection::OverErrorBudget(cost) => owned(over_error_budget(cost)),
        Rejection::OverKeyBudget(cost) => owned((
            format!(
                "the arguments hold {} keys or more, and this tool's schema checks every key \
                 against {} patterns: {} pattern matches, more than the budget of {} toolmend \
                 checks in one call, so the call was not checked",
                cost.keys,
                cost.patterns,
                cost.keys.saturating_mul(cost.patterns),
                cost.budget,
            ),
            format!(
                "send at most {} keys in one call; split the work over several calls.",
                cost.budget / cost.patterns.max(1)
            ),
        )),
        Rejection::Concatenated => (
            Cow::Borrowed("the arguments hold several JSON objects back to back"),
            Cow::Borrowed(
                "send one tool call per object, each with one JSON object as its arguments.",
            ),
        ),
        Rejection::Unreadable => (
            Cow::Borrowed(
                "it was written in the text among other tool calls, and its arguments could not be read as a JSON object, so it was not run (the other calls were)",
            ),
            Cow::Borrowed(
                "send this call again on its own, with one JSON object as its arguments.",
            ),
        ),
    };
    // Pushed piece by piece: the same text as `writeln!`, without the formatting machinery.
    for piece in ["Tool call `", &*name, "` was rejected: ", &*problems, ".\n"] {
        out.push_str(piece);
    }
    if let Some(schema) = tool.schema() {
        // Drawn once per tool: it depends on the schema alone.
        let expected = tool
            .expected_shape()
            .get_or_init(|| shape(&SchemaView::of_tool(schema, tool.patterns()), 0));
        for piece in ["Expected: ", expected, "\n"] {
            out.push_str(piece);
        }
    }
    out.push_str("Try: ");
    out.push_str(&hint);
    if matches!(context, RetryContext::GaveUp { .. }) {
        out.push_str("\nThis call has failed repeatedly: stop retrying it; take a different approach or ask the user.");
    }
    bound(out, options.max_bytes)
}

/// The message for a call of a tool that does not exist.
pub(crate) fn unknown_tool_message<'a>(name: &str, tools: impl Iterator<Item = &'a str>) -> String {
    let mut names: Vec<Cow<'_, str>> = tools.take(32).map(escape_name).collect();
    names.sort_unstable();
    let name = if name.len() > MAX_ECHOED_NAME {
        Cow::Borrowed("(a long name)")
    } else {
        escape_name(name)
    };
    format!(
        "Tool `{name}` does not exist. Available tools: {}. Call one of them by its exact name.",
        names.join(", ")
    )
}

/// The message for a call of a tool whose schema was refused (`unvalidated`): nothing the model
/// sends can make it valid, so it is told not to retry.
pub(crate) fn unvalidated_message(tool: &Tool, max_bytes: usize) -> String {
    let reason = bound(tool.refusal().unwrap_or("unknown").to_owned(), 300);
    bound(
        format!(
            "Tool call `{}` was not run: the tool's parameter schema could not be used to check \
             the call ({reason}). This is a problem of the tool's declaration, not of the \
             arguments: do not retry this tool; take a different approach or ask the user.",
            escape_name(tool.name())
        ),
        max_bytes,
    )
}

/// A key name, tool name or path as echoed into a message or tracing field: control
/// characters and backticks escaped (`\n`, `\u{60}`), cut to [`MAX_ECHOED_NAME`] characters
/// with `…`. Borrowed when nothing needs changing, so the common case does not allocate.
pub(crate) fn escape_name(name: &str) -> Cow<'_, str> {
    escape_bounded(name, MAX_ECHOED_NAME)
}

/// [`escape_name`] for a JSON Pointer or field path, which holds several names: twice the bound.
pub(crate) fn escape_path(path: &str) -> Cow<'_, str> {
    escape_bounded(path, 2 * MAX_ECHOED_NAME)
}

/// [`escape_name`] with its own bound.
fn escape_bounded(text: &str, max_chars: usize) -> Cow<'_, str> {
    let plain = |c: char| !c.is_control() && c != '`' && c != '\\';
    // Byte by byte for the usual ASCII name (issue #31: a character at a time, the check cost
    // more than the rest of a refused call's message); the same test on ASCII.
    let plain_ascii = |b: u8| (b' '..=b'~').contains(&b) && b != b'`' && b != b'\\';
    if text.len() <= max_chars
        && (text.bytes().all(plain_ascii) || (!text.is_ascii() && text.chars().all(plain)))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count >= max_chars {
            out.push('…');
            break;
        }
        match c {
            '`' => out.push_str("\\u{60}"),
            c if plain(c) => out.push(c),
            c => out.extend(c.escape_debug()),
        }
    }
    Cow::Owned(out)
}

/// The problem and hint of a call whose errors could be over its budget.
fn over_error_budget(cost: &crate::repair::error_bound::ErrorCost) -> (String, String) {
    (
        format!(
            "the arguments are so far from the tool's schema that checking them could report {} \
             errors or more, more than the budget of {} toolmend checks for a call this size, so \
             the call was not checked",
            cost.errors, cost.budget
        ),
        "send a call that follows the expected shape below; split large batches over several \
         calls."
            .to_owned(),
    )
}

/// Every failing location of `value`, and a hint for the first.
fn schema_problems(
    tool: &Tool,
    value: Option<&Value>,
    options: MessageOptions,
) -> (String, String) {
    let (Some(value), Some(validator), Some(schema)) = (value, tool.validator(), tool.schema())
    else {
        return (
            "the arguments must be a JSON object".to_owned(),
            "send the arguments as one JSON object.".to_owned(),
        );
    };
    if let Some(cost) =
        crate::repair::error_bound::over_budget(tool, value, options.max_call_errors)
    {
        return over_error_budget(&cost);
    }
    let include_values = options.include_values;
    let root = SchemaView::of_tool(schema, tool.patterns());
    let mut problems: Vec<String> = Vec::new();
    let mut hint: Option<String> = None;
    for error in validator.iter_errors(value).take(64) {
        if problems.len() >= MAX_PROBLEMS {
            break;
        }
        let at = error.instance_path().as_str();
        let view = view_at(&root, value, at);
        let optional = is_optional_member(&root, value, at);
        let (mut problem, try_this) = describe(
            optional,
            error.kind(),
            at,
            error.instance(),
            view.as_ref(),
            // Rendered only for the kinds `describe` has no words of its own for.
            || bound(error.masked().to_string(), 200),
        );
        if include_values && !matches!(error.kind(), ValidationErrorKind::Required { .. }) {
            let _ = write!(problem, " (received {})", preview(error.instance()));
        }
        if !problems.contains(&problem) {
            problems.push(problem);
        }
        hint.get_or_insert(try_this);
    }
    if problems.is_empty() {
        problems.push("the arguments do not match the schema".to_owned());
    }
    (
        problems.join("; "),
        hint.unwrap_or_else(|| "send arguments that match the expected shape.".to_owned()),
    )
}

/// One problem sentence and its hint, from the validator's typed error.
fn describe(
    optional: bool,
    kind: &ValidationErrorKind,
    at: &str,
    instance: &Value,
    view: Option<&SchemaView<'_>>,
    masked: impl FnOnce() -> String,
) -> (String, String) {
    // Paths and names come from the arguments: escaped and bounded before they are echoed.
    let field = escape_bounded(&pointer::display(at), 2 * MAX_ECHOED_NAME).into_owned();
    let quoted = if at.is_empty() {
        "the arguments".to_owned()
    } else {
        format!("`{}`", escape_bounded(at, 2 * MAX_ECHOED_NAME))
    };
    match kind {
        ValidationErrorKind::Type { .. }
        | ValidationErrorKind::AnyOf { .. }
        | ValidationErrorKind::OneOfNotValid { .. } => {
            let expected = view.map_or_else(|| "of another type".to_owned(), |v| type_phrase(v));
            let sent = article(Types::of(instance));
            let hint = match view {
                Some(v) if v.allows(Types::ARRAY) && !field.is_empty() => {
                    let item = v
                        .item(0)
                        .map_or_else(|| "…".to_owned(), |i| shape(&i, SHAPE_DEPTH));
                    format!("send \"{field}\" as a JSON array, e.g. \"{field}\": [{item}].")
                }
                Some(v) if v.allows(Types::OBJECT) && field.is_empty() => {
                    "send the arguments as one JSON object with the fields shown above.".to_owned()
                }
                Some(v) if v.allows(Types::OBJECT) => format!(
                    "send \"{field}\" as a JSON object, e.g. \"{field}\": {}.",
                    shape(v, SHAPE_DEPTH - 1)
                ),
                Some(v) if v.allows_null() || field.is_empty() => {
                    format!("send {quoted} as {expected}.")
                }
                _ if optional => format!("send \"{field}\" as {expected}, or omit it."),
                _ => format!("send \"{field}\" as {expected}."),
            };
            (
                format!("{quoted} must be {expected}, but {sent} was sent"),
                hint,
            )
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or("?");
            let mut full = at.to_owned();
            pointer::push(&mut full, name);
            let full = escape_bounded(&full, 2 * MAX_ECHOED_NAME);
            let name = escape_name(name);
            (
                format!("`{full}` is required but missing"),
                format!("include \"{name}\" in the arguments."),
            )
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let names: Vec<String> = unexpected
                .iter()
                .take(8)
                .map(|n| format!("`{}`", escape_name(n)))
                .collect();
            (
                format!(
                    "{quoted} has fields the tool does not declare: {}",
                    names.join(", ")
                ),
                "remove the undeclared fields and use the declared names.".to_owned(),
            )
        }
        ValidationErrorKind::Enum { .. } | ValidationErrorKind::Constant { .. } => {
            let members = view.map(SchemaView::enum_values).unwrap_or_default();
            let listed: Vec<String> = members
                .iter()
                .take(MAX_ENUM_MEMBERS)
                .map(|m| m.to_string())
                .collect();
            (
                format!("{quoted} must be one of {}", listed.join(", ")),
                "use one of the allowed values exactly as listed.".to_owned(),
            )
        }
        // The validator's text for these quotes the offending key; name the rule instead.
        ValidationErrorKind::PropertyNames { .. } => (
            format!("{quoted} has a key that the schema's `propertyNames` does not allow"),
            "use only the keys the schema allows.".to_owned(),
        ),
        ValidationErrorKind::FalseSchema => (
            format!("{quoted} is not allowed at all"),
            "leave it out.".to_owned(),
        ),
        ValidationErrorKind::Pattern { pattern } => (
            format!("{quoted} must match the pattern `{pattern}`"),
            "send a value that matches the pattern (without adding ^ or $).".to_owned(),
        ),
        _ => (
            format!("{quoted}: {}", masked()),
            "change the value so that it satisfies the schema.".to_owned(),
        ),
    }
}

/// The schema view at a pointer, walking the instance beside it.
fn view_at<'s>(root: &SchemaView<'s>, value: &Value, at: &str) -> Option<SchemaView<'s>> {
    let mut view = root.clone();
    let mut node = value;
    for token in at.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        match node {
            Value::Object(map) => {
                view = view.property(&token)?;
                node = map.get(&token)?;
            }
            Value::Array(items) => {
                let index: usize = token.parse().ok()?;
                view = view.item(index)?;
                node = items.get(index)?;
            }
            _ => return None,
        }
    }
    Some(view)
}

/// Whether the value at `at` is a member its parent object does not require.
fn is_optional_member(root: &SchemaView<'_>, value: &Value, at: &str) -> bool {
    let Some((parent, token)) = at.rsplit_once('/') else {
        return false;
    };
    let token = token.replace("~1", "/").replace("~0", "~");
    let Some(parent_value) = value.pointer(parent) else {
        return false;
    };
    parent_value.is_object()
        && view_at(root, value, parent).is_some_and(|view| !view.is_required(&token))
}

/// "an array of strings", "an integer", "a string or null".
fn type_phrase(view: &SchemaView<'_>) -> String {
    let types = view.types();
    if types == Types::ANY {
        return "a value of the declared type".to_owned();
    }
    let mut names: Vec<String> = Vec::new();
    for (t, name) in NAMES {
        if types.contains(t) && !(t == Types::INTEGER && types.contains(Types::NUMBER)) {
            names.push(if t == Types::ARRAY {
                match view.item(0).map(|i| i.types()) {
                    Some(items) if items != Types::ANY => format!("an array of {}", plural(items)),
                    _ => "an array".to_owned(),
                }
            } else {
                article_name(name)
            });
        }
    }
    names.join(" or ")
}

const NAMES: [(Types, &str); 7] = [
    (Types::ARRAY, "array"),
    (Types::OBJECT, "object"),
    (Types::STRING, "string"),
    (Types::NUMBER, "number"),
    (Types::INTEGER, "integer"),
    (Types::BOOLEAN, "boolean"),
    (Types::NULL, "null"),
];

fn article_name(name: &str) -> String {
    match name {
        "null" => "null".to_owned(),
        n if n.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {n}"),
        n => format!("a {n}"),
    }
}

fn article(t: Types) -> String {
    NAMES
        .iter()
        .rev()
        .find(|(known, _)| *known == t || (t.contains(*known) && *known != Types::NULL))
        .map_or_else(|| "a number".to_owned(), |(_, name)| article_name(name))
}

fn plural(types: Types) -> String {
    let names: Vec<&str> = NAMES
        .iter()
        .filter(|(t, _)| {
            types.contains(*t) && !(*t == Types::INTEGER && types.contains(Types::NUMBER))
        })
        .map(|(_, name)| match *name {
            "array" => "arrays",
            "object" => "objects",
            "string" => "strings",
            "number" => "numbers",
            "integer" => "integers",
            "boolean" => "booleans",
            _ => "nulls",
        })
        .collect();
    names.join(" or ")
}

/// The expected shape, drawn compactly: `{"paths": ["<string>", …], "limit"?: <integer>}`.
fn shape(view: &SchemaView<'_>, depth: usize) -> String {
    let mut out = String::new();
    write_shape(&mut out, view, depth);
    out
}

/// [`shape`], written at the end of `out`: the alternatives one after the other, each nested
/// shape in place (a `String` per field and alternative, joined, cost more than the message).
fn write_shape(out: &mut String, view: &SchemaView<'_>, depth: usize) {
    let members = view.enum_values();
    if !members.is_empty() {
        for (i, member) in members.iter().take(MAX_ENUM_MEMBERS).enumerate() {
            if i > 0 {
                out.push_str(" | ");
            }
            // Writing to a `String` cannot fail.
            let _ = write!(out, "{member}");
        }
        return;
    }
    let types = view.types();
    if types == Types::ANY {
        out.push_str("<any>");
        return;
    }
    if types == Types::NOTHING {
        out.push_str("<nothing: leave it out>");
        return;
    }
    // Alternatives are separated as `join(" | ")` separates them (an empty one included).
    let mut alternatives = 0usize;
    let mut next = |out: &mut String| {
        if alternatives > 0 {
            out.push_str(" | ");
        }
        alternatives += 1;
    };
    if types.contains(Types::OBJECT) {
        next(out);
        let names = view.first_declared_names(MAX_SHAPE_FIELDS);
        if depth >= SHAPE_DEPTH || names.is_empty() {
            out.push_str("{…}");
        } else {
            out.push('{');
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('"');
                out.push_str(name);
                out.push_str(if view.is_required(name) {
                    "\": "
                } else {
                    "\"?: "
                });
                match view.property(name) {
                    Some(v) => write_shape(out, &v, depth + 1),
                    None => out.push_str("<any>"),
                }
            }
            out.push('}');
        }
    }
    if types.contains(Types::ARRAY) {
        next(out);
        out.push('[');
        match view.item(0) {
            Some(items) if depth < SHAPE_DEPTH => write_shape(out, &items, depth + 1),
            _ => out.push('…'),
        }
        out.push_str(", …]");
    }
    for (t, name) in &NAMES[2..] {
        if types.contains(*t) && !(*t == Types::INTEGER && types.contains(Types::NUMBER)) {
            next(out);
            match *name {
                "string" => out.push_str("\"<string>\""),
                "null" => out.push_str("null"),
                name => {
                    out.push('<');
                    out.push_str(name);
                    out.push('>');
                }
            }
        }
    }
}

/// A problem and its hint built as `String`s, as the message's parts.
fn owned((problem, hint): (String, String)) -> (Cow<'static, str>, Cow<'static, str>) {
    (Cow::Owned(problem), Cow::Owned(hint))
}

/// The value as compact JSON, cut to [`MAX_VALUE_PREVIEW`] bytes.
fn preview(value: &Value) -> String {
    bound(value.to_string(), MAX_VALUE_PREVIEW)
}

/// Cuts `text` to at most `max` bytes on a char boundary.
fn bound(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut cut = max.saturating_sub(3);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ToolSet;

    fn tools() -> ToolSet {
        ToolSet::from_json(
            &json!([{"name": "read_many", "parameters": {"type": "object", "required": ["paths"],
            "properties": {"paths": {"type": "array", "items": {"type": "string"}}, "limit": {"type": "integer"}}}}]),
        )
    }

    /// A name is borrowed exactly when every character is plain (no control character,
    /// backtick or backslash) and it is short enough, ASCII or not.
    #[test]
    fn a_plain_name_is_borrowed_and_any_other_escaped() {
        for (name, borrowed) in [
            ("write_file", true),
            ("a b~!", true),
            ("é日 ok", true),
            ("tab\there", false),
            ("del\u{7f}", false),
            ("back`tick", false),
            ("back\\slash", false),
            ("é`", false),
            ("\u{85}nel", false),
        ] {
            assert_eq!(
                matches!(escape_name(name), Cow::Borrowed(_)),
                borrowed,
                "{name:?}"
            );
        }
        assert_eq!(escape_name("a`b\n"), "a\\u{60}b\\n");
        let long = "x".repeat(MAX_ECHOED_NAME + 1);
        assert!(matches!(escape_name(&long), Cow::Owned(_)));
    }

    #[test]
    fn names_the_path_expected_shape_received_type_and_a_hint() {
        let set = tools();
        let tool = set.get("read_many").unwrap();
        let value = json!({"paths": "[a, b] secret-value"});
        let message = retry_message(
            tool,
            Some(&value),
            &Rejection::Schema,
            RetryContext::First,
            MessageOptions::value_free(4096),
        );
        assert!(message.starts_with("Tool call `read_many` was rejected: `/paths` must be an array of strings, but a string was sent."), "{message}");
        assert!(
            message.contains("Expected: {\"paths\": [\"<string>\", …], \"limit\"?: <integer>}"),
            "{message}"
        );
        assert!(
            message
                .contains("Try: send \"paths\" as a JSON array, e.g. \"paths\": [\"<string>\"]."),
            "{message}"
        );
        assert!(!message.contains("secret-value"), "value leaked: {message}");
    }

    #[test]
    fn names_every_failing_path() {
        let set = tools();
        let tool = set.get("read_many").unwrap();
        let message = retry_message(
            tool,
            Some(&json!({"limit": "x"})),
            &Rejection::Schema,
            RetryContext::First,
            MessageOptions::value_free(4096),
        );
        assert!(
            message.contains("`/paths` is required but missing"),
            "{message}"
        );
        assert!(
            message.contains("`/limit` must be an integer, but a string was sent"),
            "{message}"
        );
    }

    #[test]
    fn only_optional_fields_are_offered_to_be_omitted() {
        let set = tools();
        let tool = set.get("read_many").unwrap();
        let required = json!({"paths": 3});
        let message = retry_message(
            tool,
            Some(&required),
            &Rejection::Schema,
            RetryContext::First,
            MessageOptions::value_free(4096),
        );
        assert!(!message.contains("omit"), "{message}");
        let optional = json!({"paths": ["a"], "limit": "x"});
        let message = retry_message(
            tool,
            Some(&optional),
            &Rejection::Schema,
            RetryContext::First,
            MessageOptions::value_free(4096),
        );
        assert!(
            message.contains("Try: send \"limit\" as an integer, or omit it."),
            "{message}"
        );
    }

    #[test]
    fn truncation_repeat_and_give_up_have_their_own_words() {
        let set = tools();
        let tool = set.get("read_many").unwrap();
        let cut = retry_message(
            tool,
            None,
            &Rejection::Truncated,
            RetryContext::First,
            MessageOptions::value_free(4096),
        );
        assert!(
            cut.contains("cut off") && cut.contains("resend the complete call"),
            "{cut}"
        );
        let again = retry_message(
            tool,
            None,
            &Rejection::Truncated,
            RetryContext::Repeated,
            MessageOptions::value_free(4096),
        );
        assert!(
            again.starts_with("You sent exactly the same invalid call again"),
            "{again}"
        );
        let gave_up = retry_message(
            tool,
            None,
            &Rejection::Truncated,
            RetryContext::GaveUp { repeated: true },
            MessageOptions::value_free(4096),
        );
        assert!(gave_up.contains("stop retrying"), "{gave_up}");
    }

    #[test]
    fn concatenated_objects_get_their_own_words() {
        let set = tools();
        let tool = set.get("read_many").unwrap();
        let message = retry_message(
            tool,
            None,
            &Rejection::Concatenated,
            RetryContext::First,
            MessageOptions::value_free(4096),
        );
        assert!(
            message.contains("several JSON objects")
                && message.contains("one tool call per object"),
            "{message}"
        );
    }

    #[test]
    fn values_are_quoted_only_when_switched_on_and_bounded() {
        let set = tools();
        let tool = set.get("read_many").unwrap();
        let long = "v".repeat(500);
        let value = json!({"paths": long});
        let off = retry_message(
            tool,
            Some(&value),
            &Rejection::Schema,
            RetryContext::First,
            MessageOptions::value_free(4096),
        );
        assert!(!off.contains("vvv"), "{off}");
        let on = MessageOptions {
            max_bytes: 4096,
            include_values: true,
            max_call_errors: crate::limits::MAX_CALL_ERRORS,
        };
        let message = retry_message(
            tool,
            Some(&value),
            &Rejection::Schema,
            RetryContext::First,
            on,
        );
        assert!(message.contains("(received \"vvv"), "{message}");
        assert!(
            !message.contains(&long),
            "the preview is not bounded: {message}"
        );
    }

    #[test]
    fn messages_are_bounded() {
        let set = tools();
        let tool = set.get("read_many").unwrap();
        let message = retry_message(
            tool,
            None,
            &Rejection::Truncated,
            RetryContext::First,
            MessageOptions::value_free(40),
        );
        assert!(message.len() <= 40, "{}", message.len());
    }

    #[test]
    fn unknown_tools_list_the_real_ones() {
        let message = unknown_tool_message("reed", ["read", "write"].into_iter());
        assert_eq!(
            message,
            "Tool `reed` does not exist. Available tools: read, write. Call one of them by its exact name."
        );
    }
}
