//! `toolmend mcp -- <server command…>`: a stdio MCP relay that repairs `tools/call` (#14 §3).
//!
//! The MCP client starts `toolmend mcp` as if it were the server; toolmend starts the real
//! server as its child and relays newline-delimited JSON-RPC both ways. Every message passes
//! through unchanged (the same bytes) except:
//!
//! - the server's `tools/list` results (every page; a fresh list after
//!   `notifications/tools/list_changed`) are read into a [`ToolSet`];
//! - a client `tools/call` is mended against that tool's `inputSchema` before the server sees
//!   it. A valid call goes out as the same bytes; a repaired call has only its `arguments` (and
//!   a repaired `name`) replaced; a call that cannot be saved, or the storm breaker's repeat, is
//!   answered by toolmend itself with a tool result `isError: true` whose text is the retry (or
//!   guard) message, and the server never sees it;
//! - the server's result for a repaired call gets the repair notes appended to its `content`
//!   as one text item.
//!
//! What is not mended passes through: batches (JSON-RPC arrays), calls of tools the relay has
//! not seen listed (or while a `list_changed` refresh is pending), calls without `arguments`,
//! calls of a tool whose schema toolmend refused, lines that are not JSON. A line longer than
//! `--max-line-bytes` is relayed as it comes, uninspected, and said so on stderr. The server's
//! stderr is the relay's stderr; the server's exit code is the relay's.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use toolmend::{AssistantTurn, Mender, MenderOptions, Session, Status, ToolCall, ToolSet};

/// Default bound on one JSON-RPC line: larger lines are relayed uninspected.
const DEFAULT_MAX_LINE_BYTES: usize = 16 << 20;
/// Most requests awaiting an answer the relay keeps track of (tools/list pages, repaired calls);
/// past it the oldest entries are forgotten (a note is then not appended: nothing else is lost).
const MAX_TRACKED_REQUESTS: usize = 4096;
/// Most tools kept from a paginated list; later pages add none past it.
const MAX_LISTED_TOOLS: usize = 10_000;

/// Flags of `toolmend mcp`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Longest JSON-RPC line inspected, in bytes; a longer one is relayed as it is, uninspected.
    #[arg(long, default_value_t = DEFAULT_MAX_LINE_BYTES)]
    max_line_bytes: usize,
    /// Do not suppress repeated identical calls (the storm breaker: the 3rd identical call within
    /// the last 6 is answered with a guard message instead of being run).
    #[arg(long)]
    no_storm_guard: bool,
    /// Retry messages per identical invalid call before giving up (0–5, default 1).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=5))]
    max_reprompts: Option<u8>,
    /// Quote received values (bounded) in retry messages; messages are value-free otherwise.
    #[arg(long)]
    include_values: bool,
    /// The MCP server command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "SERVER COMMAND")]
    command: Vec<OsString>,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let (program, rest) = args.command.split_first().context("no server command")?;
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", program.to_string_lossy()))?;
    let server_in = child.stdin.take().context("the server's stdin")?;
    let server_out = child.stdout.take().context("the server's stdout")?;
    let relay = Arc::new(Mutex::new(Relay::new(args)));
    let max = args.max_line_bytes.max(1);

    let upstream = Arc::clone(&relay);
    std::thread::Builder::new()
        .name("mcp-client-to-server".into())
        .spawn(move || client_to_server(&upstream, server_in, max))
        .context("starting the relay thread")?;
    server_to_client(&relay, server_out, max);
    Ok(exit_code(&mut child))
}

/// The server's exit code (128 + the signal when a signal ended it), as the relay's.
fn exit_code(child: &mut Child) -> ExitCode {
    let Ok(status) = child.wait() else {
        return ExitCode::from(1);
    };
    if let Some(code) = status.code() {
        return ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1));
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return ExitCode::from(u8::try_from((128 + signal) & 0xff).unwrap_or(1));
        }
    }
    ExitCode::from(1)
}

