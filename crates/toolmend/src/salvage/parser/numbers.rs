//! Numbers and literal words of the lenient parser: JSON's spellings, Python's `True`/`False`/
//! `None` (`python_literal`), `NaN`/`Infinity` refused, a number or word the text ends inside
//! left to truncation, and the document readings of both where the switches
//! ([`crate::salvage::Readings`]) ask for them.
//!
//! It owns reading one scalar at the parser's position; what follows the scalar is the main
//! loop's (`mod.rs`).

use serde_json::{Number, Value};

use super::{Parser, RunError, truncation};
use crate::RepairKind;
use crate::salvage::SalvageErrorKind;
use crate::salvage::document;
use crate::salvage::node::Node;
use crate::salvage::scan;

impl Parser<'_> {
    /// A number; `None` when the text ends in one that is not complete (`1.`, `-`).
    pub(super) fn read_number(&mut self) -> Result<Option<Value>, RunError> {
        let start = self.pos;
        let end = scan::number_end(self.bytes, start);
        if end - start == 1
            && matches!(self.bytes[start], b'-' | b'+')
            && self.bytes.get(end) == Some(&b'I')
        {
            self.pos = end;
            return self.read_word();
        }
        let parsed = small_integer(&self.bytes[start..end])
            .map_or_else(|| self.text[start..end].parse::<Number>(), Ok);
        if self.readings.lenient_scalars
            && (parsed.is_err() || self.bytes.get(end).is_some_and(|&b| document::in_token(b)))
            && let Some((value, token_end)) = document::lenient_number(self.text, start)
        {
            let kind = if value.is_string() {
                RepairKind::QuotesNormalized
            } else {
                RepairKind::PythonLiteral
            };
            self.log.note(kind, start);
            self.pos = token_end;
            return Ok(Some(value));
        }
        self.pos = end;
        match parsed {
            // A document's number followed by a stray quote and a delimiter (`12345", `): the
            // number, as json_repair reads it (the quote would open no string).
            Ok(n)
                if self.readings.lenient_scalars
                    && self.bytes.get(end) == Some(&b'"')
                    && scan::followed_by(self.bytes, end + 1, b",}]") =>
            {
                self.log.note(RepairKind::QuotesNormalized, end);
                self.pos = end + 1;
                Ok(Some(Value::Number(n)))
            }
            Ok(n) => Ok(Some(Value::Number(n))),
            Err(_) if end == self.bytes.len() => Ok(None),
            // A document's lone sign and then only blanks (`[- `): cut there, as at the end.
            Err(_)
                if self.readings.lenient_scalars
                    && end - start == 1
                    && scan::skip_ws(self.bytes, end) == self.bytes.len() =>
            {
                self.pos = self.bytes.len();
                Ok(None)
            }
            Err(_) => Err(self.error(SalvageErrorKind::Syntax, start)),
        }
    }

    /// A whole literal at the current position (`true` … `None`, as [`Self::read_word`] reads
    /// it) as a node; `None`, with nothing consumed, for any other word. Inlined into the main
    /// loop: a call's flags and nulls are most of its literals, and going through
    /// `read_word`'s `Result<Option<Value>>` cost ~150 instructions each.
    #[inline(always)]
    pub(super) fn read_literal(&mut self) -> Option<Node> {
        let start = self.pos;
        let (len, value, python) = literal_at(&self.bytes[start..])?;
        if python {
            self.log.note_each(RepairKind::PythonLiteral, start);
        }
        self.pos = start + len;
        Some(Node::Built(value))
    }

    /// A literal: `true`/`false`/`null`, Python's `True`/`False`/`None` (repaired), `NaN` and
    /// `Infinity` (refused). `None` when the text ends inside one.
    pub(super) fn read_word(&mut self) -> Result<Option<Value>, RunError> {
        let start = self.pos;
        // The common case: a whole literal, read without measuring the word first.
        if let Some((len, value, python)) = literal_at(&self.bytes[start..]) {
            if python {
                self.log.note(RepairKind::PythonLiteral, start);
            }
            self.pos = start + len;
            return Ok(Some(value));
        }
        let end = scan::word_end(self.bytes, start);
        let word = &self.text[start..end];
        let value = match word {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            "True" | "False" | "None" => {
                self.log.note(RepairKind::PythonLiteral, start);
                match word {
                    "True" => Value::Bool(true),
                    "False" => Value::Bool(false),
                    _ => Value::Null,
                }
            }
            "NaN" | "Infinity" => return Err(self.error(SalvageErrorKind::NonFinite, start)),
            _ if end == self.bytes.len() && truncation::is_literal_prefix(word) => {
                self.pos = end;
                return Ok(None);
            }
            // Inside a container only: a bare word alone is prose.
            _ if self.readings.lenient_scalars
                && !self.closers.is_empty()
                && document::literal(word).is_some() =>
            {
                self.log.note(RepairKind::PythonLiteral, start);
                document::literal(word).unwrap_or(Value::Null)
            }
            // A document's unquoted string (`{"name": John}`, `New York`): see `bare_word`.
            _ if self.readings.lenient_scalars
                && !self.closers.is_empty()
                && let Some(word_end) = document::bare_word(self.bytes, start) =>
            {
                self.log.note(RepairKind::QuotesNormalized, start);
                self.pos = word_end;
                return Ok(Some(Value::String(self.text[start..word_end].to_owned())));
            }
            _ => {
                let mut e = self.error(SalvageErrorKind::Syntax, start);
                // `{key: value}` closed right after the word is a placeholder in prose, not a
                // broken call: the search for the real object goes on past it.
                let after = scan::skip_ws(self.bytes, end);
                if self.closers.len() == 1 && self.bytes.get(after) == Some(&b'}') {
                    e.progressed = false;
                }
                return Err(e);
            }
        };
        self.pos = end;
        Ok(Some(value))
    }
}

