//! Any schema and any arguments (split at the first NUL): the tool set is built or the tool is
//! refused, never a panic; a call is settled in bounded time (libFuzzer's `-timeout`) and
//! within its error budget; a dispatchable result validates; valid input comes back byte for
//! byte; a tool whose schema was refused is never `valid`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolmend::{Mender, Status, ToolSet};

fuzz_target!(|text: &str| {
    let Some((schema, arguments)) = text.split_once('\0') else {
        return;
    };
    let Ok(schema) = serde_json::from_str::<Value>(schema) else {
        return;
    };
    let tools = ToolSet::from_json(&json!([{"name": "t", "parameters": schema}]));
    let refused = tools.get("t").is_some_and(|tool| tool.refusal().is_some());
    let mender = Mender::new(tools);
    let call = mender.repair_call("t", arguments);
    match call.status {
        Status::Valid => {
            assert!(!refused);
            assert_eq!(call.arguments_text, arguments);
        }
        Status::Repaired => {
            assert!(!refused);
            let value: Value = serde_json::from_str(&call.arguments_text).unwrap();
            assert!(mender.tools().get("t").unwrap().is_valid(&value));
        }
        _ => assert!(call.error.is_some()),
    }
});
