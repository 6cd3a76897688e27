//! The Arrow C data interface at the Python boundary: arrays in and out as PyCapsules.
//!
//! Any object with `__arrow_c_array__` (pyarrow, Polars, DuckDB, nanoarrow, arro3 arrays) is
//! imported by taking ownership of the producer's `ArrowArray` struct: the buffers stay where
//! the producer put them and are read in place. Results go out the same way, as an object whose
//! `__arrow_c_array__` hands the consumer our buffers (see the Arrow PyCapsule interface).
//! Imported data is checked in full (offsets in bounds, strings UTF-8) before it is read: the
//! producer is a stranger, and a bad buffer must be an error, not undefined behaviour.

use std::ffi::CString;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema, from_ffi, to_ffi};
use arrow_array::{ArrayRef, make_array};
use arrow_data::ArrayData;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

/// The array behind `object.__arrow_c_array__()`, read in place (no copy of its buffers).
///
/// `what` names the column in errors. A TypeError when the object does not speak the
/// protocol, a ValueError when what it exports is not a valid Arrow array.
#[allow(unsafe_code)]
pub(crate) fn import_array(object: &Bound<'_, PyAny>, what: &str) -> PyResult<ArrayRef> {
    let exported = object.call_method0("__arrow_c_array__").map_err(|e| {
        PyTypeError::new_err(format!(
            "column '{what}': not an Arrow array (no usable __arrow_c_array__: {e})"
        ))
    })?;
    let pair = exported.cast::<PyTuple>().map_err(|_| {
        PyTypeError::new_err(format!(
            "column '{what}': __arrow_c_array__ must return (schema, array) capsules"
        ))
    })?;
    if pair.len() != 2 {
        return Err(PyTypeError::new_err(format!(
            "column '{what}': __arrow_c_array__ must return (schema, array) capsules"
        )));
    }
    let schema = pair.get_item(0)?;
    let array = pair.get_item(1)?;
    let schema = capsule(&schema, c"arrow_schema", what)?;
    let array = capsule(&array, c"arrow_array", what)?;
    // SAFETY: the capsules are named as the protocol requires, so their pointers are an
    // `ArrowSchema` and an `ArrowArray`. The schema is only borrowed while its capsule is alive
    // (`schema` holds it); the array struct is moved out (its `release` is set to null in the
    // capsule, as the protocol asks of a consumer), so the producer's buffers now live as long
    // as the returned array.
    let data = unsafe {
        let array = FFI_ArrowArray::from_raw(array.cast::<FFI_ArrowArray>());
        let schema = &*schema.cast::<FFI_ArrowSchema>().cast_const();
        from_ffi(array, schema)
    }
    .map_err(|e| PyValueError::new_err(format!("column '{what}': {e}")))?;
    data.validate_full()
        .map_err(|e| PyValueError::new_err(format!("column '{what}': invalid Arrow data: {e}")))?;
    Ok(make_array(data))
}

fn capsule(
    object: &Bound<'_, PyAny>,
    name: &std::ffi::CStr,
    what: &str,
) -> PyResult<*mut std::ffi::c_void> {
    let capsule = object.cast::<PyCapsule>().map_err(|_| {
        PyTypeError::new_err(format!(
            "column '{what}': __arrow_c_array__ returned a non-capsule"
        ))
    })?;
    Ok(capsule.pointer_checked(Some(name))?.as_ptr())
}

/// An Arrow array for Python, exported through `__arrow_c_array__` (pass it to
/// `pyarrow.array` or `pyarrow.record_batch`; a struct array becomes a record batch).
///
/// The buffers are shared, not copied: each export hands the consumer a reference to them,
/// released when the consumer drops its array.
#[pyclass(frozen, module = "toolmend")]
pub(crate) struct ArrowArrayExport {
    data: ArrayData,
}

impl ArrowArrayExport {
    pub(crate) fn new(data: ArrayData) -> Self {
        Self { data }
    }
}

#[pymethods]
impl ArrowArrayExport {
    /// The Arrow PyCapsule interface: `(schema, array)` capsules. A requested schema is not
    /// honoured (the protocol allows that): the types are those of `result_schema()`.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let (array, schema) =
            to_ffi(&self.data).map_err(|e| PyValueError::new_err(e.to_string()))?;
        // A capsule drops its struct when it is collected; a consumer that imported it set
        // `release` to null first, so only an unconsumed export frees the buffers there.
        let schema = PyCapsule::new(py, schema, Some(CString::from(c"arrow_schema")))?;
        let array = PyCapsule::new(py, array, Some(CString::from(c"arrow_array")))?;
        Ok((schema, array))
    }

    fn __len__(&self) -> usize {
        self.data.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<ArrowArrayExport {} rows of {}>",
            self.data.len(),
            self.data.data_type()
        )
    }
}
