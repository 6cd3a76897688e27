//! Value-free notes for repaired calls, to prepend to the tool result.

use crate::limits::MAX_NOTES;
use crate::pointer;
use crate::{Repair, RepairKind};

/// The notes for a call's repairs: one per repair the model should hear about (a repeated
/// note once), at most [`MAX_NOTES`], then one line that counts the rest. A call with 2,000
/// repaired items would otherwise prepend 2,000 lines to the tool result the model reads.
pub(crate) fn notes_for(repairs: &[Repair]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    let mut more = 0usize;
    let mut previous: Option<String> = None;
    for note in repairs.iter().filter_map(note_for) {
        // A note repeated at once is one note, before the cap and after it.
        if previous.as_ref() == Some(&note) {
            continue;
        }
        if notes.len() < MAX_NOTES {
            notes.push(note.clone());
        } else {
            more += 1;
        }
        previous = Some(note);
    }
    if more > 0 {
        notes.push(format!(
            "Note: {more} more fields were repaired; send the arguments in the declared shape."
        ));
    }
    notes
}

/// The note for one repair, or `None` for repairs the model need not hear about.
pub(crate) fn note_for(repair: &Repair) -> Option<String> {
    // Most syntax repairs (a trailing comma, quotes, literals) have no note: nothing to build.
    if !has_note(repair.kind) {
        return None;
    }
    note_for_unchecked(repair)
}

/// [`note_for`] without its shortcut for the kinds that have no note.
fn note_for_unchecked(repair: &Repair) -> Option<String> {
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
        RepairKind::StrictDefaultFilled => format!("{field} was omitted and was set to its declared default; send every field the schema requires."),
        RepairKind::StrictNullFilled => format!("{field} was omitted and was sent as null (no value); send every field the schema requires, null when it has no value."),
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

/// Whether [`note_for`] has a note for `kind`.
const fn has_note(kind: RepairKind) -> bool {
    matches!(
        kind,
        RepairKind::NullStripped
            | RepairKind::JsonStringToArray
            | RepairKind::JsonStringToObject
            | RepairKind::ObjectToArray
            | RepairKind::ObjectWrappedInArray
            | RepairKind::SingleKeyObjectToArray
            | RepairKind::BareValueToArray
            | RepairKind::ScalarCoerced
            | RepairKind::EnumCaseFixed
            | RepairKind::AnchorStripped
            | RepairKind::FieldRenamed
            | RepairKind::Unflattened
            | RepairKind::StrictDefaultFilled
            | RepairKind::StrictNullFilled
            | RepairKind::ArgumentsUnwrapped
            | RepairKind::RootStringWrapped
            | RepairKind::MdLinkUnwrapped
            | RepairKind::TruncationClosed
            | RepairKind::DoubleEncoded
            | RepairKind::FenceUnwrapped
            | RepairKind::ProseStripped
            | RepairKind::DuplicateKeyDropped
            | RepairKind::ConcatenatedSplit
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_repairs_give_a_bounded_list_of_notes() {
        let repairs: Vec<Repair> = (0..2_000)
            .map(|i| Repair::new(RepairKind::ScalarCoerced, format!("/x/{i}")))
            .collect();
        let notes = notes_for(&repairs);
        assert_eq!(notes.len(), MAX_NOTES + 1);
        assert!(
            notes[0].starts_with("Note: `x[0]` was sent with the wrong type"),
            "{}",
            notes[0]
        );
        let last = notes.last().unwrap();
        assert!(
            last.starts_with(&format!("Note: {} more fields", 2_000 - MAX_NOTES)),
            "{last}"
        );
        // A few repairs: one note each, nothing counted.
        assert_eq!(notes_for(&repairs[..3]).len(), 3);
        // A repair reported twice in a row past the cap is counted once.
        let mut twice = repairs[..MAX_NOTES + 1].to_vec();
        twice.push(twice[MAX_NOTES].clone());
        let notes = notes_for(&twice);
        assert_eq!(
            notes.last().unwrap(),
            "Note: 1 more fields were repaired; send the arguments in the declared shape."
        );
    }

    #[test]
    fn the_shortcut_knows_every_kind_with_a_note() {
        for &kind in RepairKind::ALL {
            let repair = Repair::new(kind, "/a".into());
            assert_eq!(
                has_note(kind),
                note_for_unchecked(&repair).is_some(),
                "{kind:?}"
            );
        }
    }

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
