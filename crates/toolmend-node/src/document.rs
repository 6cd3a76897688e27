//! Documents of any root read leniently: the base of the `jsonrepair`-compatible function.
//!
//! The same document mode the Python package's json_repair drop-in uses
//! (`toolmend::salvage::salvage_document`), with the truncation policy and the document
//! readings as options. A failure is a value here (`error`), which the TypeScript layer turns
//! into the `JSONRepairError`-shaped exception jsonrepair users catch.

use napi::{Error, Result, Status};
use napi_derive::napi;
use toolmend::salvage::{
    DocumentOptions, SalvageErrorKind, SalvageOptions, TruncationPolicy, salvage_document,
};

use crate::utf16;

/// Options of `repairDocument`; each defaults to the jsonrepair-compatible reading.
#[napi(object)]
#[derive(Debug, Default)]
pub struct DocumentReadOptions {
    /// `close` (keep what was read and close it, the default) or `refuse`.
    pub truncation: Option<String>,
    /// Text longer than this many bytes is refused.
    pub max_bytes: Option<u32>,
    /// Nesting deeper than this is refused.
    pub max_depth: Option<u32>,
    /// Drop raw line breaks right before a string's closing quote (default off).
    pub trim_layout: Option<bool>,
    /// Read Python and bare-token spellings that name one value (default on).
    pub lenient_scalars: Option<bool>,
    /// A cut string loses its trailing blanks (default off).
    pub trim_cut_strings: Option<bool>,
}

/// Why a text could not be read.
#[napi(object)]
#[derive(Debug)]
pub struct DocumentError {
    /// `too_large`, `too_deep`, `no_json`, `non_finite` or `syntax`.
    pub kind: String,
    /// A sentence saying what went wrong and where.
    pub message: String,
    /// Where it went wrong, as a UTF-16 index into the text.
    pub position: u32,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in bytes of the line (0 before its first byte).
    pub column: u32,
}

/// What `repairDocument` made of a text.
#[napi(object)]
#[derive(Debug)]
pub struct DocumentResult {
    /// The repaired document as JSON text (compact); absent when the text was strict JSON
    /// (then it is the answer as given) or could not be read.
    pub text: Option<String>,
    /// Set when the text could not be read.
    pub error: Option<DocumentError>,
    /// The repairs made: kind names, each once.
    pub repairs: Vec<String>,
    /// The text ended inside the document, which was closed.
    pub truncated: bool,
}

fn read_options(given: DocumentReadOptions) -> Result<DocumentOptions> {
    let size = |n: u32| usize::try_from(n).unwrap_or(usize::MAX);
    let defaults = DocumentOptions::default();
    let policy = match given.truncation.as_deref() {
        None | Some("close") => TruncationPolicy::Close,
        Some("refuse") => TruncationPolicy::Refuse,
        Some(other) => {
            return Err(Error::new(
                Status::InvalidArg,
                format!("truncation must be 'close' or 'refuse', not {other:?}"),
            ));
        }
    };
    let limits = SalvageOptions::default()
        .with_max_bytes(given.max_bytes.map_or(defaults.salvage.max_bytes, size))
        .with_max_depth(given.max_depth.map_or(defaults.salvage.max_depth, size));
    Ok(defaults
        .with_truncation(policy)
        .with_salvage(limits)
        .with_trim_layout(given.trim_layout.unwrap_or(false))
        .with_lenient_scalars(given.lenient_scalars.unwrap_or(true))
        .with_trim_cut_strings(given.trim_cut_strings.unwrap_or(false)))
}

/// Reads `text` as one JSON document of any root, repairing what toolmend repairs without
/// guessing; several values back to back (`{…}{…}`, NDJSON) become one array.
#[napi]
pub fn repair_document(
    text: String,
    options: Option<DocumentReadOptions>,
) -> Result<DocumentResult> {
    let options = read_options(options.unwrap_or_default())?;
    // Strict JSON is the answer as given: checked without building its value (the document
    // reading's own strict parse builds one, which only this check's answer is needed from).
    if text.len() <= options.salvage.max_bytes
        && serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok()
    {
        return Ok(DocumentResult {
            text: None,
            error: None,
            repairs: Vec::new(),
            truncated: false,
        });
    }
    Ok(match salvage_document(&text, &options) {
        Ok(doc) => {
            let strict = doc.repairs.is_empty() && !doc.truncated && doc.values.len() == 1;
            let repairs = doc
                .repairs
                .iter()
                .map(|r| r.kind.name().to_owned())
                .collect();
            let truncated = doc.truncated;
            DocumentResult {
                text: (!strict).then(|| doc.into_value().to_string()),
                error: None,
                repairs,
                truncated,
            }
        }
        Err(e) => {
            let (kind, what) = match e.kind {
                SalvageErrorKind::TooLarge => ("too_large", "Text over the size limit"),
                SalvageErrorKind::TooDeep => ("too_deep", "Nesting over the depth limit"),
                SalvageErrorKind::NoJson => ("no_json", "No JSON in the text"),
                SalvageErrorKind::NonFinite => ("non_finite", "NaN or Infinity is not JSON"),
                _ => ("syntax", "JSON that cannot be read without guessing"),
            };
            let position = utf16::index(&text, e.offset);
            let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
            DocumentResult {
                text: None,
                error: Some(DocumentError {
                    kind: kind.to_owned(),
                    message: format!("{what} at position {position}"),
                    position,
                    line: count(e.line),
                    column: count(e.column),
                }),
                repairs: Vec::new(),
                truncated: false,
            }
        }
    })
}