/// The literal `rest` starts with when the word ends right after it (as [`scan::word_end`]
/// measures a word): its length, its value, and whether it is Python's spelling
/// (`python_literal`).
#[inline(always)]
fn literal_at(rest: &[u8]) -> Option<(usize, Value, bool)> {
    // Four bytes at once (a `bcmp` call per word cost more than the word), the value only once
    // the word matched.
    let fifth_is_e = || rest.get(4) == Some(&b'e');
    let (len, value, python) = match rest.first_chunk::<4>()? {
        b"true" => (4, Value::Bool(true), false),
        b"null" => (4, Value::Null, false),
        b"fals" if fifth_is_e() => (5, Value::Bool(false), false),
        b"True" => (4, Value::Bool(true), true),
        b"None" => (4, Value::Null, true),
        b"Fals" if fifth_is_e() => (5, Value::Bool(false), true),
        _ => return None,
    };
    if rest
        .get(len)
        .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    Some((len, value, python))
}

/// The common case of a number without going through `serde_json`: an integer of at most 18
/// digits with no leading zero, which `i64` holds exactly.
fn small_integer(token: &[u8]) -> Option<Number> {
    small_integer_value(token).map(Number::from)
}

/// [`small_integer`]'s value, without the `Number` (whose text, under `arbitrary_precision`, is
/// a `String` of its own): the token is then its text as serde_json writes it.
pub(super) fn small_integer_value(token: &[u8]) -> Option<i64> {
    let (negative, digits) = match token.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, token),
    };
    if digits.is_empty() || digits.len() > 18 || (digits[0] == b'0' && digits.len() > 1) {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + i64::from(d - b'0');
    }
    // serde_json reads `-0` as the float -0.0: leave it to serde_json.
    match (negative, n) {
        (true, 0) => None,
        (true, n) => Some(-n),
        (false, n) => Some(n),
    }
}
