//! Document mode: the readings only the Python and Node drop-ins use, as one layer.
//!
//! A tool call's arguments are read as written; a *document* (`toolmend.loads`, the json_repair
//! drop-in) may also be read the way json_repair reads it. Those readings live here, off by
//! default and never on for calls ([`DocumentOptions`]):
//!
//! - `layout`: `trim_layout` (line breaks before a closing quote are layout), `trim_cut_strings`
//!   (a cut string's trailing blanks), a closing fence right after a cut string;
//! - `scalars`: lenient numbers (`.25`, `+1`, `1_000`), literals in another case (`TRUE`),
//!   bare tokens (`1/3`, a UUID) and unquoted words (`{"city": New York}`);
//! - `keys`: misquoted keys (`{"key:"value"}`) and a value missing its opening quote;
//! - `openers`: a document cut right after its opening bracket (`[`, `{"`) as that container;
//! - `fences`: every fenced block of a text of several among prose;
//! - `pycollections`: Python tuples and sets respelt as lists.
//!
//! # The interface
//!
//! The lenient parser (`super::parser`) knows this layer by its switches, [`Readings`]
//! (defined beside [`super::SalvageOptions`], which carries them), and by the functions
//! re-exported below, each called at a named decision point right after the reading's switch
//! was checked: a string's end (`layout_tail`, `trim_cut_string`, `closing_fence`), a scalar
//! that JSON does not spell (`lenient_number`, `in_token`, `literal`, `bare_word`), a key's
//! quotes (`misquoted_key`), a value's missing opening quote (`value_missing_open_quote`).
//! With [`Readings::CALL`] every switch is off, so the call parser's path takes none of them:
//! one predictable branch per point, nothing more. The whole-text readings (`openers`,
//! `fences`, `pycollections`) are used by the document entry (`super::entry`) only, around
//! the parser.
//!
//! Nothing here calls the parser or an entry: this layer reads bytes (`super::scan`) and
//! returns plain values; the callers decide.

mod fences;
mod keys;
mod layout;
mod openers;
mod pycollections;
mod scalars;

use serde_json::Value;

use super::{Readings, SalvageOptions, SyntaxRepair};
use crate::RepairKind;

pub(super) use fences::fenced_blocks;
pub(super) use keys::{MisquotedKey, misquoted_key, value_missing_open_quote};
pub(super) use layout::{closing_fence, layout_tail, trim_cut_string};
pub(super) use openers::bare_opener;
pub(super) use pycollections::respell;
pub(super) use scalars::{bare_word, in_token, lenient_number, literal};

/// The default size limit for a document: larger than a call's, since documents are files.
pub const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// What to do with a document the text ended inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TruncationPolicy {
    /// Close it: keep what was read, drop what cannot be completed without inventing (a dangling
    /// key, a cut literal), close every open container (`truncation_closed`). For documents.
    #[default]
    Close,
    /// Refuse it with [`super::SalvageErrorKind::Syntax`] at the end of the text: the policy for
    /// calls to tools whose effects a partial value could change (DESIGN §5.1).
    Refuse,
}

