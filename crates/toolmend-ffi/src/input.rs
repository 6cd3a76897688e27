//! Reading the caller's bytes: pointer and length into `&str`, never past what was given.

use std::{slice, str};

/// Why an input could not be read.
#[derive(Debug)]
pub(crate) struct InputError(pub(crate) String);

/// The UTF-8 text at `ptr[..len]` (`""` for a null pointer with `len == 0`).
///
/// # Safety
/// `ptr` is null with `len == 0`, or points at `len` readable bytes that stay unchanged for
/// the duration of the call.
pub(crate) unsafe fn text<'a>(
    what: &str,
    ptr: *const u8,
    len: usize,
) -> Result<&'a str, InputError> {
    if ptr.is_null() {
        return if len == 0 {
            Ok("")
        } else {
            Err(InputError(format!(
                "{what}: null pointer with length {len}"
            )))
        };
    }
    // SAFETY: non-null, and `len` readable bytes that outlive the call (the caller's duty).
    let bytes = unsafe { slice::from_raw_parts(ptr, len) };
    str::from_utf8(bytes).map_err(|e| InputError(format!("{what} is not UTF-8: {e}")))
}
