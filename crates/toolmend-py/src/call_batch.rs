//! A batch of recorded calls as Arrow columns: the engine of `toolmend.arrow.repair_calls`.
//!
//! The `name`, `arguments` and (optional) `tools` columns are read in place through the Arrow
//! C data interface, every row is repaired with the GIL released for the whole batch, and the
//! four result columns go back the same way, as one struct array (`status`,
//! `arguments_repaired`, `repairs`, `error`). No Python object is made per row.
//!
//! Rows never raise: a null `name` or `arguments` is judged as empty text (nothing is filled
//! in), and a row whose tool set is null or cannot be read is `unvalidated` with an error
//! saying why (fail closed: never `valid`). Only a wrong column type, or a result column over
//! 2 GiB of text, is an error for the batch.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, ListArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use toolmend::CallResult;

use crate::Mender;
use crate::arrow_ffi::{ArrowArrayExport, import_array};
use crate::text_column::{ColumnFull, TextBuilder, TextColumn};

/// Where each row's mender comes from.
enum RowTools {
    /// One tool set for the batch.
    One(Py<Mender>),
    /// Per row: an index into `menders` (`Err` holds why that tool set is unusable), or `None`
    /// for a row with a null `tools` cell.
    PerRow {
        menders: Vec<Result<Py<Mender>, String>>,
        rows: Vec<Option<u32>>,
    },
}

/// Repairs every row of the columns; returns the result columns as one Arrow struct array.
///
/// `names`, `arguments` and `tools`: objects with `__arrow_c_array__` (text columns of the
/// same length). Either `mender` (the batch's tool set) or `tools` with `mender_for`, a
/// callable from a row's tool set text to its `Mender` (called once per distinct text, with
/// the GIL, before the batch runs; what it raises becomes the error of those rows).
#[pyfunction]
#[pyo3(signature = (names, arguments, mender = None, tools = None, mender_for = None))]
pub(crate) fn repair_call_columns(
    py: Python<'_>,
    names: &Bound<'_, PyAny>,
    arguments: &Bound<'_, PyAny>,
    mender: Option<Py<Mender>>,
    tools: Option<&Bound<'_, PyAny>>,
    mender_for: Option<&Bound<'_, PyAny>>,
) -> PyResult<ArrowArrayExport> {
    let names_array = import_array(names, "name")?;
    let arguments_array = import_array(arguments, "arguments")?;
    let names = TextColumn::new(&names_array, "name")?;
    let arguments = TextColumn::new(&arguments_array, "arguments")?;
    let rows = names.len();
    if arguments.len() != rows {
        return Err(PyValueError::new_err(format!(
            "columns differ in length: name {rows}, arguments {}",
            arguments.len()
        )));
    }
    let row_tools = match (mender, tools, mender_for) {
        (Some(mender), _, _) => RowTools::One(mender),
        (None, Some(tools), Some(mender_for)) => {
            let array = import_array(tools, "tools")?;
            let column = TextColumn::new(&array, "tools")?;
            if column.len() != rows {
                return Err(PyValueError::new_err(format!(
                    "columns differ in length: name {rows}, tools {}",
                    column.len()
                )));
            }
            per_row_tools(&column, mender_for)?
        }
        _ => {
            return Err(PyValueError::new_err(
                "repair_call_columns needs a mender, or tools with mender_for",
            ));
        }
    };
    let data = py
        .detach(|| repair_rows(&names, &arguments, &row_tools))
        .map_err(|ColumnFull| {
            PyValueError::new_err(
                "a result column would hold over 2 GiB of text: split the batch into smaller ones",
            )
        })?;
    Ok(ArrowArrayExport::new(data.into_data()))
}

/// The distinct tool sets of the column, each resolved once through `mender_for`.
fn per_row_tools(column: &TextColumn, mender_for: &Bound<'_, PyAny>) -> PyResult<RowTools> {
    let mut index: HashMap<&str, u32> = HashMap::new();
    let mut menders = Vec::new();
    let mut rows = Vec::with_capacity(column.len());
    for i in 0..column.len() {
        let Some(text) = column.get(i) else {
            rows.push(None);
            continue;
        };
        if let Some(&at) = index.get(text) {
            rows.push(Some(at));
            continue;
        }
        let at = u32::try_from(menders.len())
            .map_err(|_| PyValueError::new_err("too many distinct tool sets in one batch"))?;
        let mender = match mender_for.call1((text,)) {
            Ok(found) => found
                .extract::<Py<Mender>>()
                .map_err(|e| format!("mender_for gave no Mender: {e}")),
            Err(e) => Err(e.to_string()),
        };
        menders.push(mender);
        index.insert(text, at);
        rows.push(Some(at));
    }
    Ok(RowTools::PerRow { menders, rows })
}

