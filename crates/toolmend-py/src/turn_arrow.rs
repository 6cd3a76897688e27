//! Whole turns as Arrow columns: the C data interface path of `toolmend.arrow.run_turns`.
//!
//! The text columns of the `toolmend turns` contract are imported from their
//! `__arrow_c_array__` capsules (no Python string per row), the rows run through
//! `turn_batch::run_all` with the GIL released, and the result columns (`error`, `content`,
//! `reasoning`, `calls`, `report`) are built as Arrow buffers in Rust and go back as one struct
//! array. Rows with an error get null `calls` and `report`; the rows after them go on.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, ListArray, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow_ffi::{ArrowArrayExport, import_array};
use crate::text_column::{ColumnFull, TextBuilder, TextColumn};
use crate::turn_batch::{REPORT_FIELDS, TurnColumns, TurnDefaults, TurnRows, run_all};

/// Runs every row of the columns; returns the result columns as one Arrow struct array.
///
/// `columns`: `message` and, when present, `id`, `session`, `model`, `tools`, `finish_reason`,
/// `options` (text columns: JSON text where the contract has JSON) and `new_user_turn` (a
/// boolean column), each an object with `__arrow_c_array__`.
#[pyfunction]
pub(crate) fn run_turn_columns(
    py: Python<'_>,
    columns: &Bound<'_, PyDict>,
    defaults: TurnDefaults,
) -> PyResult<ArrowArrayExport> {
    let text = |key: &str| -> PyResult<Option<Vec<Option<String>>>> {
        let Some(object) = columns.get_item(key)? else {
            return Ok(None);
        };
        if object.is_none() {
            return Ok(None);
        }
        let array = import_array(&object, key)?;
        let column = TextColumn::new(&array, key)?;
        Ok(Some(
            (0..column.len())
                .map(|i| column.get(i).map(str::to_owned))
                .collect(),
        ))
    };
    let messages = text("message")?
        .ok_or_else(|| PyValueError::new_err("run_turn_columns needs a 'message' column"))?;
    let rows = TurnRows {
        ids: text("id")?,
        sessions: text("session")?,
        models: text("model")?,
        tools: text("tools")?,
        finish_reasons: text("finish_reason")?,
        new_user_turns: flags(columns, "new_user_turn")?,
        options: text("options")?,
        messages,
    };
    let n = rows.messages.len();
    for (name, len) in [
        ("id", rows.ids.as_ref().map(Vec::len)),
        ("session", rows.sessions.as_ref().map(Vec::len)),
        ("model", rows.models.as_ref().map(Vec::len)),
        ("tools", rows.tools.as_ref().map(Vec::len)),
        ("finish_reason", rows.finish_reasons.as_ref().map(Vec::len)),
        ("new_user_turn", rows.new_user_turns.as_ref().map(Vec::len)),
        ("options", rows.options.as_ref().map(Vec::len)),
    ] {
        if let Some(len) = len.filter(|len| *len != n) {
            return Err(PyValueError::new_err(format!(
                "columns differ in length: message {n}, {name} {len}"
            )));
        }
    }
    let data = py
        .detach(|| to_arrow(run_all(&rows, &defaults)))
        .map_err(|ColumnFull| {
            PyValueError::new_err(
                "a result column would hold over 2 GiB: split the batch into smaller ones",
            )
        })?;
    Ok(ArrowArrayExport::new(data.into_data()))
}

/// A boolean column (or an all-null one) as flags per row.
fn flags(columns: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<Vec<Option<bool>>>> {
    let Some(object) = columns.get_item(key)? else {
        return Ok(None);
    };
    if object.is_none() {
        return Ok(None);
    }
    let array = import_array(&object, key)?;
    if array.data_type() == &DataType::Null {
        return Ok(Some(vec![None; array.len()]));
    }
    let flags = array
        .as_any()
        .downcast_ref::<BooleanArray>()
        .ok_or_else(|| {
            PyTypeError::new_err(format!(
                "column '{key}' must be boolean, not {}",
                array.data_type()
            ))
        })?;
    Ok(Some(flags.iter().collect()))
}

fn text<'a>(
    values: impl ExactSizeIterator<Item = Option<&'a str>>,
) -> Result<ArrayRef, ColumnFull> {
    let mut column = TextBuilder::with_capacity(values.len(), 0);
    for value in values {
        column.push(value)?;
    }
    Ok(column.finish())
}