/// Client → server: `tools/call` mended, everything else as it came. Ends at the client's EOF,
/// closing the server's stdin (the MCP way to ask a stdio server to exit).
fn client_to_server(relay: &Mutex<Relay>, mut server: ChildStdin, max: usize) {
    let stdin = io::stdin().lock();
    let mut server_gone = false;
    let result = read_lines(stdin, max, |piece| {
        if server_gone {
            return Ok(());
        }
        let outcome = match piece {
            Piece::Line(line) => {
                let action = lock(relay).on_client_line(line);
                match action {
                    Action::Forward => server.write_all(line),
                    Action::Replace(bytes) => server.write_all(&bytes),
                    Action::Answer(bytes) => {
                        write_client(&bytes);
                        Ok(())
                    }
                }
            }
            Piece::Oversized { chunk, first } => {
                if first {
                    warn(&format!(
                        "a client message longer than {max} bytes is relayed uninspected"
                    ));
                }
                server.write_all(chunk)
            }
        };
        if let Err(error) = outcome {
            // The message could not be delivered: say so, and drop the rest (the server is
            // gone; the relay ends with its exit code).
            warn(&format!(
                "the server no longer reads its input ({error}); client messages from here on \
                 are not delivered"
            ));
            server_gone = true;
        }
        Ok(())
    });
    if let Err(error) = result {
        warn(&format!("reading the client: {error}"));
    }
    drop(server);
}

/// Server → client: every line as it came, `tools/list` results read, notes appended.
fn server_to_client(relay: &Mutex<Relay>, server: impl Read, max: usize) {
    let mut held: Option<io::StdoutLock<'static>> = None;
    let mut client_gone = false;
    let result = read_lines(server, max, |piece| {
        let bytes: Cow<'_, [u8]> = match piece {
            Piece::Line(line) => match lock(relay).on_server_line(line) {
                Some(replaced) => Cow::Owned(replaced),
                None => Cow::Borrowed(line),
            },
            Piece::Oversized { chunk, first } => {
                if first {
                    warn(&format!(
                        "a server message longer than {max} bytes is relayed uninspected"
                    ));
                }
                Cow::Borrowed(chunk)
            }
        };
        if client_gone {
            // Keep draining, so the server never blocks on a full pipe while it shuts down.
            return Ok(());
        }
        // One line is written under one lock: the relay's own answers never land inside it.
        let out = held.get_or_insert_with(|| io::stdout().lock());
        let written = out.write_all(&bytes).and_then(|()| out.flush());
        if bytes.last() == Some(&b'\n') {
            held = None;
        }
        if let Err(error) = written {
            warn(&format!(
                "the client no longer reads the output ({error}); server messages from here on \
                 are dropped"
            ));
            client_gone = true;
            held = None;
        }
        Ok(())
    });
    drop(held);
    if let Err(error) = result {
        warn(&format!("reading the server: {error}"));
    }
}

/// Writes one whole message of the relay's own to the client.
fn write_client(bytes: &[u8]) {
    let mut out = io::stdout().lock();
    if let Err(error) = out.write_all(bytes).and_then(|()| out.flush()) {
        warn(&format!("answering the client: {error}"));
    }
}

fn warn(message: &str) {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("toolmend mcp: {message}");
    }
}

fn lock(relay: &Mutex<Relay>) -> std::sync::MutexGuard<'_, Relay> {
    relay.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A piece of the byte stream: a whole line (with its `\n`, if the stream did not end first),
/// or part of a line over the size bound.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    Line(&'a [u8]),
    Oversized { chunk: &'a [u8], first: bool },
}

