//! Python objects to and from `serde_json::Value`, bounded in depth.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// Deepest Python structure converted to JSON (tool lists and messages are shallow; this bounds
/// the recursion on a self-referencing or hostile object).
const MAX_DEPTH: usize = 256;

/// A Python object (dict, list, str, int, float, bool, None, or a pydantic model such as the
/// OpenAI SDK's) as JSON.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_value_at(obj, 0)
}

fn to_value_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err("structure nested too deeply"));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        let text = obj.str()?;
        let number: Number = text
            .to_cow()?
            .parse()
            .map_err(|_| PyValueError::new_err("integer not representable in JSON"))?;
        return Ok(Value::Number(number));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let n = Number::from_f64(f.value())
            .ok_or_else(|| PyValueError::new_err("NaN and Infinity are not JSON"))?;
        return Ok(Value::Number(n));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = k
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("JSON object keys must be str"))?;
            map.insert(key.to_cow()?.into_owned(), to_value_at(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l.iter().map(|v| to_value_at(&v, depth + 1)).collect();
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().map(|v| to_value_at(&v, depth + 1)).collect();
    }
    // pydantic models (the openai and anthropic SDKs' types).
    if obj.hasattr("model_dump")? {
        let kwargs = PyDict::new(obj.py());
        kwargs.set_item("mode", "json")?;
        kwargs.set_item("exclude_unset", true)?;
        let dumped = obj.call_method("model_dump", (), Some(&kwargs))?;
        return to_value_at(&dumped, depth + 1);
    }
    Err(PyTypeError::new_err(format!(
        "cannot convert {} to JSON",
        obj.get_type().name()?
    )))
}

/// JSON as Python objects: numbers that fit become `int`, other integers big `int`s, the rest
/// `float` (as `json.loads` does).
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => number_to_py(py, n)?,
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(PyString::new(py, k), to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// A JSON number as the Python `int` or `float` `json.loads` makes of it.
pub(crate) fn number_to_py<'py>(py: Python<'py>, n: &Number) -> PyResult<Bound<'py, PyAny>> {
    if let Some(i) = n.as_i64() {
        return Ok(i.into_pyobject(py)?.into_any());
    }
    if let Some(u) = n.as_u64() {
        return Ok(u.into_pyobject(py)?.into_any());
    }
    // arbitrary_precision: the number's text as written.
    let text = n.to_string();
    if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        let f: f64 = text
            .parse()
            .map_err(|_| PyValueError::new_err(format!("bad number {text}")))?;
        return Ok(PyFloat::new(py, f).into_any());
    }
    // A big integer: Python's int() reads it exactly.
    py.get_type::<PyInt>().call1((text,))
}
