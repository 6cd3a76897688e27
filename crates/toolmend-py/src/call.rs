//! `Call`, the Python face of one call's answer, and the spare `Call`s a mender refills.
//!
//! Making and freeing a Python object and its box was a third of what `Mender.repair_call` costs
//! from Python on a small call (issue #31, the Python crossing, bench/README.md "Round 32"): a
//! mender keeps the last two `Call`s it handed out and writes the next answer into one that only
//! it still holds, the usual loop (repair, dispatch, drop or overwrite the name) never making a
//! new object. No caller can tell: an object is refilled only when its reference count says
//! nothing but the mender holds it, and `Call` takes no weak references.

use std::sync::{Mutex, OnceLock};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use toolmend::CallResult;

use crate::convert::to_py;
use crate::{Repair, py_repr, repr_clip};

/// Everything toolmend decided about one call.
///
/// `status` is `valid`, `repaired`, `recovered`, `invalid`, `suppressed` or `unvalidated`;
/// `arguments` the final arguments as Python objects (`None` when they could not be read; an
/// `invalid` call that parsed keeps them); `arguments_text` the JSON text to dispatch (the input
/// bytes when valid); `error` the retry message for the model; `outcome` `local-salvage`,
/// `re-prompt`, `gave-up` or `None`.
///
/// The attributes are read from the library's answer when first asked for (`arguments` and
/// `repairs` built once, then the same objects on every access): a caller that reads only
/// `status` and `arguments_text` pays for nothing else (issue #31, the Python crossing).
///
/// A `Call` that nothing refers to any more may be reused by its `Mender` for a later answer:
/// keep the object (not its `id()`) to keep an answer.
#[pyclass(module = "toolmend")]
pub(crate) struct Call {
    // One box holding the answer and its lazily built Python views: pyo3 moves a `Call` three or
    // four times between the method's return and the new object's memory, so the `Call` itself
    // is one pointer (a ~230-byte `CallResult` inline made those moves memcpys of freshly written
    // bytes; issue #31, bench/README.md "Round 30").
    //
    // Not frozen: a `Call` that only its mender still holds is refilled with the next answer,
    // through pyo3's borrow check (`SpareCalls`). Python code sees no setter.
    answer: Box<Answer>,
}

/// What a [`Call`] holds: the library's answer and the Python objects built from it on demand.
struct Answer {
    result: CallResult,
    arguments: OnceLock<Py<PyAny>>,
    repairs: OnceLock<Vec<Py<Repair>>>,
}

impl Answer {
    fn new(result: CallResult) -> Self {
        Self {
            result,
            arguments: OnceLock::new(),
            repairs: OnceLock::new(),
        }
    }
}

impl Call {
    pub(crate) fn from_owned(result: CallResult) -> Self {
        Self {
            answer: Box::new(Answer::new(result)),
        }
    }

    fn repair_objects(&self, py: Python<'_>) -> PyResult<&Vec<Py<Repair>>> {
        if let Some(built) = self.answer.repairs.get() {
            return Ok(built);
        }
        let built = self
            .answer
            .result
            .repairs
            .iter()
            .map(|rep| {
                Py::new(
                    py,
                    Repair {
                        kind: rep.kind.name().to_owned(),
                        path: rep.path.clone(),
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        // Another thread may have built them first: every reader then sees the same objects.
        Ok(self.answer.repairs.get_or_init(|| built))
    }

    fn arguments_object(&self, py: Python<'_>) -> PyResult<&Py<PyAny>> {
        if let Some(built) = self.answer.arguments.get() {
            return Ok(built);
        }
        let built = match &self.answer.result.arguments {
            Some(v) => to_py(py, v)?.unbind(),
            None => py.None(),
        };
        Ok(self.answer.arguments.get_or_init(|| built))
    }
}

#[pymethods]
impl Call {
    #[getter]
    fn id(&self) -> &str {
        &self.answer.result.id
    }

    #[getter]
    pub(crate) fn name(&self) -> &str {
        &self.answer.result.name
    }

    #[getter]
    fn origin(&self) -> &'static str {
        self.answer.result.origin.label()
    }

    #[getter]
    pub(crate) fn status(&self) -> &'static str {
        self.answer.result.status.label()
    }

    #[getter]
    fn arguments(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.arguments_object(py)?.clone_ref(py))
    }

    #[getter]
    fn arguments_text(&self) -> &str {
        &self.answer.result.arguments_text
    }

    #[getter]
    fn repairs(&self, py: Python<'_>) -> PyResult<Vec<Py<Repair>>> {
        Ok(self
            .repair_objects(py)?
            .iter()
            .map(|r| r.clone_ref(py))
            .collect())
    }

    #[getter]
    fn notes(&self) -> Vec<String> {
        self.answer.result.notes.clone()
    }

    #[getter]
    fn outcome(&self) -> Option<&'static str> {
        self.answer.result.outcome.map(|o| o.label())
    }

