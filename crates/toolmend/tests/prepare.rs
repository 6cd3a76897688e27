//! `prepare_tools` through the public API: what a model is shown (DESIGN §7).
//!
//! The re-nesting half of the round trip (`unflatten`) is crate-private; its property test lives
//! in `src/prepare/round_trip.rs`. Here: shapes, anchors, hints, flattening and descriptions as
//! a caller sees them.

use serde_json::{Value, json};
use toolmend::{PrepareOptions, ToolSet, prepare_tools};

/// A deep tool (depth 3) with hints, anchors and a dotted property name.
fn deploy_schema() -> Value {
    json!({
        "type": "object",
        "required": ["service", "target"],
        "x-toolmend": {"contract": "Deploys one service; never retry on a timeout.", "mutating": true},
        "properties": {
            "service": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
            "target": {
                "type": "object",
                "description": "Where to deploy",
                "required": ["cluster", "limits"],
                "properties": {
                    "cluster": {"type": "string", "x-toolmend": {"semantic": "url"}},
                    "limits": {
                        "type": "object",
                        "required": ["cpu"],
                        "properties": {
                            "cpu": {"type": "number", "description": "Cores"},
                            "memory.max": {"type": "string", "pattern": "^[0-9]+(Mi|Gi)$"}
                        }
                    }
                }
            },
            "tags": {"type": "array", "items": {"type": "string"}, "dirge-hints": {}},
            "price": {"type": "string", "pattern": "^[0-9]+\\$"}
        }
    })
}

/// A small tool that is never flattened.
fn read_schema() -> Value {
    json!({"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string", "pattern": "^/.*$", "x-dirge-kind": "path"},
        "limit": {"type": "integer"}}})
}

fn options() -> PrepareOptions {
    PrepareOptions::default()
}

/// Every key named `name` anywhere in `value`.
fn count_keys(value: &Value, name: &str) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key(name))
                + map.values().map(|v| count_keys(v, name)).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(|v| count_keys(v, name)).sum(),
        _ => 0,
    }
}

#[test]
fn the_three_input_forms_keep_their_shape() {
    let tools = json!([
        {"type": "function", "function": {"name": "read", "description": "Read a file.",
            "parameters": read_schema(), "strict": false}},
        {"name": "read_flat", "description": "Read a file.", "parameters": read_schema(),
            "x-vendor": [1, 2]},
        {"name": "read_anthropic", "description": "Read a file.", "input_schema": read_schema(),
            "cache_control": {"type": "ephemeral"}}
    ]);
    let sent = prepare_tools(&tools, "claude-sonnet-4", &options()).unwrap();
    let sent = sent.as_array().unwrap();
    assert_eq!(sent.len(), 3);

    let openai = sent[0].as_object().unwrap();
    assert_eq!(openai.keys().collect::<Vec<_>>(), ["type", "function"]);
    assert_eq!(openai["type"], "function");
    let function = openai["function"].as_object().unwrap();
    assert_eq!(
        function.keys().collect::<Vec<_>>(),
        ["name", "description", "parameters", "strict"]
    );

    let flat = sent[1].as_object().unwrap();
    assert_eq!(
        flat.keys().collect::<Vec<_>>(),
        ["name", "description", "parameters", "x-vendor"]
    );
    assert_eq!(flat["x-vendor"], json!([1, 2]));

    let anthropic = sent[2].as_object().unwrap();
    assert_eq!(
        anthropic.keys().collect::<Vec<_>>(),
        ["name", "description", "input_schema", "cache_control"]
    );

    // The three schemas are the same cleaned schema, and the set still builds.
    let clean = json!({"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string", "pattern": "^/.*$"}, "limit": {"type": "integer"}}});
    assert_eq!(function["parameters"], clean);
    assert_eq!(flat["parameters"], clean);
    assert_eq!(anthropic["input_schema"], clean);
    let set = ToolSet::from_json(&Value::Array(sent.clone()));
    assert!(set.rejected().is_empty() && set.len() == 3);
}

