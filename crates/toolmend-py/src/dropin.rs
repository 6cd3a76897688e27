//! The json_repair drop-in's common case in one crossing: `loads(text)` and
//! `repair_json(text)` with their defaults (issue #31).
//!
//! The Python functions (`python/toolmend/jsonrepair.py`) used to cross into Rust two or three
//! times per call (a strict attempt, then `salvage_values` with its keywords) and then combine,
//! log and, for `repair_json`, serialise with `json.dumps`, which cost more than the repair
//! itself on a 100-byte call. Here the whole answer is made in one call, the same answer as that
//! path: strict JSON as the strict reader (`salvage/strict/`) reads it, anything else as
//! `salvage_document` reads it with the drop-in's readings, a bare `True`/`False`/`None` as
//! `""`. What is not the common case (several values back to back, which json_repair combines;
//! a text toolmend refuses, which goes to `json.loads`) comes back as `NotImplemented`, and the
//! Python path answers it as before.
//!
//! Whether a text is strict JSON is asked first of serde_json's validating skip
//! (`IgnoredAny`: no allocation, ~0.1 µs on 100 bytes), which accepts everything the strict
//! reader and `serde_json::Value` accept: a broken text then costs no Python objects built and
//! dropped before the error is found at its end (a trailing comma).

use pyo3::prelude::*;
use pyo3::types::PyString;
use serde::de::IgnoredAny;
use serde_json::Value;
use toolmend::salvage::{DocumentOptions, salvage_broken_document, salvage_document};

use crate::DETACH_BYTES;
use crate::convert::to_py;
use crate::pydumps::dumps;
use crate::strict::{self, Miss};

/// The drop-in's readings (`salvage_values`' defaults): layout and lenient scalars on,
/// a cut string trimmed unless `stream_stable`.
fn options(stream_stable: bool) -> DocumentOptions {
    DocumentOptions::default()
        .with_trim_layout(true)
        .with_lenient_scalars(true)
        .with_trim_cut_strings(!stream_stable)
}

/// How a text was read.
enum Read<'py> {
    /// Strict JSON, read into Python objects.
    Object(Bound<'py, PyAny>),
    /// One value read by `salvage_document`.
    Value(Value),
    /// A bare `True`, `False` or `None`: json_repair's `""`.
    BareLiteral,
    /// Not the common case: the Python path answers.
    Other,
}

/// Reads `text` as the Python path did: the strict reader into Python objects when `objects`
/// (else strict JSON is left to `salvage_document`, which tries serde_json first), then the
/// bare-literal rule, then the lenient reading.
fn read<'py>(
    py: Python<'py>,
    text: &str,
    stream_stable: bool,
    objects: bool,
) -> PyResult<Read<'py>> {
    let options = options(stream_stable);
    if text.len() > DETACH_BYTES {
        if is_bare_literal(text) {
            return Ok(Read::BareLiteral);
        }
        return Ok(one(py.detach(|| salvage_document(text, &options))));
    }
    let strict_json = serde_json::from_str::<IgnoredAny>(text).is_ok();
    // Whether the text may still be strict JSON (then `salvage_document` tries serde_json).
    let mut maybe_strict = strict_json;
    if strict_json && objects {
        match strict::loads(py, text) {
            Ok(value) => return Ok(Read::Object(value)),
            Err(Miss::Invalid) => maybe_strict = false,
            Err(Miss::NotFast) => {}
            Err(Miss::Py(e)) => return Err(e),
        }
    }
    if is_bare_literal(text) {
        return Ok(Read::BareLiteral);
    }
    Ok(one(if maybe_strict {
        salvage_document(text, &options)
    } else {
        salvage_broken_document(text, &options)
    }))
}

/// The one value of a document; anything else is the Python path's.
fn one(doc: Result<toolmend::salvage::Document, toolmend::salvage::SalvageError>) -> Read<'static> {
    match doc {
        Ok(mut doc) if doc.values.len() == 1 => doc.values.pop().map_or(Read::Other, Read::Value),
        _ => Read::Other,
    }
}

/// `text.strip() in ("True", "False", "None")`, with Python's `str.strip` blanks.
fn is_bare_literal(text: &str) -> bool {
    matches!(text.trim_matches(is_py_space), "True" | "False" | "None")
}

/// Python's `str.isspace` (what `str.strip()` removes): Unicode White_Space and the four
/// separator controls U+001C–U+001F.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// `toolmend.loads(text)` with the default options (and `stream_stable`): the value, or
/// `NotImplemented` when the Python path must answer (several values, a refused text).
#[pyfunction]
#[pyo3(signature = (text, stream_stable = false))]
pub(crate) fn loads_document<'py>(
    py: Python<'py>,
    text: &str,
    stream_stable: bool,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match read(py, text, stream_stable, true)? {
        Read::Object(value) => value,
        Read::Value(value) => to_py(py, &value)?,
        Read::BareLiteral => PyString::new(py, "").into_any(),
        Read::Other => py.NotImplemented().into_bound(py),
    })
}

/// `toolmend.repair_json(text)` with the default options (and `stream_stable`): the JSON text
/// as `json.dumps` writes the value, `""` for a value that is `""`, or `NotImplemented` when
/// the Python path must answer.
#[pyfunction]
#[pyo3(signature = (text, stream_stable = false))]
pub(crate) fn repair_document<'py>(
    py: Python<'py>,
    text: &str,
    stream_stable: bool,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match read(py, text, stream_stable, false)? {
        Read::Value(Value::String(s)) if s.is_empty() => PyString::new(py, "").into_any(),
        Read::Value(value) => PyString::new(py, &dumps(py, &value)?).into_any(),
        Read::BareLiteral => PyString::new(py, "").into_any(),
        Read::Object(_) | Read::Other => py.NotImplemented().into_bound(py),
    })
}
