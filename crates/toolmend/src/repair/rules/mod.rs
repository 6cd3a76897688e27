//! The shape rules of DESIGN §5.2, one file each, in one ordered table.
//!
//! A rule looks at one [`Site`]: a location where the validator reported a failure, with the
//! value there, the schema view there and what failed. It returns a [`Fix`] or nothing. The
//! engine tries the rules in [`RULES`] order and applies the first fix at a site; the next
//! validation round shows whether more is needed there.

mod anchor_stripped;
mod arguments_unwrapped;
mod bare_value_to_array;
pub(crate) mod enum_case_fixed;
mod field_renamed;
mod json_string_to_array;
mod json_string_to_object;
mod null_stripped;
mod object_to_array;
mod object_wrapped_in_array;
mod root_string_wrapped;
mod scalar_coerced;
mod single_key_object_to_array;
mod strict_default_filled;
mod strict_null_filled;
mod unflattened;

pub(crate) mod md_link_unwrapped;
pub(crate) mod relational_default;

use serde_json::Value;

use super::failures::{Failure, Keywords};
use super::schema::{SchemaView, Types};
use crate::{Limits, RepairKind, Tool};

/// Where a site sits in its parent.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Place<'a> {
    /// The whole arguments value.
    Root,
    /// A member of an object; `required` when the parent's schema requires it.
    Member { key: &'a str, required: bool },
    /// An item of an array.
    Item,
}

/// One failing location, as a rule sees it.
#[derive(Debug)]
pub(crate) struct Site<'a, 's> {
    pub(crate) value: &'a Value,
    pub(crate) view: &'a SchemaView<'s>,
    pub(crate) failure: &'a Failure,
    pub(crate) place: Place<'a>,
    pub(crate) tool: &'a Tool,
    /// The mender's bounds, for the rules that salvage embedded text.
    pub(crate) limits: &'a Limits,
}

impl Site<'_, '_> {
    /// Whether an array may stand here and the value's own type may not: the condition of
    /// every "…_to_array" rule.
    pub(crate) fn wants_array_instead(&self) -> bool {
        self.view.allows(Types::ARRAY) && !self.view.allows(Types::of(self.value))
    }

    /// Whether value rules must leave this field's text alone (regex, command, content).
    pub(crate) fn is_verbatim(&self) -> bool {
        self.view.semantic().is_some_and(|s| s.is_verbatim())
    }
}

/// What a rule does at its site.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fix {
    /// The value becomes this one.
    Replace(Value),
    /// The member is dropped from its object (only ever returned for [`Place::Member`]).
    Remove,
    /// These members are added to the object here, each reported at its own path (the engine
    /// turns this into [`Fix::Replace`]).
    Fill(Vec<(String, Value)>),
}

/// A shape rule.
pub(crate) trait Rule: Sync {
    /// The catalogue name the rule reports.
    fn kind(&self) -> RepairKind;
    /// The validator keywords whose failure at a site lets the rule look at it.
    fn triggers(&self) -> Keywords;
    /// The fix at `site`, or `None` when the rule does not apply there. Only called when one
    /// of [`Rule::triggers`] failed at the site.
    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix>;
}

/// The rules in the order they are tried at a site; the order is part of the contract
/// (DESIGN §3, invariant 5):
///
/// 1–3 restructure objects (an envelope, alias keys, dotted keys) and run first because the
///   value rules below are asked about properties that only exist once the object is right.
/// 3a–3b fill required members a strict-style schema lets be omitted (their declared default,
///   else null where null is allowed), once 1–3 had their chance to find them under another
///   name or dotted: an alias must become the member, never sit beside a filled null.
/// 4 drops a null before any rule reinterprets it.
/// 5–6 parse stringified JSON before 7–10 wrap anything: a string holding `["a","b"]` must
///   become that array, never `["[\"a\",\"b\"]"]`.
/// 7–9 turn objects into arrays before 10 wraps a bare value, so `{}` is never wrapped as `[{}]`;
///   an object shaped like an item (8) is wrapped whole before 9 takes the value of a single
///   item-ish key, because wrapping keeps everything that was sent.
/// 11 coerces scalars only after the array rules had their chance: `"5"` for an integer array
///   is wrapped to `["5"]` by 10 and the item is coerced in the next round, and a stringified
///   array's items likewise, so lossless repairs at one path compose in this order.
/// 12–13 fix strings that have the right type but a wrong spelling (enum case, regex anchors).
/// 14 wraps a root string last: it is the weakest claim about what the model meant.
pub(crate) static RULES: &[&dyn Rule] = &[
    &arguments_unwrapped::ArgumentsUnwrapped,
    &field_renamed::FieldRenamed,
    &unflattened::Unflattened,
    &strict_default_filled::StrictDefaultFilled,
    &strict_null_filled::StrictNullFilled,
    &null_stripped::NullStripped,
    &json_string_to_array::JsonStringToArray,
    &json_string_to_object::JsonStringToObject,
    &object_to_array::ObjectToArray,
    &object_wrapped_in_array::ObjectWrappedInArray,
    &single_key_object_to_array::SingleKeyObjectToArray,
    &bare_value_to_array::BareValueToArray,
    &scalar_coerced::ScalarCoerced,
    &enum_case_fixed::EnumCaseFixed,
    &anchor_stripped::AnchorStripped,
    &root_string_wrapped::RootStringWrapped,
];

