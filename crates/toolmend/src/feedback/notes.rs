//! Value-free notes for repaired calls, to prepend to the tool result.

use std::borrow::Cow;

use crate::limits::MAX_NOTES;
use crate::pointer;
use crate::{Repair, RepairKind};

/// The notes for a call's repairs: one per repair the model should hear about (a repeated
/// note once), at most [`MAX_NOTES`], then one line that counts the rest. A call with 2,000
/// repaired items would otherwise prepend 2,000 lines to the tool result the model reads.
///
/// Most repaired calls' repairs have no note (a trailing comma, quotes, literals): that is told
/// inlined into the caller, before any call is made (issue #31).
#[inline(always)]
pub(crate) fn notes_for(repairs: &[Repair]) -> Vec<String> {
    if !repairs.iter().any(|r| has_note(r.kind)) {
        return Vec::new();
    }
    notes_listed(repairs)
}

/// [`notes_for`] for repairs some of which have a note.
fn notes_listed(repairs: &[Repair]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    let mut more = 0usize;
    // The last note counted past the cap; before it, the last note is the last one listed.
    let mut last_counted: Option<String> = None;
    for repair in repairs.iter().filter(|r| has_note(r.kind)) {
        let Some(text) = note_text(repair) else {
            continue;
        };
        // A note repeated at once is one note, before the cap and after it: told from its
        // text before it is built (a fence and the prose around it share one note).
        let last = last_counted.as_ref().or(notes.last());
        if last.map(String::as_str) == Some(&*text) {
            continue;
        }
        // Written whole in its text (prefix included): a fixed note is one copy.
        let note = text.into_owned();
        if notes.len() < MAX_NOTES {
            notes.push(note);
        } else {
            more += 1;
            last_counted = Some(note);
        }
    }
    if more > 0 {
        notes.push(format!(
            "Note: {more} more fields were repaired; send the arguments in the declared shape."
        ));
    }
    notes
}

/// The note for one repair, or `None` for repairs the model need not hear about.
#[cfg(test)]
pub(crate) fn note_for(repair: &Repair) -> Option<String> {
    // Most syntax repairs (a trailing comma, quotes, literals) have no note: nothing to build.
    if !has_note(repair.kind) {
        return None;
    }
    note_text(repair).map(Cow::into_owned)
}

/// The text of [`note_for`]'s note, `Note: ` included (and without its shortcut for the kinds
/// that have no note).
fn note_text(repair: &Repair) -> Option<Cow<'static, str>> {
    // Built only for the notes that name a field.
    let field = || {
        let field = pointer::display(&repair.path);
        if field.is_empty() {
            "the arguments".to_owned()
        } else {
            format!("`{}`", super::retry_message::escape_path(&field))
        }
    };
    let text = match repair.kind {
        RepairKind::NullStripped => Cow::Owned(format!(
            "Note: {} was sent as null and was omitted; omit optional fields instead of sending null.",
            field()
        )),
        RepairKind::JsonStringToArray => Cow::Owned(format!(
            "Note: {} was sent as a string holding JSON and was parsed into an array; send arrays directly.",
            field()
        )),
        RepairKind::JsonStringToObject => Cow::Owned(format!(
            "Note: {} was sent as a string holding JSON and was parsed into an object; send objects directly.",
            field()
        )),
        RepairKind::ObjectToArray => Cow::Owned(format!(
            "Note: {} was sent as {{}} where an array is expected; send [] or omit it.",
            field()
        )),
        RepairKind::ObjectWrappedInArray => Cow::Owned(format!(
            "Note: {} was sent as one object where an array of objects is expected and was wrapped into an array; send arrays directly.",
            field()
        )),
        RepairKind::SingleKeyObjectToArray => Cow::Owned(format!(
            "Note: {} was sent as an object with one item and was turned into an array; send arrays directly.",
            field()
        )),
        RepairKind::BareValueToArray => Cow::Owned(format!(
            "Note: {} was sent as a single value and was wrapped into an array; send arrays directly.",
            field()
        )),
        RepairKind::ScalarCoerced => Cow::Owned(format!(
            "Note: {} was sent with the wrong type and was converted; send values of the declared type.",
            field()
        )),
        RepairKind::EnumCaseFixed => Cow::Owned(format!(
            "Note: {} did not match an allowed value exactly and was corrected; use the listed values as written.",
            field()
        )),
        RepairKind::AnchorStripped => Cow::Owned(format!(
            "Note: {} carried regex anchors (^ or $) that were removed; send the plain value.",
            field()
        )),
        RepairKind::FieldRenamed => Cow::Owned(format!(
            "Note: a field of {} was sent under another name and was renamed; use the declared field names.",
            field()
        )),
        RepairKind::Unflattened => Cow::Owned(format!(
            "Note: dotted keys in {} were re-nested; send nested objects.",
            field()
        )),
        RepairKind::StrictDefaultFilled => Cow::Owned(format!(
            "Note: {} was omitted and was set to its declared default; send every field the schema requires.",
            field()
        )),
        RepairKind::StrictNullFilled => Cow::Owned(format!(
            "Note: {} was omitted and was sent as null (no value); send every field the schema requires, null when it has no value.",
            field()
        )),
        RepairKind::ArgumentsUnwrapped => Cow::Borrowed(
            "Note: the arguments were wrapped in a call envelope that was removed; send only the arguments object.",
        ),
        RepairKind::RootStringWrapped => Cow::Borrowed(
            "Note: the arguments were sent as a plain string and were wrapped into the tool's one field; send a JSON object.",
        ),
        RepairKind::MdLinkUnwrapped => Cow::Owned(format!(
            "Note: {} was sent as a Markdown link and was replaced by its text; send plain paths.",
            field()
        )),
        RepairKind::TruncationClosed => Cow::Borrowed(
            "Note: the arguments were cut off and were closed; check that the result is complete.",
        ),
        RepairKind::DoubleEncoded => Cow::Borrowed(
            "Note: the arguments were sent as a JSON string holding an object; send the object directly.",
        ),
        RepairKind::FenceUnwrapped | RepairKind::ProseStripped => Cow::Borrowed(
            "Note: the arguments were wrapped in text or a code fence; send only the JSON object.",
        ),
        RepairKind::DuplicateKeyDropped => Cow::Owned(format!(
            "Note: {} was sent twice in one object; only its last value was used, send each field once.",
            field()
        )),
        RepairKind::ConcatenatedSplit => {
            Cow::Borrowed("Note: several calls were sent as one; send one call per tool call.")
        }
        _ => return None,
    };
    Some(text)
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
            assert_eq!(has_note(kind), note_text(&repair).is_some(), "{kind:?}");
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