#[test]
fn anchors_are_stripped_only_for_matching_models() {
    let tools = json!([{"name": "deploy", "parameters": deploy_schema()},
                       {"name": "read", "parameters": read_schema()}]);
    for model in [
        "moonshotai/Kimi-K2-Instruct-0905",
        "MiniMax-M2",
        "zai-org/GLM-4.6",
    ] {
        let sent = prepare_tools(&tools, model, &options()).unwrap();
        let deploy = &sent[0]["parameters"]["properties"];
        assert_eq!(deploy["service"]["pattern"], "[a-z][a-z0-9-]*", "{model}");
        assert_eq!(
            deploy[r"target.limits.memory\.max"]["pattern"], "[0-9]+(Mi|Gi)",
            "{model}"
        );
        // An escaped dollar is a literal character, not an anchor.
        assert_eq!(deploy["price"]["pattern"], r"[0-9]+\$", "{model}");
        assert_eq!(
            sent[1]["parameters"]["properties"]["path"]["pattern"], "/.*",
            "{model}"
        );
    }
    for model in ["gpt-4o", "claude-sonnet-4", "deepseek-chat", "qwen3-coder"] {
        let sent = prepare_tools(&tools, model, &options()).unwrap();
        assert_eq!(
            sent[0]["parameters"]["properties"]["service"]["pattern"],
            "^[a-z][a-z0-9-]*$"
        );
        assert_eq!(
            sent[1]["parameters"]["properties"]["path"]["pattern"], "^/.*$",
            "{model}"
        );
    }
}

#[test]
fn anchor_models_are_configurable_and_the_strip_can_be_switched_off() {
    let tools = json!([{"name": "read", "parameters": read_schema()}]);
    let mut options = options();
    options.anchor_models = vec!["qwen".to_owned()];
    let sent = prepare_tools(&tools, "Qwen3-Coder", &options).unwrap();
    assert_eq!(
        sent[0]["parameters"]["properties"]["path"]["pattern"],
        "/.*"
    );
    let sent = prepare_tools(&tools, "glm-4.6", &options).unwrap();
    assert_eq!(
        sent[0]["parameters"]["properties"]["path"]["pattern"],
        "^/.*$"
    );

    let mut options = PrepareOptions::default();
    options.strip_anchors = false;
    let sent = prepare_tools(&tools, "glm-4.6", &options).unwrap();
    assert_eq!(
        sent[0]["parameters"]["properties"]["path"]["pattern"],
        "^/.*$"
    );
}

#[test]
fn hints_are_removed_at_every_depth() {
    let mut options = options();
    options.flatten = false;
    let tools = json!([{"name": "deploy", "parameters": deploy_schema()},
                       {"name": "read", "input_schema": read_schema()}]);
    let before: usize = ["x-toolmend", "dirge-hints", "x-dirge-kind"]
        .iter()
        .map(|k| count_keys(&tools, k))
        .sum();
    assert_eq!(
        before, 4,
        "the fixture must carry hints for this test to mean anything"
    );
    let sent = prepare_tools(&tools, "gpt-4o", &options).unwrap();
    for key in ["x-toolmend", "dirge-hints", "x-dirge-kind"] {
        assert_eq!(count_keys(&sent, key), 0, "{key} left in {sent}");
    }
    // Only the hints went: the nested structure is intact.
    assert_eq!(
        sent[0]["parameters"]["properties"]["target"]["properties"]["limits"]["required"],
        json!(["cpu"])
    );

    options.strip_hints = false;
    let kept = prepare_tools(&tools, "gpt-4o", &options).unwrap();
    assert_eq!(count_keys(&kept, "x-toolmend"), 2);
}