/// Options for [`super::salvage_document`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DocumentOptions {
    /// Size and depth limits; `max_bytes` defaults to [`MAX_DOCUMENT_BYTES`].
    pub salvage: SalvageOptions,
    /// What to do when the text ends inside the document.
    pub truncation: TruncationPolicy,
    /// Drop raw line breaks, and the blanks around them, right before a string's closing quote:
    /// layout, not content (`"a": "text⏎"` reads as `"text"`, as json_repair reads it). An
    /// escaped `\n` is content and stays, and so does the end of a string the text ended
    /// inside. Off by default and never on for tool calls, where that newline may be the last
    /// line of a file.
    pub trim_layout: bool,
    /// Read number and literal spellings that name one value without inventing anything:
    /// Python's `.25`, `1.`, `+1`, `82_461_110` as numbers and `TRUE`, `Null` inside a
    /// container as literals (`python_literal`), and a bare token that starts with a digit and
    /// ends at `,`, `}` or `]` (`1/3`, `10-20`, `1.1.1`, a UUID) as the string it spells
    /// (`quotes_normalized`). Unquoted words as a string value (`{"city": New York}`), Python
    /// tuples and sets as lists (`(1, 2)`, `{'a', 'b'}`), `{foo: [}` closed, `\„` as `„`.
    /// `1e }` reads as `1`. What looks cut stays refused (`10-`), and so does prose
    /// (`{"a": ipsum, sic.}`) and `...`. Off by default and never on for tool calls.
    pub lenient_scalars: bool,
    /// A string value the text ends inside loses its trailing blanks (`"val\n` reads as
    /// `"val"`), and a backslash the text ends on is kept as a backslash (`"val\` reads as
    /// `"val\\"`): json_repair's default (`stream_stable=False`), where a streamed prefix is
    /// read as if it were the whole text. Off by default (a cut string keeps exactly what was
    /// read, as a stream's later prefixes will) and never on for tool calls.
    pub trim_cut_strings: bool,
}

impl Default for DocumentOptions {
    fn default() -> Self {
        Self {
            salvage: SalvageOptions::default().with_max_bytes(MAX_DOCUMENT_BYTES),
            truncation: TruncationPolicy::Close,
            trim_layout: false,
            lenient_scalars: false,
            trim_cut_strings: false,
        }
    }
}

impl DocumentOptions {
    /// These options with another truncation policy.
    #[must_use]
    pub const fn with_truncation(mut self, truncation: TruncationPolicy) -> Self {
        self.truncation = truncation;
        self
    }

    /// These options with other size and depth limits.
    #[must_use]
    pub const fn with_salvage(mut self, salvage: SalvageOptions) -> Self {
        self.salvage = salvage;
        self
    }

    /// These options with [`Self::trim_layout`] set.
    #[must_use]
    pub const fn with_trim_layout(mut self, trim_layout: bool) -> Self {
        self.trim_layout = trim_layout;
        self
    }

    /// These options with [`Self::lenient_scalars`] set.
    #[must_use]
    pub const fn with_lenient_scalars(mut self, lenient_scalars: bool) -> Self {
        self.lenient_scalars = lenient_scalars;
        self
    }

    /// These options with [`Self::trim_cut_strings`] set.
    #[must_use]
    pub const fn with_trim_cut_strings(mut self, trim_cut_strings: bool) -> Self {
        self.trim_cut_strings = trim_cut_strings;
        self
    }

    /// The parser's readings for these options.
    pub(super) const fn readings(&self) -> Readings {
        Readings {
            trim_layout: self.trim_layout,
            lenient_scalars: self.lenient_scalars,
            trim_cut_strings: self.trim_cut_strings,
            ..Readings::CALL
        }
    }
}

/// What [`super::salvage_document`] made of a text.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Document {
    /// The values found, in text order; never empty. More than one means several complete
    /// values back to back (`{…}{…}`, NDJSON); [`Self::into_value`] makes them one array.
    pub values: Vec<Value>,
    /// The repairs made, each kind once at the offset of its first occurrence; empty when the
    /// text was strict JSON.
    pub repairs: Vec<SyntaxRepair>,
    /// The text ended inside the last value, which was closed ([`TruncationPolicy::Close`]).
    pub truncated: bool,
}

impl Document {
    /// The one value, or an array of the values when the text held several.
    #[must_use]
    pub fn into_value(mut self) -> Value {
        if self.values.len() == 1 {
            self.values.pop().unwrap_or(Value::Null)
        } else {
            Value::Array(self.values)
        }
    }

    /// Whether the given kind was among the repairs.
    #[must_use]
    pub fn has(&self, kind: RepairKind) -> bool {
        self.repairs.iter().any(|r| r.kind == kind)
    }
}
