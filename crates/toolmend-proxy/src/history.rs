//! The request side: tool calls in a request's history that would make the upstream fail are
//! mended before it goes out (`--history repair`, the default; issue #29 §1).
//!
//! The reading is the library's ([`toolmend::Mender::mend_history`]): well-formed arguments
//! keep their bytes, broken ones are mended like a call, unsavable ones become `{}`, content is
//! never touched. A request that needs nothing goes out as the same bytes; one that holds no
//! tool call at all (the marker is not in its bytes) is not even parsed, and one whose calls
//! are all well-formed is known from its bytes ([`clean`]), without a tree.
//!
//! It also reads a request's history of calls for the storm window ([`history_of`]), for the
//! buffered routes and the streams alike.

use std::sync::LazyLock;

use bytes::Bytes;
use memchr::memmem::Finder;
use toolmend::Mender;
use toolmend::history::WireApi;

use crate::error::Api;

mod clean;

/// The text every request with an assistant tool call in its history holds.
fn marker(api: Api) -> &'static [u8] {
    match api {
        Api::OpenAi | Api::Ollama => b"\"tool_calls\"",
        Api::Responses => b"\"function_call\"",
        Api::Anthropic => b"\"tool_use\"",
    }
}

/// The searchers for the three markers and for `\u00`, built once: building one per search
/// cost more than the search itself on a small body (issue #29 §3).
struct Finders {
    tool_calls: Finder<'static>,
    function_call: Finder<'static>,
    tool_use: Finder<'static>,
    escape: Finder<'static>,
}

static FINDERS: LazyLock<Finders> = LazyLock::new(|| Finders {
    tool_calls: Finder::new(marker(Api::OpenAi)),
    function_call: Finder::new(marker(Api::Responses)),
    tool_use: Finder::new(marker(Api::Anthropic)),
    escape: Finder::new(b"\\u00"),
});

/// Whether a request body may hold an assistant tool call in its history: its marker is in
/// the bytes, or the body escapes an ASCII character (`\u0000`–`\u007f`: a key could be
/// spelled that way). When not, there is nothing to mend or replay, and the body is not parsed.
pub(crate) fn holds_calls(api: Api, body: &[u8]) -> bool {
    let finders = &*FINDERS;
    let marker = match api {
        Api::OpenAi | Api::Ollama => &finders.tool_calls,
        Api::Responses => &finders.function_call,
        Api::Anthropic => &finders.tool_use,
    };
    marker.find(body).is_some()
        || finders
            .escape
            .find_iter(body)
            .any(|at| body.get(at + 4).is_some_and(|b| (b'0'..=b'7').contains(b)))
}

fn wire(api: Api) -> WireApi {
    match api {
        Api::OpenAi => WireApi::OpenAiChat,
        Api::Responses => WireApi::OpenAiResponses,
        Api::Anthropic => WireApi::Anthropic,
        Api::Ollama => WireApi::Ollama,
    }
}

/// The request body `bytes` to send upstream: its history's broken tool-call arguments
/// mended (each change counted in `toolmend_history_repairs_total{route,kind}` and logged at
/// info), or `bytes` itself when none needs it.
pub(crate) fn mend_request(api: Api, route: &'static str, mender: &Mender, bytes: &Bytes) -> Bytes {
    if !holds_calls(api, bytes) {
        return bytes.clone();
    }
    // A clean history (the common case: calls the proxy already mended on their way out) is
    // known from the bytes; the tree is built only for one that may need a change.
    if std::str::from_utf8(bytes).is_ok_and(|text| clean::check(api, text).is_ok()) {
        return bytes.clone();
    }
    let Ok(mut body) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return bytes.clone();
    };
    let repairs = mender.mend_history(wire(api), &mut body);
    if repairs.is_empty() {
        return bytes.clone();
    }
    for repair in &repairs {
        tracing::info!(
            route,
            path = %repair.path,
            tool = ?short(&repair.tool),
            kind = repair.kind.name(),
            "history tool call mended before forwarding"
        );
        crate::metrics::count_history_repair(route, repair.kind.name());
    }
    serde_json::to_vec(&body).map_or_else(|_| bytes.clone(), Bytes::from)
}

/// A client-chosen name for a log line (escaped by `?`): its first 64 characters.
fn short(name: &str) -> String {
    name.chars().take(64).collect()
}

/// The history of a request's body, read only when a call needs the storm window (the body is
/// shared, not copied).
pub(crate) fn history_of(
    api: Api,
    request: Bytes,
) -> impl FnOnce() -> Vec<Vec<toolmend::ToolCall>> {
    move || {
        // No assistant call in the whole body: no history to read.
        if !holds_calls(api, &request) {
            return Vec::new();
        }
        let view = crate::body::RequestView::read(&request, |_| None);
        let raw = match api {
            Api::Responses => view.and_then(|v| v.input),
            _ => view.and_then(|v| v.messages),
        };
        let Some(value) = raw.and_then(|m| serde_json::from_str(m).ok()) else {
            return Vec::new();
        };
        match api {
            // Ollama's `messages` are Chat-shaped (arguments as objects, read as their JSON).
            Api::OpenAi | Api::Ollama => crate::routes::openai::history(&value),
            Api::Anthropic => crate::routes::anthropic::history(&value),
            Api::Responses => crate::routes::responses::history(&value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_marker_or_an_escaped_ascii_key_is_read() {
        assert!(holds_calls(
            Api::OpenAi,
            br#"{"messages":[{"tool_calls":[]}]}"#
        ));
        assert!(holds_calls(
            Api::OpenAi,
            br#"{"messages":[{"tool\u005fcalls":[]}]}"#
        ));
        // Escaped non-ASCII text (`é`) spells no key of ours.
        assert!(!holds_calls(
            Api::OpenAi,
            br#"{"messages":[{"content":"caf\u00e9"}]}"#
        ));
        assert!(!holds_calls(
            Api::Anthropic,
            br#"{"messages":[{"tool_calls":[]}]}"#
        ));
    }
}
