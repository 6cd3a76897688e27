//! Chat-template check: renders tool-call turns through real chat templates and checks that
//! recovery reads back exactly the calls each template wrote.
//!
//! A model's chat template (Jinja) defines the markup its tool calls take, so rendering an
//! assistant message that carries calls produces the text a model trained on it emits. For each
//! `*.jinja` file in the directory given (llama.cpp's `models/templates`, fetched by
//! `bench/templates.sh` into a cache outside the repo: they are other people's files), three
//! turns are rendered: one, two and three calls, with strings holding quotes, newlines and
//! unicode, numbers, nested objects and arrays; a fourth has strings that start and end with a
//! line break. The assistant's part is the render of the whole
//! conversation minus the render of the conversation before it (with the generation prompt),
//! and it is scanned as a model's text would be.
//!
//! Each template gets one verdict per turn: `exact` (every call back, same names, same
//! arguments), `missed` (fewer calls, none wrong), `wrong` (a call with another name or other
//! arguments: the one outcome that must never happen), `no-calls` (the template does not write
//! tool calls), or `error` (the template does not render here). The exit status is 1 when any
//! turn is `wrong`.
//!
//! ```text
//! cargo run -p toolmend --example template_check -- DIR [--show NAME]
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)] // a report tool: its output is the report

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use minijinja::value::{Kwargs, ValueKind};
use minijinja::{Environment, Error, ErrorKind, Value};
use serde_json::{Value as Json, json};
use toolmend::ToolSet;
use toolmend::recover::recover_text;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: template_check DIR [--show NAME]");
        return ExitCode::from(2);
    };
    let show = args
        .iter()
        .position(|a| a == "--show")
        .and_then(|i| args.get(i + 1));
    let mut paths: Vec<_> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "jinja"))
            .collect(),
        Err(err) => {
            eprintln!("{dir}: {err}");
            return ExitCode::from(2);
        }
    };
    paths.sort();
    let tools = tools();
    let toolset = ToolSet::from_json(&tools);
    let turns = turns();
    let mut totals = [0usize; 6];
    for path in &paths {
        let name = path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        let verdicts: Vec<Verdict> = turns
            .iter()
            .map(|calls| {
                let shown = show.is_some_and(|s| name.contains(s.as_str()));
                if shown {
                    println!("--- {name}:");
                }
                let mut verdict = check(path, &tools, &toolset, calls, shown);
                if matches!(verdict, Verdict::Wrong { .. }) && LOSSY.contains(&name.as_str()) {
                    verdict = Verdict::Lossy;
                }
                if shown {
                    println!("--- {verdict:?}");
                }
                verdict
            })
            .collect();
        let mut line = format!("{name:<55}");
        for v in &verdicts {
            totals[v.index()] += 1;
            let _ = write!(line, " {:<9}", v.label());
        }
        if let Some(note) = verdicts.iter().find_map(Verdict::note) {
            let _ = write!(line, " {note}");
        }
        println!("{line}");
    }
    println!(
        "\n{} templates × {} turns: exact {}, missed {}, wrong {}, no-calls {}, error {}, lossy {}",
        paths.len(),
        turns.len(),
        totals[0],
        totals[1],
        totals[2],
        totals[3],
        totals[4],
        totals[5]
    );
    if totals[2] > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Templates whose markup cannot carry every value: a mismatch there is `lossy`, not wrong.
/// LFM2.5 writes string arguments between single quotes without escaping them, so a quote or
/// a backslash in the value reads back as something else.
const LOSSY: &[&str] = &["LFM2.5-8B-A1B"];

/// One turn's outcome for one template.
#[derive(Debug)]
enum Verdict {
    Exact,
    Missed { found: usize },
    Wrong { got: Vec<(String, String)> },
    NoCalls,
    Error(String),
    Lossy,
}

impl Verdict {
    fn index(&self) -> usize {
        match self {
            Self::Exact => 0,
            Self::Missed { .. } => 1,
            Self::Wrong { .. } => 2,
            Self::NoCalls => 3,
            Self::Error(_) => 4,
            Self::Lossy => 5,
        }
    }

    fn label(&self) -> &'static str {
        ["exact", "missed", "WRONG", "no-calls", "error", "lossy"][self.index()]
    }

    fn note(&self) -> Option<String> {
        match self {
            Self::Error(e) => Some(
                e.lines()
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take(90)
                    .collect(),
            ),
            Self::Missed { found } => Some(format!("(found {found})")),
            Self::Wrong { got } => Some(format!("got {got:?}")),
            _ => None,
        }
    }
}

