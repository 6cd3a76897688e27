//! The audit tally for Python: `toolmend.arrow.audit`'s counts, made by the library's
//! [`toolmend::audit::Tally`], the one `toolmend audit` uses, so both count the same rows alike.
//!
//! Rows are the columns `run_turn_rows` takes; each batch runs with the GIL released and its
//! results go straight into the tally (no result columns are built). The report comes back as
//! the rows of `toolmend audit --format jsonl`, one dict per dimension and key.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyList;
use toolmend::audit::{LineError, Tally};

use crate::convert::to_py;
use crate::turn_batch::{TurnDefaults, TurnRows, for_each_row, row_model};

/// Counts of turns by model, tool and repair kind, fed batch by batch.
#[pyclass(frozen, module = "toolmend")]
pub(crate) struct AuditTally {
    tally: Mutex<Tally>,
    /// Rows counted so far: the line numbers of unreadable rows go on across batches.
    rows: Mutex<u64>,
}

#[pymethods]
impl AuditTally {
    /// An empty tally keeping at most `max_keys` distinct keys per dimension.
    #[new]
    #[pyo3(signature = (max_keys = toolmend::audit::MAX_KEYS))]
    fn new(max_keys: usize) -> Self {
        Self {
            tally: Mutex::new(Tally::new(max_keys)),
            rows: Mutex::new(0),
        }
    }

    /// Runs the rows (as `run_turn_rows` does, sessions shared within the batch) and counts
    /// them; a row that cannot be run counts as a rejected line of its model.
    fn add_rows(&self, py: Python<'_>, rows: TurnRows, defaults: TurnDefaults) {
        py.detach(|| {
            let mut tally = self.tally.lock().unwrap_or_else(|e| e.into_inner());
            let mut counted = self.rows.lock().unwrap_or_else(|e| e.into_inner());
            for_each_row(&rows, &defaults, |i, ran| {
                *counted += 1;
                match ran {
                    Ok(ran) => tally.add_turn(&ran.model, &ran.turn, &ran.result),
                    Err(message) => {
                        let line = *counted;
                        let model = row_model(&rows, i, &defaults);
                        let message = format!("row {line} is rejected: {message}");
                        tally.add_error(line, LineError::Rejected, &model, message);
                    }
                }
            });
        });
    }

    /// The report: one dict per dimension and key, `toolmend audit --format jsonl`'s rows.
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = self.tally.lock().unwrap_or_else(|e| e.into_inner()).rows();
        let items = rows
            .iter()
            .map(|row| to_py(py, row))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }
}
