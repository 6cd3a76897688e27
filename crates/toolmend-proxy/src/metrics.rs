//! Prometheus counters and histograms through the `metrics` facade.

use std::sync::OnceLock;
use std::time::Duration;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use toolmend::{CallResult, Status};

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// How often the recorder's pending histogram samples are folded into their buckets.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(1);

/// Installs the Prometheus recorder once per process; `None` when another recorder was
/// installed first (then `/metrics` reports that).
///
/// The recorder keeps every histogram sample until something drains it: a `/metrics` scrape,
/// or its upkeep. `build_recorder` starts no upkeep, so without a scraper each request left its
/// samples behind (one per streamed chunk: ~1 KB per 50-event stream, for as long as the
/// process ran). A thread of its own runs the upkeep every [`UPKEEP_INTERVAL`], for the
/// process's life like the recorder, whatever runtime (or none) the router is served on.
pub(crate) fn handle() -> Option<PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets(&[
                    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.05, 0.1,
                    0.5, 1.0, 5.0, 30.0, 120.0,
                ])
                .ok()?
                .build_recorder();
            let handle = recorder.handle();
            metrics::set_global_recorder(recorder).ok()?;
            let upkeep = handle.clone();
            let started = std::thread::Builder::new()
                .name("toolmend-metrics".into())
                .spawn(move || {
                    loop {
                        std::thread::sleep(UPKEEP_INTERVAL);
                        upkeep.run_upkeep();
                    }
                });
            if let Err(error) = started {
                tracing::warn!(%error, "no metrics upkeep thread: histograms grow until scraped");
            }
            Some(handle)
        })
        .clone()
}

/// The label of a call status.
pub(crate) fn status_label(status: Status) -> &'static str {
    match status {
        Status::Valid => "valid",
        Status::Repaired => "repaired",
        Status::Recovered => "recovered",
        Status::Invalid => "invalid",
        Status::Suppressed => "suppressed",
        _ => "other",
    }
}

/// Distinct models the call counters name; later ones are counted as `other`.
const MAX_MODEL_LABELS: usize = 64;
/// Distinct tool names the call counters name; later ones are counted as `other`.
const MAX_TOOL_LABELS: usize = 512;
/// Longest label value kept (longer ones are cut at a character boundary).
const MAX_LABEL_BYTES: usize = 128;

/// The values a label has taken, up to a bound.
///
/// Models and tool names come from strangers (the request's `model` and `tools`, and the name a
/// model gave a call), and every distinct label value is a series the recorder keeps for the
/// life of the process: unbounded, a client sending a new model or tool name with each request
/// grows the proxy without end. Past the bound a new value is reported as `other`.
#[derive(Debug)]
struct BoundedLabel {
    max: usize,
    seen: std::sync::Mutex<std::collections::HashSet<Box<str>>>,
}

impl BoundedLabel {
    fn new(max: usize) -> Self {
        Self {
            max,
            seen: std::sync::Mutex::new(std::collections::HashSet::new()),
        }
    }

    /// The label for `value`: itself (cut to [`MAX_LABEL_BYTES`]) if seen before or within
    /// the bound, else `other`.
    fn label(&self, value: &str) -> String {
        let value = cut(value);
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.contains(value) || (seen.len() < self.max && seen.insert(value.into())) {
            value.to_owned()
        } else {
            "other".to_owned()
        }
    }
}

/// `value` cut to [`MAX_LABEL_BYTES`] at a character boundary.
fn cut(value: &str) -> &str {
    let mut end = value.len().min(MAX_LABEL_BYTES);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    &value[..end]
}

static MODELS: std::sync::LazyLock<BoundedLabel> =
    std::sync::LazyLock::new(|| BoundedLabel::new(MAX_MODEL_LABELS));
static TOOLS: std::sync::LazyLock<BoundedLabel> =
    std::sync::LazyLock::new(|| BoundedLabel::new(MAX_TOOL_LABELS));

/// The status labels of `toolmend_calls_total`, in the order of [`status_index`].
const STATUSES: [&str; 6] = [
    "valid",
    "repaired",
    "recovered",
    "invalid",
    "suppressed",
    "other",
];

/// The index of a status's label in [`STATUSES`].
fn status_index(status: Status) -> usize {
    let label = status_label(status);
    STATUSES.iter().position(|s| *s == label).unwrap_or(5)
}