/// The declared tools, OpenAI style (templates read `tool.function.name` or `tool.name`).
fn tools() -> Json {
    let f = |name: &str, props: Json| {
        json!({"type": "function", "function": {
            "name": name, "description": format!("The {name} tool."),
            "parameters": {"type": "object", "properties": props}}})
    };
    let string = json!({"type": "string"});
    Json::Array(vec![
        f(
            "read_file",
            json!({"path": string, "limit": {"type": "integer"}}),
        ),
        f(
            "edit_file",
            json!({"path": string, "old_string": string, "new_string": string}),
        ),
        f(
            "create_event",
            json!({"title": string,
                "when": {"type": "object", "properties": {"day": string, "hour": {"type": "integer"},
                    "tz": {"type": "object", "properties": {"name": string, "offset": {"type": "integer"}}}}},
                "attendees": {"type": "array", "items": string}, "priority": {"type": "number"},
                "remind": {"type": "boolean"}}),
        ),
    ])
}

/// The turns: one, two and three calls, then values with line breaks at their ends.
fn turns() -> Vec<Vec<(&'static str, Json)>> {
    let read = ("read_file", json!({"path": "src/main.rs", "limit": 40}));
    let edit = (
        "edit_file",
        json!({"path": "docs/ünïcode ✓.md",
            "old_string": "say \"hi\"\n\tand 'bye'",
            "new_string": "say \"héllo\" — 日本語\nbye\\n"}),
    );
    let event = (
        "create_event",
        json!({"title": "Sync: <team> & co", "when": {"day": "2025-03-01", "hour": 9, "tz": {"name": "UTC", "offset": 0}},
            "attendees": ["ana", "bo"], "priority": 2.5, "remind": true}),
    );
    // A string that starts and ends with a line break (a file's content): XML families that
    // strip the line break a template writes around a value must not take the value's own.
    let lines = (
        "edit_file",
        json!({"path": "a.txt", "old_string": "\nx\n", "new_string": "y\n"}),
    );
    vec![
        vec![read.clone()],
        vec![edit.clone(), read.clone()],
        vec![read, event, edit],
        vec![lines],
    ]
}

/// Renders one turn through the template at `path` and checks what recovery reads back.
fn check(
    path: &Path,
    tools: &Json,
    toolset: &ToolSet,
    calls: &[(&str, Json)],
    show: bool,
) -> Verdict {
    let source = match std::fs::read_to_string(path) {
        // Hugging Face's `{% generation %}` marks the assistant's tokens for training masks
        // and renders its body unchanged.
        Ok(s) => GENERATION_TAG.with(|re| re.replace_all(&s, "").into_owned()),
        Err(e) => return Verdict::Error(e.to_string()),
    };
    let mut env = environment();
    if let Err(e) = env.add_template_owned("t", source) {
        return Verdict::Error(e.to_string());
    }
    let Ok(template) = env.get_template("t") else {
        return Verdict::Error("template not stored".into());
    };
    let before = json!([{"role": "user", "content": "Please do the thing."}]);
    // Templates disagree on an empty assistant content ("" or null) and on the arguments (an
    // object, or its JSON text): the first pair that renders is used.
    let mut last_error = String::new();
    for (content, as_text) in [(json!(""), false), (Json::Null, false), (json!(""), true)] {
        let tool_calls: Vec<Json> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                let arguments = if as_text {
                    Json::String(args.to_string())
                } else {
                    args.clone()
                };
                json!({"id": format!("call{i:04}x"), "type": "function",
                    "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        let mut after = before.clone();
        if let Some(list) = after.as_array_mut() {
            list.push(json!({"role": "assistant", "content": content, "tool_calls": tool_calls}));
        }
        let prompt = render(&template, &before, tools, true);
        let full = render(&template, &after, tools, false);
        let (prompt, full) = match (prompt, full) {
            (Ok(p), Ok(f)) => (p, f),
            (Err(e), _) | (_, Err(e)) => {
                last_error = e;
                continue;
            }
        };
        let mut common = common_prefix(&prompt, &full);
        // A tag both renders start with (`<think>` then `<tool_call>`) is the model's, whole.
        if let Some(open) = full[..common].rfind('<') {
            if !full[open..common].contains('>') {
                common = open;
            }
        }
        let generated = &full[common..];
        if show {
            println!("{generated}");
        }
        return judge(generated, toolset, calls);
    }
    Verdict::Error(last_error)
}

thread_local! {
    static GENERATION_TAG: regex::Regex =
        regex::Regex::new(r"\{%-?\s*(end)?generation\s*-?%\}").expect("a valid pattern");
}

/// The verdict on the generated text `text` for the expected `calls`.
fn judge(text: &str, toolset: &ToolSet, calls: &[(&str, Json)]) -> Verdict {
    if !calls.iter().all(|(name, _)| text.contains(name)) {
        return Verdict::NoCalls;
    }
    let found = recover_text(text, toolset, 16);
    let got: Vec<(String, String)> = found
        .calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect();
    let mut expected = calls.iter();
    let mut next = expected.next();
    // Every recovered call must be the next expected one (or a later one: a missed call
    // before it); anything else is wrong.
    for (name, arguments) in &got {
        let parsed: Option<Json> = serde_json::from_str(arguments).ok();
        loop {
            let Some((want_name, want_args)) = next else {
                return Verdict::Wrong { got };
            };
            next = expected.next();
            if want_name == name && parsed.as_ref() == Some(want_args) {
                break;
            }
            if want_name == name {
                return Verdict::Wrong { got };
            }
        }
    }
    if got.len() == calls.len() {
        Verdict::Exact
    } else {
        Verdict::Missed { found: got.len() }
    }
}

/// The length of the longest common prefix of `a` and `b`, on a char boundary.
fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i)
}

