//! Wire-format helpers shared with the `toolmend` CLI (its `turn` command writes calls back
//! into messages the same way the proxy does).

use serde_json::{Value, json};

/// Writes id, name and string arguments into a tool call object where they were read from
/// (`function` when it is an object, else the call itself; `input` when that, not
/// `arguments`, is the key there), keeping its other fields. An empty `id` is not written.
pub fn set_call(call: &mut Value, id: &str, name: &str, arguments: &str) {
    let Some(object) = call.as_object_mut() else {
        return;
    };
    if !id.is_empty() {
        object.insert("id".into(), json!(id));
    }
    let target = match object.get("function") {
        Some(Value::Object(_)) => object.get_mut("function").and_then(Value::as_object_mut),
        _ => Some(object),
    };
    if let Some(target) = target {
        target.insert("name".into(), json!(name));
        let key = if target.contains_key("arguments") || !target.contains_key("input") {
            "arguments"
        } else {
            "input"
        };
        target.insert(key.into(), json!(arguments));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_where_the_call_was_read_from() {
        let mut nested = json!({"id": "a", "type": "function", "x": 1,
            "function": {"name": "n", "arguments": "{}"}});
        set_call(&mut nested, "b", "m", "{\"k\":1}");
        assert_eq!(
            nested,
            json!({"id": "b", "type": "function", "x": 1,
            "function": {"name": "m", "arguments": "{\"k\":1}"}})
        );
        let mut flat = json!({"id": "a", "name": "n", "input": "{}"});
        set_call(&mut flat, "", "m", "{}");
        assert_eq!(flat, json!({"id": "a", "name": "m", "input": "{}"}));
        let mut bare = json!({});
        set_call(&mut bare, "c", "m", "{}");
        assert_eq!(bare, json!({"id": "c", "name": "m", "arguments": "{}"}));
    }
}
