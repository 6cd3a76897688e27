//! The repair catalogue's names (DESIGN §5), one enum for every stage.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One kind of repair from the catalogue.
///
/// The snake_case names (`null_stripped`, `json_string_to_array`, …) are stable: they appear in
/// reports, JSONL output, tracing fields, counters and metrics. New kinds may be added, so the enum
/// is `#[non_exhaustive]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RepairKind {
    // --- syntax (salvage), DESIGN §5.1 ---
    /// `""`, whitespace or `null` as the whole arguments became `{}`.
    EmptyArguments,
    /// The arguments were a JSON string holding a JSON object.
    DoubleEncoded,
    /// A Markdown code fence around the object was removed.
    FenceUnwrapped,
    /// Prose before or after the object was removed.
    ProseStripped,
    /// A `,` before `}` or `]` was removed.
    TrailingCommaRemoved,
    /// Single-quoted (or smart-quoted) keys and strings became double-quoted.
    QuotesNormalized,
    /// A `//` or `/* */` comment outside strings was removed.
    CommentRemoved,
    /// `True`/`False`/`None` became `true`/`false`/`null`.
    PythonLiteral,
    /// A bare identifier key was quoted.
    KeyQuoted,
    /// A missing comma between two members or elements was inserted.
    CommaInserted,
    /// A member's missing colon was inserted: a quoted key followed by a whole quoted value
    /// (`"key" "value",`), so the string before it no longer swallows the member.
    ColonInserted,
    /// A missing `{` was inserted: an array held a member (`["key": "value"]`), read as the
    /// object it opens. Documents only (json_repair's reading); a call never reads it.
    OpenerInserted,
    /// A string value's missing closing quote was inserted before `, "key":`, so the value no
    /// longer swallows the members after it.
    QuoteInserted,
    /// A raw control character inside a string was escaped.
    ControlCharEscaped,
    /// A stray `}` or `]` was removed.
    ExtraCloserRemoved,
    /// A byte-order mark before the arguments was removed (RFC 8259 §8.1: not part of JSON).
    BomRemoved,
    /// A key was sent twice in one object and its earlier value was dropped; the path names the
    /// key (the value is never quoted).
    DuplicateKeyDropped,
    /// Text cut off mid-value was closed.
    TruncationClosed,
    // --- shape (validate-then-repair), DESIGN §5.2, in catalogue order ---
    /// An envelope `{"name": …, "arguments": {…}}` was unwrapped.
    ArgumentsUnwrapped,
    /// A known alias key was renamed to the declared property.
    FieldRenamed,
    /// Dotted keys `a.b` were re-nested.
    Unflattened,
    /// A required member a strict-style schema lets be omitted was filled with its declared
    /// `default`.
    StrictDefaultFilled,
    /// A required member a strict-style schema lets be omitted was filled with `null`, which
    /// its type admits (strict mode's spelling of "not given").
    StrictNullFilled,
    /// A `null` in an optional field that does not allow null was dropped.
    NullStripped,
    /// A string holding a JSON array became the array.
    JsonStringToArray,
    /// A string holding a JSON object became the object.
    JsonStringToObject,
    /// `{}` where an array is expected was dropped or became `[]`.
    ObjectToArray,
    /// An object shaped like an item where an array of such objects is expected was wrapped.
    ObjectWrappedInArray,
    /// `{"item": v}` where an array is expected became `[v]`.
    SingleKeyObjectToArray,
    /// A bare primitive where an array of it is expected was wrapped.
    BareValueToArray,
    /// A scalar was converted losslessly to the expected scalar type.
    ScalarCoerced,
    /// A string matching one `enum` member up to case and separators became that member.
    EnumCaseFixed,
    /// A leading `^` / trailing `$` that broke a `pattern` was removed.
    AnchorStripped,
    /// A plain string as the whole arguments was wrapped into the single required field.
    RootStringWrapped,
    // --- opt-in hint rules, DESIGN §5.2 / §6 ---
    /// A Markdown auto-link in a path-shaped field became its text.
    MdLinkUnwrapped,
    /// Missing fields of a declared relational group were filled from its defaults.
    RelationalDefault,
    // --- turn level, DESIGN §5.3 ---
    /// A call was recovered from text in a model's markup.
    Recovered,
    /// An unknown call name was matched to exactly one tool.
    NameRepaired,
    /// `{…}{…}` arguments were split into several calls.
    ConcatenatedSplit,
    /// A repeated or already-native call was dropped.
    DuplicateDropped,
    /// The same call repeated too often was not dispatched.
    StormSuppressed,
}

