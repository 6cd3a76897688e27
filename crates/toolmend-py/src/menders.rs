//! The process-wide cache of compiled menders (the library's [`MenderCache`]), shared by the
//! batch functions: `toolmend.arrow`'s calls (through [`cached_mender`]) and turns.
//!
//! A worker that sees one tool set compiles it once, whichever function it calls; the cache is
//! bounded in entries and bytes and keyed by the tools' text and the whole [`MenderOptions`].

use std::sync::{Arc, LazyLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;
use toolmend::{MenderCache, MenderOptions};

use crate::{Mender, ToolSet, ToolSpecError, mender_options};

/// Compiled menders by tools and options, for the whole process.
static MENDERS: LazyLock<MenderCache> = LazyLock::new(MenderCache::default);

/// The cached mender for tools already read as JSON, with `options`.
pub(crate) fn for_value(tools: &Value, options: &MenderOptions) -> Arc<toolmend::Mender> {
    MENDERS.get_value(tools, options)
}

/// A `Mender` over the process-wide cache: compiled on the first call for these tools and
/// options, shared after (the engine of `toolmend.arrow`'s tool sets).
///
/// `tools`: a `Mender` (returned as it is), JSON text of a list of tool objects (keyed by
/// that text), or anything `Mender` accepts. `options`: `Mender`'s keywords. Raises
/// `ValueError` for text that is not JSON and `ToolSpecError` for one that is not a list.
#[pyfunction]
#[pyo3(signature = (tools, **options))]
pub(crate) fn cached_mender(
    py: Python<'_>,
    tools: &Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<Mender>> {
    if let Ok(mender) = tools.cast::<Mender>() {
        return Ok(mender.clone().unbind());
    }
    let options = mender_options(options)?;
    let inner = if let Ok(text) = tools.cast::<PyString>() {
        let text = text.to_str()?;
        let value: Value = serde_json::from_str(text)
            .map_err(|e| PyValueError::new_err(format!("tools are not JSON: {e}")))?;
        if !value.is_array() {
            return Err(ToolSpecError::new_err(
                "tools must be a list of tool objects",
            ));
        }
        MENDERS.get(text, &options)
    } else {
        let (_, source) = ToolSet::resolve(tools)?;
        MENDERS.get_value(&source, &options)
    };
    Py::new(
        py,
        Mender {
            inner,
            spares: crate::SpareCalls::default(),
        },
    )
}