/// The members a strict-style object at `site` is missing that `value_for` gives a value
/// (the two `strict_*_filled` rules): `None` when the site is not such an object, or none is.
///
/// Only the members the validator reported missing and the schema declares are looked at.
pub(crate) fn strict_fill(
    site: &Site<'_, '_>,
    value_for: impl Fn(&SchemaView<'_>) -> Option<Value>,
) -> Option<Fix> {
    let Value::Object(map) = site.value else {
        return None;
    };
    if site.failure.missing.is_empty() || !site.view.is_strict_style() {
        return None;
    }
    let mut members: Vec<(String, Value)> = Vec::new();
    for name in &site.failure.missing {
        if map.contains_key(name) || members.iter().any(|(k, _)| k == name) {
            continue;
        }
        let Some(value) = site
            .view
            .declares(name)
            .then(|| site.view.property(name))
            .flatten()
            .and_then(|view| value_for(&view))
        else {
            continue;
        };
        members.push((name.clone(), value));
    }
    (!members.is_empty()).then_some(Fix::Fill(members))
}

/// Parses a string that holds JSON text of one container (`[…]` or `{…}`): strictly, or by
/// salvage when the strict parse fails (never a truncated or multi-value salvage), within the
/// configured `limits` like any other salvage.
pub(crate) fn parse_embedded(text: &str, want: Types, limits: &Limits) -> Option<Value> {
    let trimmed = text.trim();
    let (open, close) = if want == Types::ARRAY {
        ('[', ']')
    } else {
        ('{', '}')
    };
    if !(trimmed.starts_with(open) && trimmed.ends_with(close))
        || trimmed.len() > limits.max_salvage_bytes
    {
        return None;
    }
    let value = match serde_json::from_str::<Value>(trimmed) {
        Ok(value) if depth_within(&value, limits.max_depth) => value,
        Ok(_) => return None,
        Err(_) => {
            let options = crate::salvage::SalvageOptions::from_limits(limits);
            let salvaged = crate::salvage::salvage(trimmed, &options).ok()?;
            if salvaged.truncated || salvaged.values.len() != 1 {
                return None;
            }
            salvaged.values.into_iter().next()?
        }
    };
    (Types::of(&value) == want).then_some(value)
}

/// Whether `value` nests arrays and objects at most `max` levels deep.
fn depth_within(value: &Value, max: usize) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match node {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth >= max {
            return false;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    true
}

#[cfg(test)]
pub(crate) mod testing {
    //! Runs whole calls through the engine for the rules' own tests.

    use serde_json::{Value, json};

    use crate::{Mender, RepairKind, Status, ToolSet};

    /// Mends `args` for a tool `t` with `schema`; returns the status, the final arguments and
    /// the kinds with their paths (`kind@/path`).
    pub(crate) fn mend(schema: Value, args: &str) -> (Status, Option<Value>, Vec<String>) {
        mend_tool(json!({"name": "t", "parameters": schema}), args)
    }

    /// Like [`mend`] with a whole tool object.
    pub(crate) fn mend_tool(tool: Value, args: &str) -> (Status, Option<Value>, Vec<String>) {
        let name = tool["name"].as_str().unwrap().to_owned();
        let mender = Mender::new(ToolSet::from_json(&json!([tool])));
        let call = mender.repair_call(&name, args);
        let repairs = call
            .repairs
            .iter()
            .map(|r| format!("{}@{}", r.kind, r.path))
            .collect();
        (call.status, call.arguments, repairs)
    }

    /// Asserts the call was repaired by exactly `kind` at `path` into `expected`.
    #[track_caller]
    pub(crate) fn assert_fires(
        schema: Value,
        args: &str,
        kind: RepairKind,
        path: &str,
        expected: Value,
    ) {
        let (status, value, repairs) = mend(schema, args);
        assert_eq!(status, Status::Repaired, "{args}: {repairs:?}");
        assert_eq!(value, Some(expected), "{args}");
        assert_eq!(repairs, [format!("{kind}@{path}")], "{args}");
    }

    /// Asserts `kind` did not fire and the call ended with `status`.
    #[track_caller]
    pub(crate) fn assert_never_fires(schema: Value, args: &str, kind: RepairKind, status: Status) {
        let (actual, _, repairs) = mend(schema, args);
        assert!(
            !repairs.iter().any(|r| r.starts_with(kind.name())),
            "{args}: {repairs:?}"
        );
        assert_eq!(actual, status, "{args}: {repairs:?}");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::testing::mend;
    use crate::Status;

    /// The walker descends through every kind of sub-schema the view knows, so a rule fires
    /// below `$ref`, `anyOf` and map-like objects, not only where the schema is spelled out.
    #[test]
    fn repairs_reach_into_refs_branches_and_map_schemas() {
        let schema = json!({"type": "object", "properties": {
            "by_ref": {"$ref": "#/$defs/limits"},
            "either": {"anyOf": [{"$ref": "#/$defs/limits"}, {"type": "string"}]},
            "env": {"type": "object", "patternProperties": {"^N_": {"type": "integer"}},
                "additionalProperties": {"type": "array", "items": {"type": "string"}}}},
            "$defs": {"limits": {"type": "object", "properties": {"max": {"type": "integer"}}}}});
        let (status, value, repairs) = mend(
            schema,
            r#"{"by_ref": {"max": "3"}, "either": {"max": "4"}, "env": {"N_A": "5", "PATH": "/bin"}}"#,
        );
        assert_eq!(status, Status::Repaired, "{repairs:?}");
        assert_eq!(
            value,
            Some(json!({"by_ref": {"max": 3}, "either": {"max": 4},
                "env": {"N_A": 5, "PATH": ["/bin"]}}))
        );
        assert_eq!(
            repairs,
            [
                "scalar_coerced@/by_ref/max",
                "scalar_coerced@/either/max",
                "scalar_coerced@/env/N_A",
                "bare_value_to_array@/env/PATH"
            ]
        );
    }
}