/// The `toolmend_calls_total` handles of one model and tool, one per status, each looked up
/// in the recorder the first time it counts.
#[derive(Default)]
struct CallCounters([OnceLock<metrics::Counter>; STATUSES.len()]);

/// Call counter handles by model, then tool: the pairs whose labels are their own values
/// (within the labels' bounds), so the map is bounded as the recorder's series are.
///
/// `counter!` with labels took both labels' mutexes, built three label `String`s and a key,
/// and hashed it into the registry for every call (issue #29 §3); a known pair now takes one
/// shared read lock and no allocation.
type CallCache = std::collections::HashMap<
    Box<str>,
    std::collections::HashMap<Box<str>, std::sync::Arc<CallCounters>>,
>;

static CALLS: std::sync::LazyLock<std::sync::RwLock<CallCache>> =
    std::sync::LazyLock::new(Default::default);

/// The cached handles of `model` and `tool` (both already cut), made when both labels are
/// their own values; `None` when either is counted as `other`.
fn call_counters(model: &str, tool: &str) -> Option<std::sync::Arc<CallCounters>> {
    let cached = CALLS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(model)
        .and_then(|tools| tools.get(tool))
        .cloned();
    if cached.is_some() {
        return cached;
    }
    if MODELS.label(model) != model || TOOLS.label(tool) != tool {
        return None;
    }
    let _ = handle();
    let mut calls = CALLS.write().unwrap_or_else(|e| e.into_inner());
    let counters = calls
        .entry(model.into())
        .or_default()
        .entry(tool.into())
        .or_default();
    Some(std::sync::Arc::clone(counters))
}

/// Counts one finished call and its repairs.
pub(crate) fn count_call(model: &str, call: &CallResult) {
    let (model, tool) = (cut(model), cut(&call.name));
    let status = call.status;
    match call_counters(model, tool) {
        Some(counters) => counters.0[status_index(status)]
            .get_or_init(|| {
                metrics::counter!("toolmend_calls_total", "model" => model.to_owned(),
                    "tool" => tool.to_owned(), "status" => status_label(status))
            })
            .increment(1),
        None => metrics::counter!("toolmend_calls_total", "model" => MODELS.label(model),
            "tool" => TOOLS.label(tool), "status" => status_label(status))
        .increment(1),
    }
    if call.repairs.is_empty() {
        return;
    }
    let model = MODELS.label(model);
    let tool = TOOLS.label(tool);
    for repair in &call.repairs {
        metrics::counter!("toolmend_repairs_total", "model" => model.clone(),
            "tool" => tool.clone(), "kind" => repair.kind.name())
        .increment(1);
    }
}

/// Counts one tool call of a request's history mended before forwarding: `kind` is
/// `repaired` or `emptied` (sent as `{}`: it could not be saved, and as sent it would have
/// failed the request).
pub(crate) fn count_history_repair(route: &'static str, kind: &'static str) {
    metrics::counter!("toolmend_history_repairs_total", "route" => route, "kind" => kind)
        .increment(1);
}

/// Counts a response body the proxy passed on without reading it (and logs why): `reason` is
/// one of a fixed set of labels, e.g. `content_encoding` (compressed in a way it cannot
/// decode), `decode_error`, `too_large`, `not_json`, `upstream_cut`.
pub(crate) fn count_uninspected(route: &'static str, reason: &'static str) {
    tracing::info!(route, reason, "response passed on without repair");
    metrics::counter!("toolmend_uninspected_total", "route" => route, "reason" => reason)
        .increment(1);
}

/// Counts one re-prompt and its outcome: `fixed` (the answer's calls were valid or
/// repaired), `unsaved` (a call still could not be saved), `upstream_error` (the upstream
/// failed or answered something unreadable; the previous answer is returned).
pub(crate) fn count_reprompt(route: &'static str, outcome: &'static str) {
    metrics::counter!("toolmend_reprompts_total", "route" => route, "outcome" => outcome)
        .increment(1);
}

/// Counts a response to a request that carried no tools (and no `--tools` stood in): its calls
/// pass unrepaired. `calls` is how many it held (`None` for a stream, not read).
pub(crate) fn count_untooled(route: &'static str, calls: Option<usize>) {
    metrics::counter!("toolmend_untooled_responses_total", "route" => route).increment(1);
    if let Some(calls) = calls {
        metrics::counter!("toolmend_untooled_calls_total", "route" => route)
            .increment(calls as u64);
    }
}

