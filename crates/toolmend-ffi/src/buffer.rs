//! The byte buffers handed to C: allocated by Rust, freed only by `toolmend_buf_free`.

use std::ptr;

/// A byte buffer owned by Rust (UTF-8 JSON text, or an error message).
///
/// The caller reads `len` bytes at `ptr` and hands the buffer back to `toolmend_buf_free`
/// exactly once; it never frees `ptr` itself (the allocators differ).
#[repr(C)]
#[derive(Debug)]
pub struct ToolmendBuf {
    /// The first byte (null for an empty buffer).
    pub ptr: *mut u8,
    /// The number of bytes (and of allocated bytes: the buffer is a boxed slice).
    pub len: usize,
}

impl ToolmendBuf {
    /// An empty buffer that owns nothing.
    pub(crate) const EMPTY: Self = Self {
        ptr: ptr::null_mut(),
        len: 0,
    };

    /// Moves `bytes` into a buffer the caller owns.
    pub(crate) fn from_vec(bytes: Vec<u8>) -> Self {
        if bytes.is_empty() {
            return Self::EMPTY;
        }
        // A boxed slice: its allocation is exactly `len` bytes, so `len` is all `free` needs.
        let boxed = bytes.into_boxed_slice();
        let len = boxed.len();
        Self {
            ptr: Box::into_raw(boxed).cast::<u8>(),
            len,
        }
    }

    /// Frees a buffer made by [`ToolmendBuf::from_vec`].
    ///
    /// # Safety
    /// `self` was returned by this crate and is freed once.
    pub(crate) unsafe fn free(self) {
        if self.ptr.is_null() {
            return;
        }
        let slice = ptr::slice_from_raw_parts_mut(self.ptr, self.len);
        // SAFETY: `ptr`/`len` are a `Box<[u8]>` leaked by `from_vec`, handed back once (the
        // caller's duty).
        drop(unsafe { Box::from_raw(slice) });
    }
}