/// The result columns being written.
struct ResultColumns {
    status: TextBuilder,
    repaired: TextBuilder,
    offsets: Vec<i32>,
    kind: TextBuilder,
    path: TextBuilder,
    error: TextBuilder,
}

impl ResultColumns {
    fn with_capacity(rows: usize, argument_bytes: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Self {
            status: TextBuilder::with_capacity(rows, rows * 8),
            repaired: TextBuilder::with_capacity(rows, argument_bytes),
            offsets,
            kind: TextBuilder::with_capacity(0, 0),
            path: TextBuilder::with_capacity(0, 0),
            error: TextBuilder::with_capacity(rows, 0),
        }
    }

    fn push(&mut self, call: &CallResult) -> Result<(), ColumnFull> {
        self.status.push(Some(call.status.label()))?;
        let dispatchable = call.is_dispatchable();
        self.repaired
            .push(dispatchable.then_some(call.arguments_text.as_str()))?;
        for repair in &call.repairs {
            self.kind.push(Some(repair.kind.name()))?;
            self.path.push(Some(&repair.path))?;
        }
        self.end_repairs()?;
        self.error.push(call.error.as_deref())
    }

    /// A row that was not run: `unvalidated`, with the reason.
    fn push_refused(&mut self, reason: &str) -> Result<(), ColumnFull> {
        self.status.push(Some("unvalidated"))?;
        self.repaired.push(None)?;
        self.end_repairs()?;
        self.error.push(Some(reason))
    }

    /// Closes the row's list of repairs (the entries pushed since the last row).
    fn end_repairs(&mut self) -> Result<(), ColumnFull> {
        let entries = i32::try_from(self.kind.len()).map_err(|_| ColumnFull)?;
        self.offsets.push(entries);
        Ok(())
    }

    fn finish(self) -> StructArray {
        let entry_fields = Fields::from(vec![
            Field::new("kind", DataType::Utf8, true),
            Field::new("path", DataType::Utf8, true),
        ]);
        let entries = StructArray::new(
            entry_fields.clone(),
            vec![self.kind.finish(), self.path.finish()],
            None,
        );
        let item = Arc::new(Field::new("item", DataType::Struct(entry_fields), true));
        let repairs = ListArray::new(
            Arc::clone(&item),
            OffsetBuffer::new(self.offsets.into()),
            Arc::new(entries),
            None,
        );
        let columns: Vec<ArrayRef> = vec![
            self.status.finish(),
            self.repaired.finish(),
            Arc::new(repairs),
            self.error.finish(),
        ];
        let fields = Fields::from(vec![
            Field::new("status", DataType::Utf8, true),
            Field::new("arguments_repaired", DataType::Utf8, true),
            Field::new("repairs", DataType::List(item), true),
            Field::new("error", DataType::Utf8, true),
        ]);
        StructArray::new(fields, columns, None)
    }
}

/// Every row through its mender, in order.
fn repair_rows(
    names: &TextColumn,
    arguments: &TextColumn,
    tools: &RowTools,
) -> Result<StructArray, ColumnFull> {
    let rows = names.len();
    let argument_bytes = arguments.value_bytes();
    let mut out = ResultColumns::with_capacity(rows, argument_bytes);
    for i in 0..rows {
        let mender = match tools {
            RowTools::One(mender) => mender,
            RowTools::PerRow { menders, rows } => match rows.get(i).copied().flatten() {
                None => {
                    out.push_refused("no tool set for this row (null in the 'tools' column)")?;
                    continue;
                }
                Some(at) => match menders.get(at as usize) {
                    Some(Ok(mender)) => mender,
                    Some(Err(reason)) => {
                        out.push_refused(&format!("the row's tool set cannot be read: {reason}"))?;
                        continue;
                    }
                    None => {
                        out.push_refused("the row's tool set was not resolved")?;
                        continue;
                    }
                },
            },
        };
        let call = mender
            .get()
            .inner
            .repair_call(names.get(i).unwrap_or(""), arguments.get(i).unwrap_or(""));
        out.push(&call)?;
    }
    Ok(out.finish())
}