/// Reads `input` into lines of at most `max` bytes; a longer line comes as [`Piece::Oversized`]
/// chunks (the first holding the `max` bytes read so far, the last ending at its `\n`), so it is
/// never held whole in memory and never lost.
fn read_lines(
    input: impl Read,
    max: usize,
    mut each: impl FnMut(Piece<'_>) -> io::Result<()>,
) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(64 << 10, input);
    let mut line: Vec<u8> = Vec::new();
    let mut oversized = false;
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if buffer.is_empty() {
            // End of stream: a last line without `\n` still goes out.
            if !line.is_empty() {
                each(Piece::Line(&line))?;
            }
            return Ok(());
        }
        let (take, complete) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        if oversized {
            each(Piece::Oversized {
                chunk: &buffer[..take],
                first: false,
            })?;
            oversized = !complete;
        } else if line.is_empty() && complete && take <= max {
            // The common case: the whole line is in the buffer; no copy.
            each(Piece::Line(&buffer[..take]))?;
        } else if line.len() + take > max {
            line.extend_from_slice(&buffer[..take]);
            each(Piece::Oversized {
                chunk: &line,
                first: true,
            })?;
            line.clear();
            oversized = !complete;
        } else {
            line.extend_from_slice(&buffer[..take]);
            if complete {
                each(Piece::Line(&line))?;
                line.clear();
            }
        }
        reader.consume(take);
    }
}

/// What to do with a client message.
#[derive(Debug, PartialEq, Eq)]
enum Action {
    /// Send it to the server as it came.
    Forward,
    /// Send these bytes to the server instead.
    Replace(Vec<u8>),
    /// Do not send it: answer the client with these bytes.
    Answer(Vec<u8>),
}

/// A JSON-RPC message, borrowed from its line: only what the relay reads.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: &'a RawValue,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ListParams<'a> {
    #[serde(borrow, default)]
    cursor: Option<&'a RawValue>,
}

/// The relay's state, shared by both directions.
#[derive(Debug)]
struct Relay {
    options: MenderOptions,
    /// The tools listed so far (pages of one listing accumulate).
    listed: Vec<Value>,
    /// The compiled list; `None` before the first list and after `list_changed` until the fresh
    /// list arrives (calls then pass through unmended: the schemas may be stale).
    mender: Option<Mender>,
    session: Session,
    /// Client `tools/list` requests awaiting their result: id → whether it is a first page.
    list_requests: HashMap<String, bool>,
    /// Repaired calls awaiting their result: id → the notes to append.
    notes: HashMap<String, Vec<String>>,
}

impl Relay {
    fn new(args: &Args) -> Self {
        let options = MenderOptions::default().with_values(args.include_values);
        let mut session = if args.no_storm_guard {
            // A window of one call never holds two identical calls.
            Session::with_limits(1, 2, toolmend::turn::DEFAULT_MAX_REPROMPTS)
        } else {
            Session::new()
        };
        if let Some(n) = args.max_reprompts {
            session.set_max_reprompts(n);
        }
        Self {
            options,
            listed: Vec::new(),
            mender: None,
            session,
            list_requests: HashMap::new(),
            notes: HashMap::new(),
        }
    }

    /// Decides what becomes of one client line.
    fn on_client_line(&mut self, line: &[u8]) -> Action {
        // Only `tools/list` and `tools/call` requests are read; the rest is never parsed.
        if memchr::memmem::find(line, b"tools/").is_none() {
            return Action::Forward;
        }
        let Ok(message) = serde_json::from_slice::<Message<'_>>(line) else {
            return Action::Forward;
        };
        let (Some(method), Some(id)) = (message.method.as_deref(), message.id) else {
            return Action::Forward;
        };
        match method {
            "tools/list" => {
                let first = message
                    .params
                    .and_then(|p| serde_json::from_str::<ListParams<'_>>(p.get()).ok())
                    .is_none_or(|p| p.cursor.is_none_or(|c| c.get() == "null"));
                bounded_insert(&mut self.list_requests, id.get().to_owned(), first);
                Action::Forward
            }
            "tools/call" => self.mend_call(line, id, message.params),
            _ => Action::Forward,
        }
    }

