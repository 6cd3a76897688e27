//! Strict JSON straight into Python objects: the drop-in's path for valid input.
//!
//! `toolmend.loads` on valid JSON must cost about what `json.loads` costs. The general path
//! parses into a `serde_json::Value` (numbers as text, `arbitrary_precision`) and converts
//! that; this one builds the Python objects while it reads. It takes on only what it reads
//! exactly as that path does and gives up on everything else, which then goes the general way:
//! text that is not strict JSON (`Miss::Invalid`: serde_json refuses it too, so the lenient
//! parser can start at once), and strict JSON it leaves to serde_json (`Miss::NotFast`):
//! nesting deeper than [`MAX_DEPTH`], integers over 18 digits, numbers a float cannot hold,
//! unpaired `\u` surrogates. Strings and number spans are read by `toolmend`'s strict reader
//! (`toolmend::salvage::strict`), the one `repair_call` uses. So the value is the same on both paths: the same `int`/`float` split, the
//! last value of a repeated key at the place of its first, the same strings.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use toolmend::salvage::strict::{StringError, number_span, read_string};

/// Deepest nesting read here (serde_json refuses 128 levels; deeper text goes that way).
const MAX_DEPTH: usize = 100;

/// Why the fast path gave up.
pub(crate) enum Miss {
    /// Not strict JSON (serde_json refuses it as well).
    Invalid,
    /// Maybe strict JSON, but not for this path: the general one reads it.
    NotFast,
    /// Python failed (out of memory).
    Py(PyErr),
}

impl From<PyErr> for Miss {
    fn from(e: PyErr) -> Self {
        Self::Py(e)
    }
}

type Read<'py> = Result<Bound<'py, PyAny>, Miss>;

/// The value of `text` when it is strict JSON this path reads; see the module docs.
pub(crate) fn loads<'py>(py: Python<'py>, text: &str) -> Read<'py> {
    let mut r = Reader {
        py,
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    r.ws();
    let value = r.value(0)?;
    r.ws();
    if r.pos == r.bytes.len() {
        Ok(value)
    } else {
        Err(Miss::Invalid)
    }
}

struct Reader<'a, 'py> {
    py: Python<'py>,
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'py> Reader<'_, 'py> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Result<(), Miss> {
        if self.bytes.get(self.pos) == Some(&b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Miss::Invalid)
        }
    }

    fn value(&mut self, depth: usize) -> Read<'py> {
        match self.bytes.get(self.pos) {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(self.string()?.into_any()),
            Some(b't') => {
                self.word(b"true")?;
                Ok(PyBool::new(self.py, true).to_owned().into_any())
            }
            Some(b'f') => {
                self.word(b"false")?;
                Ok(PyBool::new(self.py, false).to_owned().into_any())
            }
            Some(b'n') => {
                self.word(b"null")?;
                Ok(self.py.None().into_bound(self.py))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Miss::Invalid),
        }
    }

    fn word(&mut self, word: &[u8]) -> Result<(), Miss> {
        if !self.bytes[self.pos..].starts_with(word) {
            return Err(Miss::NotFast);
        }
        self.pos += word.len();
        Ok(())
    }

    fn object(&mut self, depth: usize) -> Read<'py> {
        if depth > MAX_DEPTH {
            return Err(Miss::Invalid);
        }
        self.pos += 1;
        let dict = PyDict::new(self.py);
        self.ws();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(dict.into_any());
        }
        loop {
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(Miss::Invalid);
            }
            let key = self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            let value = self.value(depth)?;
            dict.set_item(key, value)?;
            self.ws();
            match self.bytes.get(self.pos) {
                Some(b',') => {
                    self.pos += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(dict.into_any());
                }
                _ => return Err(Miss::Invalid),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Read<'py> {
        if depth > MAX_DEPTH {
            return Err(Miss::NotFast);
        }
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(PyList::empty(self.py).into_any());
        }
        loop {
            items.push(self.value(depth)?);
            self.ws();
            match self.bytes.get(self.pos) {
                Some(b',') => {
                    self.pos += 1;
                    self.ws();
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(PyList::new(self.py, items)?.into_any());
                }
                _ => return Err(Miss::Invalid),
            }
        }
    }

    /// The string whose opening quote is at the current position.
    /// The string at the position (its `"`), read by `toolmend`'s strict reader: a lone
    /// surrogate, which `json.loads` takes and serde_json refuses, goes the general way.
    fn string(&mut self) -> Result<Bound<'py, PyString>, Miss> {
        let (content, end) = read_string(self.text, self.pos + 1).map_err(|e| match e {
            StringError::LoneSurrogate => Miss::NotFast,
            _ => Miss::Invalid,
        })?;
        self.pos = end;
        Ok(PyString::new(self.py, &content))
    }

    fn number(&mut self) -> Read<'py> {
        let start = self.pos;
        let span = number_span(self.bytes, start).ok_or(Miss::Invalid)?;
        self.pos = span.end;
        let token = &self.text[start..span.end];
        if span.is_float {
            let f: f64 = token.parse().map_err(|_| Miss::NotFast)?;
            if !f.is_finite() {
                return Err(Miss::NotFast);
            }
            return Ok(PyFloat::new(self.py, f).into_any());
        }
        if span.integer_digits > 18 {
            return Err(Miss::NotFast);
        }
        let n: i64 = token.parse().map_err(|_| Miss::NotFast)?;
        let Ok(int) = n.into_pyobject(self.py);
        Ok(int.into_any())
    }
}
