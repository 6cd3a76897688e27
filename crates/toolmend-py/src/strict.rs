//! Strict JSON straight into Python objects: the drop-in's path for valid input.
//!
//! `toolmend.loads` on valid JSON must cost about what `json.loads` costs. The general path
//! parses into a `serde_json::Value` (numbers as text, `arbitrary_precision`) and converts
//! that; this one builds the Python objects while it reads. It takes on only what it reads
//! exactly as that path does and gives up on everything else, which then goes the general way:
//! text that is not strict JSON (`Miss::Invalid`: serde_json refuses it too, so the lenient
//! parser can start at once), and strict JSON it leaves to serde_json (`Miss::NotFast`):
//! nesting deeper than [`MAX_DEPTH`], integers over 18 digits, numbers a float cannot hold,
//! `\u` surrogates. So the value is the same on both paths: the same `int`/`float` split, the
//! last value of a repeated key at the place of its first, the same strings.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};

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
    fn string(&mut self) -> Result<Bound<'py, PyString>, Miss> {
        let start = self.pos + 1;
        let mut i = start;
        // The common case: no escape, one slice of the text.
        while let Some(&b) = self.bytes.get(i) {
            match b {
                b'"' => {
                    self.pos = i + 1;
                    return Ok(PyString::new(self.py, &self.text[start..i]));
                }
                b'\\' => break,
                0..=0x1f => return Err(Miss::Invalid),
                _ => i += 1,
            }
        }
        let mut out = String::with_capacity(i - start + 16);
        out.push_str(&self.text[start..i]);
        loop {
            match self.bytes.get(i) {
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(PyString::new(self.py, &out));
                }
                Some(b'\\') => {
                    let e = self.bytes.get(i + 1).ok_or(Miss::Invalid)?;
                    i += 2;
                    out.push(match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let (c, next) = self.unicode(i)?;
                            i = next;
                            c
                        }
                        _ => return Err(Miss::Invalid),
                    });
                }
                Some(0..=0x1f) | None => return Err(Miss::Invalid),
                Some(_) => {
                    let run = self.bytes[i..]
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                        .map_or(self.bytes.len(), |n| i + n);
                    out.push_str(&self.text[i..run]);
                    i = run;
                }
            }
        }
    }

    /// The character of the `\u` escape whose hex digits start at `at` (a surrogate pair
    /// takes the next escape too), and where the escape ends.
    fn unicode(&self, at: usize) -> Result<(char, usize), Miss> {
        let first = hex4(self.bytes, at)?;
        if !(0xD800..0xE000).contains(&first) {
            return Ok((char::from_u32(first).ok_or(Miss::NotFast)?, at + 4));
        }
        // Only a high surrogate followed by an escaped low one is a character.
        if first >= 0xDC00 || self.bytes.get(at + 4..at + 6) != Some(b"\\u") {
            return Err(Miss::NotFast);
        }
        let second = hex4(self.bytes, at + 6)?;
        if !(0xDC00..0xE000).contains(&second) {
            return Err(Miss::NotFast);
        }
        let c = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
        Ok((char::from_u32(c).ok_or(Miss::NotFast)?, at + 10))
    }

    fn number(&mut self) -> Read<'py> {
        let start = self.pos;
        let b = self.bytes;
        let mut i = start + usize::from(b[start] == b'-');
        let int_start = i;
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits_end(b, i),
            _ => return Err(Miss::Invalid),
        }
        let int_digits = i - int_start;
        let mut float = false;
        if b.get(i) == Some(&b'.') {
            let end = digits_end(b, i + 1);
            if end == i + 1 {
                return Err(Miss::Invalid);
            }
            (i, float) = (end, true);
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            let end = digits_end(b, i);
            if end == i {
                return Err(Miss::Invalid);
            }
            (i, float) = (end, true);
        }
        self.pos = i;
        let token = &self.text[start..i];
        if float {
            let f: f64 = token.parse().map_err(|_| Miss::NotFast)?;
            if !f.is_finite() {
                return Err(Miss::NotFast);
            }
            return Ok(PyFloat::new(self.py, f).into_any());
        }
        if int_digits > 18 {
            return Err(Miss::NotFast);
        }
        let n: i64 = token.parse().map_err(|_| Miss::NotFast)?;
        let Ok(int) = n.into_pyobject(self.py);
        Ok(int.into_any())
    }
}

fn digits_end(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

fn hex4(b: &[u8], at: usize) -> Result<u32, Miss> {
    let digits = b.get(at..at + 4).ok_or(Miss::Invalid)?;
    let mut n = 0;
    for &d in digits {
        n = n * 16 + char::from(d).to_digit(16).ok_or(Miss::Invalid)?;
    }
    Ok(n)
}