fn offsets(values: &[i64]) -> Result<OffsetBuffer<i32>, ColumnFull> {
    let values: Vec<i32> = values
        .iter()
        .map(|v| i32::try_from(*v).map_err(|_| ColumnFull))
        .collect::<Result<_, _>>()?;
    Ok(OffsetBuffer::new(values.into()))
}

fn nullable(name: &str, data_type: DataType) -> Field {
    Field::new(name, data_type, true)
}

/// The flat result columns as the Arrow types of `turn_result_schema()`.
fn to_arrow(c: TurnColumns) -> Result<StructArray, ColumnFull> {
    let ran = NullBuffer::from(c.error.iter().map(Option::is_none).collect::<Vec<bool>>());
    let repair_fields = Fields::from(vec![
        nullable("kind", DataType::Utf8),
        nullable("path", DataType::Utf8),
    ]);
    let repair_item = Arc::new(nullable("item", DataType::Struct(repair_fields.clone())));
    let repairs = ListArray::new(
        Arc::clone(&repair_item),
        offsets(&c.repair_offsets)?,
        Arc::new(StructArray::new(
            repair_fields,
            vec![
                text(c.repair_kind.iter().map(|s| Some(*s)))?,
                text(c.repair_path.iter().map(|s| Some(s.as_str())))?,
            ],
            None,
        )),
        None,
    );
    let note_item = Arc::new(nullable("item", DataType::Utf8));
    let notes = ListArray::new(
        Arc::clone(&note_item),
        offsets(&c.note_offsets)?,
        text(c.notes.iter().map(|s| Some(s.as_str())))?,
        None,
    );
    let strings = |values: &[String]| text(values.iter().map(|s| Some(s.as_str())));
    let optional = |values: &[Option<String>]| text(values.iter().map(Option::as_deref));
    let call_fields = Fields::from(vec![
        nullable("id", DataType::Utf8),
        nullable("name", DataType::Utf8),
        nullable("origin", DataType::Utf8),
        nullable("status", DataType::Utf8),
        nullable("arguments", DataType::Utf8),
        nullable("arguments_text", DataType::Utf8),
        nullable("repairs", DataType::List(repair_item)),
        nullable("notes", DataType::List(note_item)),
        nullable("outcome", DataType::Utf8),
        nullable("error", DataType::Utf8),
        nullable("native_index", DataType::Int64),
    ]);
    let calls = StructArray::new(
        call_fields.clone(),
        vec![
            strings(&c.call_id)?,
            strings(&c.call_name)?,
            strings(&c.call_origin)?,
            strings(&c.call_status)?,
            optional(&c.call_arguments)?,
            strings(&c.call_arguments_text)?,
            Arc::new(repairs),
            Arc::new(notes),
            optional(&c.call_outcome)?,
            optional(&c.call_error)?,
            Arc::new(Int64Array::from(c.call_native_index)),
        ],
        None,
    );
    let call_item = Arc::new(nullable("item", DataType::Struct(call_fields)));
    let calls = ListArray::new(
        Arc::clone(&call_item),
        offsets(&c.call_offsets)?,
        Arc::new(calls),
        Some(ran.clone()),
    );
    let report_fields: Fields = REPORT_FIELDS
        .iter()
        .map(|name| nullable(name, DataType::Int64))
        .collect();
    let report = StructArray::new(
        report_fields.clone(),
        c.report
            .into_iter()
            .map(|counts| Arc::new(Int64Array::from(counts)) as ArrayRef)
            .collect(),
        Some(ran),
    );
    let fields = Fields::from(vec![
        nullable("error", DataType::Utf8),
        nullable("content", DataType::Utf8),
        nullable("reasoning", DataType::Utf8),
        nullable("calls", DataType::List(call_item)),
        nullable("report", DataType::Struct(report_fields)),
    ]);
    Ok(StructArray::new(
        fields,
        vec![
            optional(&c.error)?,
            optional(&c.content)?,
            optional(&c.reasoning)?,
            Arc::new(calls),
            Arc::new(report),
        ],
        None,
    ))
}
