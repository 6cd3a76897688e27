//! `single_key_object_to_array`: one item sent as `{"path": "a"}` where `paths` is an array.
//!
//! **Detects:** an object with exactly one key where an array is expected, when the key is the
//! singular of the field's name (`path` for `paths`, `entry` for `entries`) or an item-ish key
//! (`item`, `value`), and its value may be an item of the array.
//!
//! **Does:** replaces the object with `[value]`.
//!
//! **Never fires when:** the key is anything else (`{"foo": "a"}` for `paths` is not an item),
//! the value's type is not allowed for items, or an object is allowed there.
//!
//! **Example:** `{"paths": {"path": "a"}}` → `{"paths": ["a"]}`.

use serde_json::Value;

use super::{Fix, Place, Rule, Site};
use crate::RepairKind;
use crate::repair::failures::Keywords;
use crate::repair::schema::Types;

const ITEM_KEYS: [&str; 2] = ["item", "value"];

/// See the module docs.
#[derive(Debug)]
pub(crate) struct SingleKeyObjectToArray;

impl Rule for SingleKeyObjectToArray {
    fn kind(&self) -> RepairKind {
        RepairKind::SingleKeyObjectToArray
    }

    fn triggers(&self) -> Keywords {
        Keywords::TYPE.or(Keywords::BRANCHES)
    }

    fn apply(&self, site: &Site<'_, '_>) -> Option<Fix> {
        let Value::Object(map) = site.value else {
            return None;
        };
        let Place::Member { key: field, .. } = site.place else {
            return None;
        };
        if map.len() != 1 || !site.wants_array_instead() {
            return None;
        }
        let (key, item) = map.iter().next()?;
        if !(ITEM_KEYS.contains(&key.as_str()) || singulars(field).any(|s| s == *key)) {
            return None;
        }
        let items = site.view.item(0);
        if items.is_some_and(|items| !items.allows(Types::of(item))) {
            return None;
        }
        Some(Fix::Replace(Value::Array(vec![item.clone()])))
    }
}

/// The plausible singulars of an English plural field name.
fn singulars(plural: &str) -> impl Iterator<Item = String> + '_ {
    let ies = plural.strip_suffix("ies").map(|stem| format!("{stem}y"));
    let es = plural.strip_suffix("es").map(str::to_owned);
    let s = plural
        .strip_suffix('s')
        .filter(|stem| !stem.ends_with('s'))
        .map(str::to_owned);
    ies.into_iter().chain(es).chain(s)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{assert_fires, assert_never_fires};
    use super::singulars;
    use crate::{RepairKind::SingleKeyObjectToArray as K, Status};

    fn schema() -> serde_json::Value {
        json!({"type": "object", "properties": {
            "paths": {"type": "array", "items": {"type": "string"}},
            "entries": {"type": "array", "items": {"type": "integer"}}}})
    }

    #[test]
    fn singulars_of_plurals() {
        assert!(singulars("paths").any(|s| s == "path"));
        assert!(singulars("entries").any(|s| s == "entry"));
        assert!(singulars("matches").any(|s| s == "match"));
        assert!(!singulars("glass").any(|s| s == "glas"));
    }

    #[test]
    fn fires_on_singular_or_item_keys() {
        assert_fires(
            schema(),
            r#"{"paths": {"path": "a"}}"#,
            K,
            "/paths",
            json!({"paths": ["a"]}),
        );
        assert_fires(
            schema(),
            r#"{"entries": {"entry": 3}}"#,
            K,
            "/entries",
            json!({"entries": [3]}),
        );
        assert_fires(
            schema(),
            r#"{"paths": {"item": "a"}}"#,
            K,
            "/paths",
            json!({"paths": ["a"]}),
        );
    }

    #[test]
    fn never_fires_on_other_keys_or_wrong_item_types() {
        assert_never_fires(schema(), r#"{"paths": {"foo": "a"}}"#, K, Status::Invalid);
        assert_never_fires(schema(), r#"{"paths": {"path": 3}}"#, K, Status::Invalid);
        assert_never_fires(
            schema(),
            r#"{"paths": {"path": "a", "other": "b"}}"#,
            K,
            Status::Invalid,
        );
    }
}
