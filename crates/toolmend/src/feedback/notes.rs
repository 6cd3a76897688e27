//! Value-free notes for repaired calls, to prepend to the tool result.

use crate::repair::pointer;
use crate::{Repair, RepairKind};

/// The note for one repair, or `None` for repairs the model need not hear about.
pub(crate) fn note_for(repair: &Repair) -> Option<String> {
    let field = pointer::display(&repair.path);
    let field = if field.is_empty() {
        "the arguments".to_owned()
    } else {
        format!("`{}`", super::retry_message::escape_path(&field))
    };
    let text = match repair.kind {
        RepairKind::NullStripped => format!("{field} was sent as null and was omitted; omit optional fields instead of sending null."),
        RepairKind::JsonStringToArray => format!("{field} was sent as a string holding JSON and was parsed into an array; send arrays directly."),
        RepairKind::JsonStringToObject => format!("{field} was sent as a string holding JSON and was parsed into an object; send objects directly."),
        RepairKind::ObjectToArray => format!("{field} was sent as {{}} where an array is expected; send [] or omit it."),
        RepairKind::ObjectWrappedInArray => format!("{field} was sent as one object where an array of objects is expected and was wrapped into an array; send arrays directly."),
        RepairKind::SingleKeyObjectToArray => format!("{field} was sent as an object with one item and was turned into an array; send arrays directly."),
        RepairKind::BareValueToArray => format!("{field} was sent as a single value and was wrapped into an array; send arrays directly."),
        RepairKind::ScalarCoerced => format!("{field} was sent with the wrong type and was converted; send values of the declared type."),
        RepairKind::EnumCaseFixed => format!("{field} did not match an allowed value exactly and was corrected; use the listed values as written."),
        RepairKind::AnchorStripped => format!("{field} carried regex anchors (^ or $) that were removed; send the plain value."),
        RepairKind::FieldRenamed => format!("a field of {field} was sent under another name and was renamed; use the declared field names."),
        RepairKind::Unflattened => format!("dotted keys in {field} were re-nested; send nested objects."),
        RepairKind::ArgumentsUnwrapped => "the arguments were wrapped in a call envelope that was removed; send only the arguments object.".to_owned(),
        RepairKind::RootStringWrapped => "the arguments were sent as a plain string and were wrapped into the tool's one field; send a JSON object.".to_owned(),
        RepairKind::MdLinkUnwrapped => format!("{field} was sent as a Markdown link and was replaced by its text; send plain paths."),
        RepairKind::TruncationClosed => "the arguments were cut off and were closed; check that the result is complete.".to_owned(),
        RepairKind::DoubleEncoded => "the arguments were sent as a JSON string holding an object; send the object directly.".to_owned(),
        RepairKind::FenceUnwrapped | RepairKind::ProseStripped => "the arguments were wrapped in text or a code fence; send only the JSON object.".to_owned(),
        RepairKind::DuplicateKeyDropped => format!("{field} was sent twice in one object; only its last value was used, send each field once."),
        RepairKind::ConcatenatedSplit => "several calls were sent as one; send one call per tool call.".to_owned(),
        _ => return None,
    };
    Some(format!("Note: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_name_the_field_and_never_a_value() {
        let note = note_for(&Repair::new(
            RepairKind::NullStripped,
            "/edits/0/old".into(),
        ))
        .unwrap();
        assert!(
            note.starts_with("Note: `edits[0].old` was sent as null"),
            "{note}"
        );
        let root = note_for(&Repair::new(RepairKind::RootStringWrapped, String::new())).unwrap();
        assert!(root.contains("the arguments"));
        assert!(
            note_for(&Repair::new(
                RepairKind::TrailingCommaRemoved,
                String::new()
            ))
            .is_none()
        );
    }
}