/// The labels the proxy records its histograms under: the four repaired routes, and the
/// streams' work (one sample per streamed response).
const ROUTES: [&str; 5] = ["chat", "messages", "responses", "ollama_chat", "stream"];

/// One histogram handle per route label, looked up in the recorder once.
///
/// `histogram!` with labels builds its key (a label vector, a `String` for the status) and
/// hashes it into the recorder's registry on every call: one or two allocations and a map
/// lookup per request, or per streamed chunk (issue #29 §3). The handle it returns stays
/// valid for the recorder's life (the proxy sets no idle timeout), so the common series keep
/// theirs; any other label or status goes through the macro as before.
struct Handles([OnceLock<metrics::Histogram>; ROUTES.len()]);

impl Handles {
    const fn new() -> Self {
        Self([const { OnceLock::new() }; ROUTES.len()])
    }

    /// The handle for `route`, made by `make` the first time (after the recorder is
    /// installed, so it never caches a handle of no recorder); `None` for a label not in
    /// [`ROUTES`].
    fn get(
        &self,
        route: &'static str,
        make: impl FnOnce() -> metrics::Histogram,
    ) -> Option<&metrics::Histogram> {
        let index = ROUTES.iter().position(|r| *r == route)?;
        Some(self.0[index].get_or_init(|| {
            let _ = handle();
            make()
        }))
    }
}

static OVERHEAD: Handles = Handles::new();
/// Requests answered `200 OK`, by route.
static REQUEST_OK: Handles = Handles::new();

/// Records the time the proxy itself spent on a response (repair work, not the upstream).
pub(crate) fn record_overhead(route: &'static str, seconds: f64) {
    let make = || metrics::histogram!("toolmend_overhead_seconds", "route" => route);
    match OVERHEAD.get(route, make) {
        Some(histogram) => histogram.record(seconds),
        None => make().record(seconds),
    }
}

/// Records a whole request's latency, upstream included.
pub(crate) fn record_request(route: &'static str, status: u16, seconds: f64) {
    let make = |status: u16| {
        metrics::histogram!("toolmend_request_duration_seconds", "route" => route,
            "status" => status.to_string())
    };
    match (status == 200)
        .then(|| REQUEST_OK.get(route, || make(200)))
        .flatten()
    {
        Some(histogram) => histogram.record(seconds),
        None => make(status).record(seconds),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_call_counters_count_the_series_the_macro_counted() {
        let Some(recorder) = handle() else {
            return;
        };
        let tools = serde_json::json!([{"name": "cached_tool", "parameters": {"type": "object",
            "properties": {"n": {"type": "integer"}}}}]);
        let mender = toolmend::Mender::new(toolmend::ToolSet::from_json(&tools));
        let valid = mender.repair_call("cached_tool", r#"{"n": 1}"#);
        let repaired = mender.repair_call("cached_tool", r#"{"n": "2"}"#);
        assert_eq!(repaired.status, Status::Repaired);
        for _ in 0..3 {
            count_call("cached-model", &valid);
        }
        count_call("cached-model", &repaired);
        let text = recorder.render();
        let value = |status: &str| {
            let head = format!(
                "toolmend_calls_total{{model=\"cached-model\",tool=\"cached_tool\",status=\"{status}\"}} "
            );
            text.lines()
                .find_map(|l| l.strip_prefix(head.as_str()).map(str::to_owned))
        };
        assert_eq!(value("valid").as_deref(), Some("3"), "{text}");
        assert_eq!(value("repaired").as_deref(), Some("1"), "{text}");
        assert!(
            text.contains("toolmend_repairs_total{model=\"cached-model\",tool=\"cached_tool\"")
        );
    }

    #[test]
    fn a_label_takes_at_most_its_bound_of_values() {
        let label = BoundedLabel::new(2);
        assert_eq!(label.label("gpt"), "gpt");
        assert_eq!(label.label("qwen"), "qwen");
        assert_eq!(label.label("third"), "other");
        assert_eq!(
            label.label("gpt"),
            "gpt",
            "a value seen before keeps its name"
        );
        let long = "é".repeat(100);
        let bounded = BoundedLabel::new(1);
        let cut = bounded.label(&long);
        assert!(
            cut.len() <= MAX_LABEL_BYTES && long.starts_with(&cut),
            "{cut}"
        );
        assert_eq!(
            bounded.label(&long),
            cut,
            "the cut value is the one remembered"
        );
    }
}