#[test]
fn a_deep_schema_is_flattened_into_a_schema_that_compiles() {
    let tools = json!([{"type": "function", "function": {"name": "deploy", "parameters": deploy_schema()}}]);
    let sent = prepare_tools(&tools, "gpt-4o", &options()).unwrap();
    let flat = &sent[0]["function"]["parameters"];
    let keys: Vec<&String> = flat["properties"].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "service",
            "target.cluster",
            "target.limits.cpu",
            r"target.limits.memory\.max",
            "tags",
            "price"
        ]
    );
    assert_eq!(
        flat["required"],
        json!(["service", "target.cluster", "target.limits.cpu"])
    );
    assert_eq!(
        flat["properties"]["target.cluster"]["description"],
        "target: Where to deploy"
    );
    assert_eq!(
        flat["properties"]["target.limits.cpu"]["description"],
        "Cores"
    );

    let shown = ToolSet::from_json(&sent);
    assert!(shown.rejected().is_empty(), "{:?}", shown.rejected());
    let flat_args = json!({"service": "api", "target.cluster": "https://k8s.example",
        "target.limits.cpu": 2, r"target.limits.memory\.max": "512Mi", "tags": ["blue"]});
    assert!(shown.get("deploy").unwrap().is_valid(&flat_args));
    assert!(
        !shown
            .get("deploy")
            .unwrap()
            .is_valid(&json!({"service": "api"}))
    );

    // The same call, nested, is what the declared tool accepts.
    let declared = ToolSet::from_json(&tools);
    let nested = json!({"service": "api", "target": {"cluster": "https://k8s.example",
        "limits": {"cpu": 2, "memory.max": "512Mi"}}, "tags": ["blue"]});
    assert!(declared.get("deploy").unwrap().is_valid(&nested));
}

#[test]
fn flatten_thresholds_are_options() {
    let tools = json!([{"name": "deploy", "parameters": deploy_schema()}]);
    let mut options = options();
    options.flatten_depth_over = 3;
    let sent = prepare_tools(&tools, "gpt-4o", &options).unwrap();
    assert!(
        sent[0]["parameters"]["properties"].get("target").is_some(),
        "6 leaves, depth 3"
    );
    options.flatten_leaves_over = 5;
    let sent = prepare_tools(&tools, "gpt-4o", &options).unwrap();
    assert!(
        sent[0]["parameters"]["properties"]
            .get("target.cluster")
            .is_some()
    );
    options.flatten = false;
    let sent = prepare_tools(&tools, "gpt-4o", &options).unwrap();
    assert!(sent[0]["parameters"]["properties"].get("target").is_some());
}

#[test]
fn descriptions_get_the_contract_and_generated_hints() {
    let tools = json!([{"name": "deploy", "description": "Deploy a service.", "parameters": deploy_schema()}]);
    let sent = prepare_tools(&tools, "gpt-4o", &options()).unwrap();
    assert_eq!(
        sent[0]["description"],
        "Deploy a service.\n\nDeploys one service; never retry on a timeout. \
         `tags` is a JSON array of strings, not a string."
    );

    let mut options = options();
    options.max_hint_bytes = 60;
    let sent = prepare_tools(&tools, "gpt-4o", &options).unwrap();
    let description = sent[0]["description"].as_str().unwrap();
    let added = description.strip_prefix("Deploy a service.\n\n").unwrap();
    assert!(added.len() <= 60, "{added}");
    assert!(
        !added.contains("tags"),
        "the generated hint does not fit after the contract"
    );

    options.contract_hints = false;
    let sent = prepare_tools(&tools, "gpt-4o", &options).unwrap();
    assert_eq!(sent[0]["description"], "Deploy a service.");
}

#[test]
fn preparing_twice_changes_nothing_more() {
    let tools = json!([{"name": "deploy", "description": "D.", "parameters": deploy_schema()},
                       {"name": "read", "parameters": read_schema()}]);
    let once = prepare_tools(&tools, "kimi-k2", &options()).unwrap();
    let twice = prepare_tools(&once, "kimi-k2", &options()).unwrap();
    assert_eq!(once, twice);
}

#[test]
fn a_tool_without_a_schema_passes_through() {
    let tools = json!([{"name": "now", "description": "The time."}]);
    assert_eq!(prepare_tools(&tools, "glm-4", &options()).unwrap(), tools);
}

#[test]
fn something_that_is_not_a_tool_is_a_typed_error() {
    let tools = json!([{"name": "now"}, {"description": "no name"}]);
    let error = prepare_tools(&tools, "glm-4", &options()).unwrap_err();
    assert!(
        matches!(error, toolmend::Error::ToolSpec { index: 1, .. }),
        "{error}"
    );
}
