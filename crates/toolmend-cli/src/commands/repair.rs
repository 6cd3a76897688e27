//! `toolmend repair`: one call's arguments against a schema or tool (DESIGN §9).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use toolmend::{Mender, MenderOptions, Status, ToolSet};

/// Flags of `toolmend repair`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A JSON Schema, one tool object (OpenAI, flat, Anthropic or MCP), an array of them, or an
    /// MCP `tools/list` result `{"tools": [...]}`.
    #[arg(long)]
    schema: PathBuf,
    /// Which tool of an array to use.
    #[arg(long)]
    tool: Option<String>,
    /// The model id (for tracing).
    #[arg(long, default_value = "")]
    model: String,
    /// Print the call result object instead of the arguments.
    #[arg(long)]
    json: bool,
    /// Quote received values (bounded) in the retry message; messages are value-free otherwise.
    #[arg(long)]
    include_values: bool,
    /// Declare the tool non-mutating, so truncated arguments may be closed and used.
    #[arg(long)]
    read_only: bool,
    /// The raw argument text; read from stdin when absent.
    arguments: Option<String>,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.schema)
        .with_context(|| format!("reading {}", args.schema.display()))?;
    let spec: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not JSON", args.schema.display()))?;
    let (tools_json, name) = tools_from_file(spec, args.tool.as_deref())?;
    let mut tools = ToolSet::from_json(&tools_json);
    // Only the chosen tool matters: another tool's bad schema in the same file does not stop
    // it. The chosen tool's own refused schema makes its call `unvalidated` (exit 1) below.
    if tools.get(&name).is_none() {
        match tools.rejected().first() {
            Some(error) => bail!("{error}"),
            None => bail!("no tool named `{name}` in the file"),
        }
    }
    if args.read_only {
        tools.set_mutating(&name, false);
    }
    let raw = match &args.arguments {
        Some(raw) => raw.clone(),
        None => {
            let mut raw = String::new();
            std::io::stdin()
                .read_to_string(&mut raw)
                .context("reading stdin")?;
            raw
        }
    };
    let options = MenderOptions::default()
        .with_model(args.model.clone())
        .with_values(args.include_values);
    let mender = Mender::with_options(tools, options);
    let call = mender.repair_call(&name, &raw);
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let mut object = serde_json::to_value(&call)?;
        object["arguments_text"] = json!(call.arguments_text);
        writeln!(stdout, "{object}")?;
    } else if call.is_dispatchable() {
        stdout.write_all(call.arguments_text.as_bytes())?;
        // Valid input goes out as the exact bytes; a repaired value gets a line end.
        if call.status != Status::Valid {
            writeln!(stdout)?;
        }
    }
    if !call.is_dispatchable() {
        // `invalid` and `unvalidated` (the tool's schema was refused) both exit 1; the
        // message says which.
        #[allow(clippy::print_stderr)]
        {
            if call.status == Status::Unvalidated
                && let Some(reason) = mender.tools().get(&name).and_then(|t| t.refusal())
            {
                eprintln!("toolmend: the schema of tool `{name}` was refused: {reason}");
            }
            eprintln!("{}", call.error.as_deref().unwrap_or("invalid"));
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads the schema file's forms into a tools array and the name of the tool to use.
fn tools_from_file(spec: Value, tool: Option<&str>) -> anyhow::Result<(Value, String)> {
    let is_tool = |v: &Value| {
        v.get("function").is_some_and(Value::is_object)
            || v.get("input_schema").is_some()
            || v.get("inputSchema").is_some()
            || (v.get("name").is_some_and(Value::is_string) && v.get("parameters").is_some())
    };
    let tool_name = |v: &Value| {
        v.get("function")
            .unwrap_or(v)
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    // An MCP `tools/list` result (or the JSON-RPC response around it) is its tools array.
    let mcp_list = spec
        .as_object()
        .filter(|o| !o.contains_key("name"))
        .and_then(|o| {
            let result = o.get("result").filter(|_| !o.contains_key("tools"));
            result
                .unwrap_or(&spec)
                .get("tools")
                .filter(|t| t.is_array())
        });
    let spec = match mcp_list {
        Some(tools) => tools.clone(),
        None => spec,
    };
    match spec {
        Value::Array(items) => {
            let name = match (tool, items.as_slice()) {
                (Some(name), _) => name.to_owned(),
                (None, [only]) => tool_name(only),
                (None, _) => bail!("the file holds several tools: pick one with --tool"),
            };
            if !items.iter().any(|t| tool_name(t) == name) {
                bail!("no tool named `{name}` in the file");
            }
            Ok((Value::Array(items), name))
        }
        spec if is_tool(&spec) => {
            let name = tool_name(&spec);
            Ok((json!([spec]), name))
        }
        schema => {
            let name = tool.unwrap_or("tool").to_owned();
            Ok((json!([{"name": name, "parameters": schema}]), name))
        }
    }
}
