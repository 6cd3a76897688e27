//! Text columns of an Arrow batch: read in place, and written with bounded offsets.
//!
//! Arrow spells a string column three ways (`utf8` with 32-bit offsets, `large_utf8` with
//! 64-bit ones, `utf8_view` with inline prefixes and shared buffers); engines pick any of them
//! (Polars exports views, DuckDB and pyarrow plain or large). [`TextColumn`] reads each row as
//! `&str` without a copy; an all-null column (`null` type) reads as nulls.

use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{Array, ArrayRef, LargeStringArray, StringArray, StringViewArray};
use arrow_schema::DataType;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// One imported string column.
pub(crate) enum TextColumn {
    Utf8(StringArray),
    Large(LargeStringArray),
    View(StringViewArray),
    /// A column of the `null` type: every row null.
    Nulls(usize),
}

impl TextColumn {
    /// The column as text, or a TypeError naming it and its type.
    pub(crate) fn new(array: &ArrayRef, what: &str) -> PyResult<Self> {
        let any = array.as_any();
        let column = match array.data_type() {
            DataType::Utf8 => any.downcast_ref::<StringArray>().cloned().map(Self::Utf8),
            DataType::LargeUtf8 => any
                .downcast_ref::<LargeStringArray>()
                .cloned()
                .map(Self::Large),
            DataType::Utf8View => any
                .downcast_ref::<StringViewArray>()
                .cloned()
                .map(Self::View),
            DataType::Null => Some(Self::Nulls(array.len())),
            _ => None,
        };
        column.ok_or_else(|| {
            PyTypeError::new_err(format!(
                "column '{what}' must be text (string, large_string or string_view), not {}",
                array.data_type()
            ))
        })
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Utf8(a) => a.len(),
            Self::Large(a) => a.len(),
            Self::View(a) => a.len(),
            Self::Nulls(n) => *n,
        }
    }

    /// The bytes of text the column holds (a capacity hint for a column built from it).
    pub(crate) fn value_bytes(&self) -> usize {
        match self {
            Self::Utf8(a) => a.value_data().len(),
            Self::Large(a) => a.value_data().len(),
            Self::View(a) => a.total_buffer_bytes_used(),
            Self::Nulls(_) => 0,
        }
    }

    /// Row `i`'s text; `None` when it is null or past the end.
    pub(crate) fn get(&self, i: usize) -> Option<&str> {
        if i >= self.len() {
            return None;
        }
        match self {
            Self::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            Self::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Self::View(a) => a.is_valid(i).then(|| a.value(i)),
            Self::Nulls(_) => None,
        }
    }
}

/// A `utf8` column being written, that refuses text past its 32-bit offsets instead of
/// panicking (the result columns keep the `string` type of `result_schema()`).
pub(crate) struct TextBuilder {
    inner: StringBuilder,
}

/// A result column would hold over 2 GiB of text: the batch must be split.
#[derive(Debug)]
pub(crate) struct ColumnFull;

impl TextBuilder {
    pub(crate) fn with_capacity(rows: usize, bytes: usize) -> Self {
        Self {
            inner: StringBuilder::with_capacity(rows, bytes),
        }
    }

    pub(crate) fn push(&mut self, text: Option<&str>) -> Result<(), ColumnFull> {
        match text {
            Some(text) => {
                let end = self.inner.values_slice().len().saturating_add(text.len());
                if i32::try_from(end).is_err() {
                    return Err(ColumnFull);
                }
                self.inner.append_value(text);
            }
            None => self.inner.append_null(),
        }
        Ok(())
    }

    /// Rows written so far.
    pub(crate) fn len(&self) -> usize {
        arrow_array::builder::ArrayBuilder::len(&self.inner)
    }

    pub(crate) fn finish(mut self) -> ArrayRef {
        Arc::new(self.inner.finish())
    }
}