fn render(
    template: &minijinja::Template<'_, '_>,
    messages: &Json,
    tools: &Json,
    generation_prompt: bool,
) -> Result<String, String> {
    template
        .render(minijinja::context! {
            messages => to_value(messages),
            tools => to_value(tools),
            add_generation_prompt => generation_prompt,
            bos_token => "<s>",
            eos_token => "</s>",
        })
        .map_err(|e| format!("{e:#}"))
}

/// `json` as a template value (serde_json's arbitrary-precision numbers would serialize as maps).
fn to_value(json: &Json) -> Value {
    match json {
        Json::Null => Value::from(()),
        Json::Bool(b) => Value::from(*b),
        Json::Number(n) => n
            .as_i64()
            .map_or_else(|| Value::from(n.as_f64().unwrap_or_default()), Value::from),
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::from(items.iter().map(to_value).collect::<Vec<_>>()),
        Json::Object(map) => map.iter().map(|(k, v)| (k.clone(), to_value(v))).collect(),
    }
}

/// A Jinja environment with what Hugging Face's template runtime adds: Python methods,
/// `raise_exception`, `strftime_now` and a `tojson` that writes like Python's `json.dumps`.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    // Hugging Face renders chat templates with both on (and so does llama.cpp).
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    minijinja_contrib::add_to_environment(&mut env);
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function("raise_exception", |msg: String| -> Result<Value, Error> {
        Err(Error::new(ErrorKind::InvalidOperation, msg))
    });
    env.add_function("strftime_now", |_format: String| "26 Jul 2024".to_owned());
    env.add_filter(
        "tojson",
        |value: Value, kwargs: Kwargs| -> Result<String, Error> {
            let indent: Option<usize> = kwargs.get("indent")?;
            let _: Option<bool> = kwargs.get("ensure_ascii")?;
            let _: Option<bool> = kwargs.get("sort_keys")?;
            let _: Option<Value> = kwargs.get("separators")?;
            kwargs.assert_all_used()?;
            let mut out = String::new();
            python_json(&value, indent, 0, &mut out)?;
            Ok(out)
        },
    );
    env
}

/// `value` as Python's `json.dumps(value, ensure_ascii=False, indent=indent)` writes it.
fn python_json(
    value: &Value,
    indent: Option<usize>,
    depth: usize,
    out: &mut String,
) -> Result<(), Error> {
    let newline = |out: &mut String, depth: usize| {
        if let Some(n) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(n * depth));
        }
    };
    let separator = if indent.is_some() { "," } else { ", " };
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => out.push_str(&value.to_string()),
        ValueKind::String => out.push_str(
            &serde_json::to_string(value.as_str().unwrap_or_default()).unwrap_or_default(),
        ),
        ValueKind::Seq | ValueKind::Iterable => {
            out.push('[');
            for (i, item) in value.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(separator);
                }
                newline(out, depth + 1);
                python_json(&item, indent, depth + 1, out)?;
            }
            if value.len() != Some(0) {
                newline(out, depth);
            }
            out.push(']');
        }
        ValueKind::Map => {
            out.push('{');
            let mut empty = true;
            for (i, key) in value.try_iter()?.enumerate() {
                empty = false;
                if i > 0 {
                    out.push_str(separator);
                }
                newline(out, depth + 1);
                out.push_str(&serde_json::to_string(&key.to_string()).unwrap_or_default());
                out.push_str(": ");
                python_json(&value.get_item(&key)?, indent, depth + 1, out)?;
            }
            if !empty {
                newline(out, depth);
            }
            out.push('}');
        }
        _ => out.push_str(&serde_json::to_string(&value.to_string()).unwrap_or_default()),
    }
    Ok(())
}