impl RepairKind {
    /// Every kind, in catalogue order (DESIGN §5).
    pub const ALL: &'static [RepairKind] = &[
        Self::EmptyArguments,
        Self::DoubleEncoded,
        Self::FenceUnwrapped,
        Self::ProseStripped,
        Self::TrailingCommaRemoved,
        Self::QuotesNormalized,
        Self::CommentRemoved,
        Self::PythonLiteral,
        Self::KeyQuoted,
        Self::CommaInserted,
        Self::ColonInserted,
        Self::OpenerInserted,
        Self::QuoteInserted,
        Self::ControlCharEscaped,
        Self::ExtraCloserRemoved,
        Self::BomRemoved,
        Self::DuplicateKeyDropped,
        Self::TruncationClosed,
        Self::ArgumentsUnwrapped,
        Self::FieldRenamed,
        Self::Unflattened,
        Self::StrictDefaultFilled,
        Self::StrictNullFilled,
        Self::NullStripped,
        Self::JsonStringToArray,
        Self::JsonStringToObject,
        Self::ObjectToArray,
        Self::ObjectWrappedInArray,
        Self::SingleKeyObjectToArray,
        Self::BareValueToArray,
        Self::ScalarCoerced,
        Self::EnumCaseFixed,
        Self::AnchorStripped,
        Self::RootStringWrapped,
        Self::MdLinkUnwrapped,
        Self::RelationalDefault,
        Self::Recovered,
        Self::NameRepaired,
        Self::ConcatenatedSplit,
        Self::DuplicateDropped,
        Self::StormSuppressed,
    ];

    /// The stable snake_case name, as in reports and metrics.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::EmptyArguments => "empty_arguments",
            Self::DoubleEncoded => "double_encoded",
            Self::FenceUnwrapped => "fence_unwrapped",
            Self::ProseStripped => "prose_stripped",
            Self::TrailingCommaRemoved => "trailing_comma_removed",
            Self::QuotesNormalized => "quotes_normalized",
            Self::CommentRemoved => "comment_removed",
            Self::PythonLiteral => "python_literal",
            Self::KeyQuoted => "key_quoted",
            Self::CommaInserted => "comma_inserted",
            Self::ColonInserted => "colon_inserted",
            Self::OpenerInserted => "opener_inserted",
            Self::QuoteInserted => "quote_inserted",
            Self::ControlCharEscaped => "control_char_escaped",
            Self::ExtraCloserRemoved => "extra_closer_removed",
            Self::BomRemoved => "bom_removed",
            Self::DuplicateKeyDropped => "duplicate_key_dropped",
            Self::TruncationClosed => "truncation_closed",
            Self::ArgumentsUnwrapped => "arguments_unwrapped",
            Self::FieldRenamed => "field_renamed",
            Self::Unflattened => "unflattened",
            Self::StrictDefaultFilled => "strict_default_filled",
            Self::StrictNullFilled => "strict_null_filled",
            Self::NullStripped => "null_stripped",
            Self::JsonStringToArray => "json_string_to_array",
            Self::JsonStringToObject => "json_string_to_object",
            Self::ObjectToArray => "object_to_array",
            Self::ObjectWrappedInArray => "object_wrapped_in_array",
            Self::SingleKeyObjectToArray => "single_key_object_to_array",
            Self::BareValueToArray => "bare_value_to_array",
            Self::ScalarCoerced => "scalar_coerced",
            Self::EnumCaseFixed => "enum_case_fixed",
            Self::AnchorStripped => "anchor_stripped",
            Self::RootStringWrapped => "root_string_wrapped",
            Self::MdLinkUnwrapped => "md_link_unwrapped",
            Self::RelationalDefault => "relational_default",
            Self::Recovered => "recovered",
            Self::NameRepaired => "name_repaired",
            Self::ConcatenatedSplit => "concatenated_split",
            Self::DuplicateDropped => "duplicate_dropped",
            Self::StormSuppressed => "storm_suppressed",
        }
    }

    /// Looks a kind up by its snake_case name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Whether this kind is a syntax repair made by salvage (DESIGN §5.1).
    #[must_use]
    pub const fn is_syntax(self) -> bool {
        matches!(
            self,
            Self::EmptyArguments
                | Self::DoubleEncoded
                | Self::FenceUnwrapped
                | Self::ProseStripped
                | Self::TrailingCommaRemoved
                | Self::QuotesNormalized
                | Self::CommentRemoved
                | Self::PythonLiteral
                | Self::KeyQuoted
                | Self::CommaInserted
                | Self::ColonInserted
                | Self::OpenerInserted
                | Self::QuoteInserted
                | Self::ControlCharEscaped
                | Self::ExtraCloserRemoved
                | Self::BomRemoved
                | Self::DuplicateKeyDropped
                | Self::TruncationClosed
        )
    }
}

impl fmt::Display for RepairKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_from_name() {
        for &kind in RepairKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(RepairKind::from_name(kind.name()), Some(kind));
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = RepairKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RepairKind::ALL.len());
    }

    #[test]
    fn seed_names_are_kept() {
        for name in [
            "null_stripped",
            "json_string_to_array",
            "object_to_array",
            "md_link_unwrapped",
        ] {
            assert!(RepairKind::from_name(name).is_some(), "{name}");
        }
    }
}