    /// Mends one `tools/call` request.
    fn mend_call(&mut self, line: &[u8], id: &RawValue, params: Option<&RawValue>) -> Action {
        let Some(mender) = &self.mender else {
            return Action::Forward;
        };
        let Some(params) =
            params.and_then(|p| serde_json::from_str::<CallParams<'_>>(p.get()).ok())
        else {
            return Action::Forward;
        };
        let (Ok(name), Some(arguments)) = (
            serde_json::from_str::<String>(params.name.get()),
            params.arguments,
        ) else {
            return Action::Forward;
        };
        let mut turn = AssistantTurn::default();
        turn.tool_calls = vec![ToolCall::new("", name.as_str(), arguments.get())];
        let result = mender.run_turn(&mut self.session, &turn);
        let [call] = result.calls.as_slice() else {
            // Split into several calls (`{…}{…}` in a string): one request cannot carry them.
            return Action::Forward;
        };
        let Some(tool) = mender.tools().get(&call.name) else {
            // A tool the relay has not seen listed: the server decides.
            return Action::Forward;
        };
        match call.status {
            Status::Valid => Action::Forward,
            Status::Repaired | Status::Recovered => {
                let mut spans = vec![(arguments.get(), call.arguments_text.clone())];
                if *call.name != *name {
                    spans.push((params.name.get(), Value::from(tool.name()).to_string()));
                }
                let replaced = splice(line, spans);
                if !call.notes.is_empty() {
                    bounded_insert(&mut self.notes, id.get().to_owned(), call.notes.clone());
                }
                Action::Replace(replaced)
            }
            Status::Invalid | Status::Suppressed => {
                let text = call
                    .error
                    .as_deref()
                    .unwrap_or("The tool call was rejected.");
                Action::Answer(tool_error(id, text))
            }
            // The tool's schema was refused: toolmend cannot judge its calls; the server does.
            _ => Action::Forward,
        }
    }

    /// Reads one server line; returns the bytes to send instead, if any.
    fn on_server_line(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        let watching = !self.list_requests.is_empty() || !self.notes.is_empty();
        if !watching && memchr::memmem::find(line, b"list_changed").is_none() {
            return None;
        }
        let message = serde_json::from_slice::<Message<'_>>(line).ok()?;
        match (message.method.as_deref(), message.id) {
            (Some("notifications/tools/list_changed"), _) => {
                // The schemas may have changed: mend nothing until the client lists again.
                self.mender = None;
                None
            }
            // A response (a server request has a method and its own id space).
            (None, Some(id)) => {
                let key = id.get();
                if let Some(first) = self.list_requests.remove(key) {
                    if let Some(result) = message.result {
                        self.read_list(result, first);
                    }
                    return None;
                }
                let notes = self.notes.remove(key)?;
                append_notes(line, &notes)
            }
            _ => None,
        }
    }

    /// Reads a `tools/list` result page into the tool set.
    fn read_list(&mut self, result: &RawValue, first: bool) {
        #[derive(Deserialize)]
        struct ListResult {
            tools: Vec<Value>,
        }
        let Ok(page) = serde_json::from_str::<ListResult>(result.get()) else {
            return;
        };
        if first {
            self.listed.clear();
        }
        let room = MAX_LISTED_TOOLS.saturating_sub(self.listed.len());
        self.listed.extend(page.tools.into_iter().take(room));
        let tools = ToolSet::from_json(&Value::Array(self.listed.clone()));
        for error in tools.rejected() {
            warn(&format!("{error}; its calls are relayed unmended"));
        }
        self.mender = Some(Mender::with_options(tools, self.options.clone()));
    }
}

/// `line` with each span (a slice of it) replaced by its text.
fn splice(line: &[u8], mut spans: Vec<(&str, String)>) -> Vec<u8> {
    let start_of = |s: &str| s.as_ptr() as usize - line.as_ptr() as usize;
    spans.sort_by_key(|(span, _)| start_of(span));
    let mut out = Vec::with_capacity(line.len() + 64);
    let mut at = 0;
    for (span, text) in spans {
        let start = start_of(span);
        out.extend_from_slice(&line[at..start]);
        out.extend_from_slice(text.as_bytes());
        at = start + span.len();
    }
    out.extend_from_slice(&line[at..]);
    out
}

/// The relay's own answer to a call: an MCP tool result with `isError: true`.
fn tool_error(id: &RawValue, text: &str) -> Vec<u8> {
    let result = json!({"content": [{"type": "text", "text": text}], "isError": true});
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{result}}}\n",
        id.get()
    )
    .into_bytes()
}