    #[getter]
    fn error(&self) -> Option<&str> {
        self.answer.result.error.as_deref()
    }

    #[getter]
    fn native_index(&self) -> Option<usize> {
        self.answer.result.native_index
    }

    /// Whether the call may be dispatched (`valid`, `repaired` or `recovered`).
    #[getter]
    fn dispatchable(&self) -> bool {
        self.answer.result.is_dispatchable()
    }

    /// Whether a repair of `kind` was made.
    fn has(&self, kind: &str) -> bool {
        self.answer
            .result
            .repairs
            .iter()
            .any(|r| r.kind.name() == kind)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let kinds: Vec<&str> = self
            .answer
            .result
            .repairs
            .iter()
            .map(|r| r.kind.name())
            .collect();
        let mut out = format!(
            "Call(name={}, status={}, arguments_text={}",
            py_repr(py, &*self.answer.result.name),
            py_repr(py, self.status()),
            py_repr(py, repr_clip(&self.answer.result.arguments_text))
        );
        if !kinds.is_empty() {
            out.push_str(&format!(", repairs={}", py_repr(py, kinds)));
        }
        if let Some(error) = &self.answer.result.error {
            out.push_str(&format!(", error={}", py_repr(py, repr_clip(error))));
        }
        out.push(')');
        out
    }

    /// Everything about the call as plain Python values (dicts, lists, str, int, None), for
    /// logs and JSON: the attributes, `repairs` as dicts, and `dispatchable`.
    pub(crate) fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("id", self.id())?;
        d.set_item("name", self.name())?;
        d.set_item("origin", self.origin())?;
        d.set_item("status", self.status())?;
        d.set_item("arguments", self.arguments_object(py)?.bind(py))?;
        d.set_item("arguments_text", self.arguments_text())?;
        let repairs = self
            .repair_objects(py)?
            .iter()
            .map(|r| r.borrow(py).to_dict(py))
            .collect::<PyResult<Vec<_>>>()?;
        d.set_item("repairs", repairs)?;
        d.set_item("notes", &self.answer.result.notes)?;
        d.set_item("outcome", self.outcome())?;
        d.set_item("error", self.error())?;
        d.set_item("native_index", self.native_index())?;
        d.set_item("dispatchable", self.dispatchable())?;
        Ok(d)
    }
}

/// Answers with more than this many bytes of arguments text get a `Call` of their own, never a
/// spare one: a spare keeps its last answer alive until it is refilled.
const SPARE_BYTES: usize = 4 * 1024;

/// How many `Call`s a mender keeps: two, so that both usual loops refill one. A loop that drops
/// each result (`mender.repair_call(...)` as a statement, or a function that returns) leaves the
/// last one free; a loop that names the result (`call = mender.repair_call(...)`) still holds the
/// last one when it asks again, and has let go of the one before.
const SPARES: usize = 2;

/// The last [`Call`]s a mender handed out, refilled when Python has let go of them.
#[derive(Default)]
pub(crate) struct SpareCalls(Mutex<Spares>);

#[derive(Default)]
struct Spares {
    calls: [Option<Py<Call>>; SPARES],
    /// The slot the next new `Call` takes: the slots take turns (a refill does not move it).
    next: usize,
}

impl std::fmt::Debug for SpareCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SpareCalls")
    }
}

impl SpareCalls {
    /// `result` as a Python `Call`: a spare one refilled when only this mender holds it, else a
    /// new one, kept as a spare in the slot whose turn it is.
    #[inline]
    pub(crate) fn hand_out(&self, py: Python<'_>, result: CallResult) -> PyResult<Py<Call>> {
        if result.arguments_text.len() > SPARE_BYTES {
            return Py::new(py, Call::from_owned(result));
        }
        // Held only with the GIL held and never across Python code: a miss is another thread
        // (or a finalizer) in here, which then gets a new `Call`.
        let Ok(mut spares) = self.0.try_lock() else {
            return Py::new(py, Call::from_owned(result));
        };
        for spare in spares.calls.iter().flatten() {
            if spare.get_refcnt(py) == 1
                && let Ok(mut held) = spare.bind(py).try_borrow_mut()
            {
                // The slot's reference is the only one: no Python code can reach this object,
                // so refilling it is the same as handing out a new one. (The old answer's
                // Python objects are plain values and `Repair`s: freeing them runs no Python
                // code.)
                *held.answer = Answer::new(result);
                drop(held);
                return Ok(spare.clone_ref(py));
            }
        }
        let call = Py::new(py, Call::from_owned(result))?;
        let slot = spares.next;
        spares.next = (slot + 1) % SPARES;
        let older = spares.calls[slot].replace(call.clone_ref(py));
        drop(spares);
        // Still held elsewhere (else it would have been refilled): this only lets go of it.
        drop(older);
        Ok(call)
    }
}