/// The response with the notes appended to `result.content` as one text item; `None` when it
/// has no such array (an error response, say): then it goes out as it came.
fn append_notes(line: &[u8], notes: &[String]) -> Option<Vec<u8>> {
    let mut response: Value = serde_json::from_slice(line).ok()?;
    let content = response
        .get_mut("result")?
        .get_mut("content")?
        .as_array_mut()?;
    content.push(json!({"type": "text", "text": notes.join("\n")}));
    let mut out = serde_json::to_vec(&response).ok()?;
    out.push(b'\n');
    Some(out)
}

/// Inserts, first forgetting everything when the map is full (a bound, not a cache: the
/// entries lost only cost a note or a refresh).
fn bounded_insert<V>(map: &mut HashMap<String, V>, key: String, value: V) {
    if map.len() >= MAX_TRACKED_REQUESTS {
        map.clear();
    }
    map.insert(key, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relay() -> Relay {
        Relay::new(&Args {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            no_storm_guard: false,
            max_reprompts: None,
            include_values: false,
            command: vec!["server".into()],
        })
    }

    const LIST: &str = r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"read_many","inputSchema":{"type":"object","required":["paths"],"properties":{"paths":{"type":"array","items":{"type":"string"}}}}}]}}
"#;

    fn listed() -> Relay {
        let mut relay = relay();
        let list = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}\n";
        assert_eq!(relay.on_client_line(list), Action::Forward);
        assert_eq!(relay.on_server_line(LIST.as_bytes()), None);
        relay
    }

    fn call(arguments: &str) -> Vec<u8> {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\",\"params\":{{\"name\":\"read_many\",\"arguments\":{arguments},\"_meta\":{{\"progressToken\":1}}}}}}\n"
        )
        .into_bytes()
    }

    #[test]
    fn nothing_is_mended_before_a_list() {
        assert_eq!(
            relay().on_client_line(&call(r#"{"paths":"a"}"#)),
            Action::Forward
        );
    }

    #[test]
    fn a_valid_call_is_forwarded_as_it_came() {
        let mut relay = listed();
        assert_eq!(
            relay.on_client_line(&call(r#"{ "paths" : ["a"] }"#)),
            Action::Forward
        );
    }

    #[test]
    fn a_repaired_call_changes_only_its_arguments_and_gets_notes() {
        let mut relay = listed();
        let Action::Replace(bytes) = relay.on_client_line(&call(r#"{"paths": "[\"a\", \"b\"]"}"#))
        else {
            panic!("not replaced")
        };
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            String::from_utf8(call(r#"{"paths":["a","b"]}"#)).unwrap()
        );
        let response = b"{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n";
        let out: Value = serde_json::from_slice(&relay.on_server_line(response).unwrap()).unwrap();
        let content = out["result"]["content"].as_array().unwrap();
        assert_eq!(content.len(), 2);
        assert_eq!(content[0]["text"], "ok");
        assert!(
            content[1]["text"]
                .as_str()
                .unwrap()
                .starts_with("Note: `paths` was sent as a string holding JSON"),
            "{content:?}"
        );
        // Only once: the next response with that id is not touched.
        assert_eq!(relay.on_server_line(response), None);
    }

    #[test]
    fn a_hopeless_call_is_answered_with_is_error() {
        let mut relay = listed();
        let Action::Answer(bytes) = relay.on_client_line(&call(r#"{"limit": 3}"#)) else {
            panic!("not answered")
        };
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(answer["id"], "c1");
        assert_eq!(answer["result"]["isError"], true);
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("`/paths` is required but missing"), "{text}");
        assert!(bytes.ends_with(b"}\n") && !bytes[..bytes.len() - 1].contains(&b'\n'));
    }

    #[test]
    fn the_third_identical_call_is_answered_with_the_guard_message() {
        let mut relay = listed();
        let valid = call(r#"{"paths":["a"]}"#);
        assert_eq!(relay.on_client_line(&valid), Action::Forward);
        assert_eq!(relay.on_client_line(&valid), Action::Forward);
        let Action::Answer(bytes) = relay.on_client_line(&valid) else {
            panic!("not suppressed")
        };
        assert!(String::from_utf8(bytes).unwrap().contains("was not run"));
    }

    #[test]
    fn list_changed_stops_mending_until_the_fresh_list() {
        let mut relay = listed();
        let changed = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n";
        assert_eq!(relay.on_server_line(changed), None);
        let bad = call(r#"{"paths":"a"}"#);
        assert_eq!(relay.on_client_line(&bad), Action::Forward);
        let list = b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\",\"params\":{}}\n";
        assert_eq!(relay.on_client_line(list), Action::Forward);
        assert_eq!(
            relay.on_server_line(LIST.replace(":7,", ":8,").as_bytes()),
            None
        );
        assert!(matches!(relay.on_client_line(&bad), Action::Replace(_)));
    }

    #[test]
    fn pages_accumulate_and_a_first_page_starts_over() {
        let mut relay = relay();
        let mut page = |id: u32, cursor: &str, tool: &str| {
            let request = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\",\"params\":{cursor}}}\n"
            );
            assert_eq!(relay.on_client_line(request.as_bytes()), Action::Forward);
            let response = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[{{\"name\":\"{tool}\",\"inputSchema\":{{\"type\":\"object\"}}}}]}}}}\n"
            );
            assert_eq!(relay.on_server_line(response.as_bytes()), None);
            let mender = relay.mender.as_ref().unwrap();
            mender
                .tools()
                .iter()
                .map(|t| t.name().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(page(1, "{}", "a"), ["a"]);
        assert_eq!(page(2, r#"{"cursor":"x"}"#, "b"), ["a", "b"]);
        assert_eq!(page(3, "null", "c"), ["c"]);
    }

    #[test]
    fn a_server_request_with_a_clashing_id_is_not_read_as_a_list() {
        let mut relay = relay();
        let list = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}\n";
        relay.on_client_line(list);
        let request =
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\",\"result\":{\"tools\":[]}}\n";
        assert_eq!(relay.on_server_line(request), None);
        assert!(relay.mender.is_none());
        assert!(relay.list_requests.contains_key("7"));
    }

    #[test]
    fn other_messages_and_batches_pass_through() {
        let mut relay = listed();
        for line in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n"[..],
            b"[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"read_many\",\"arguments\":{}}}]\n",
            b"not json tools/call\n",
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"unknown\",\"arguments\":{}}}\n",
            b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"read_many\"}}\n",
        ] {
            assert_eq!(
                relay.on_client_line(line),
                Action::Forward,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn lines_over_the_bound_come_as_chunks_and_nothing_is_lost() {
        let input = b"short\nthis line is too long\nok\nlast";
        let mut pieces = Vec::new();
        read_lines(&input[..], 8, |piece| {
            pieces.push(match piece {
                Piece::Line(line) => format!("L:{}", String::from_utf8_lossy(line)),
                Piece::Oversized { chunk, first } => {
                    format!("O{}:{}", u8::from(first), String::from_utf8_lossy(chunk))
                }
            });
            Ok(())
        })
        .unwrap();
        let all: String = pieces
            .iter()
            .map(|p| &p[p.find(':').unwrap() + 1..])
            .collect();
        assert_eq!(all.as_bytes(), input);
        assert_eq!(pieces[0], "L:short\n");
        assert!(pieces[1].starts_with("O1:"), "{pieces:?}");
        assert_eq!(pieces[pieces.len() - 2], "L:ok\n");
        assert_eq!(pieces[pieces.len() - 1], "L:last");
    }
}
