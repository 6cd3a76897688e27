//! Which small object texts are worth the syntax-only check (`syntax.rs`): a few bytes that
//! strict JSON never shows there, looked at without reading the text (issue #31).
//!
//! The check costs a valid call a pass over its bytes for nothing, and nearly every call is
//! valid, so it runs only on a text that shows a sign of the faults models make in small calls:
//! it does not end with the root's `}` (cut off, something after it), a comma comes right
//! before that `}` (a trailing comma), or a `True`, `False` or `None` comes where a value
//! starts (after `:`, `,` or `[`, blanks between). Only the speed depends on it: a text that
//! shows no sign is read as before (the value-building read, then the seed), and a valid text
//! that shows one (`"x": "a, None"`) is checked and then read; both ways give the same answer.

use memchr::memchr3_iter;

use super::super::scan;

/// Whether the object text `bytes` shows a sign of not being strict JSON (see the module doc).
/// `root` is where the text's `{` is.
pub(super) fn looks_broken(bytes: &[u8], root: usize) -> bool {
    // No quoted key first (`'…'` keys): the value-building read fails there at once, as cheaply.
    if bytes.get(scan::skip_ws(bytes, root + 1)) != Some(&b'"') {
        return false;
    }
    let end = back_over_ws(bytes, bytes.len());
    if end == 0 || bytes[end - 1] != b'}' {
        return true;
    }
    let before = back_over_ws(bytes, end - 1);
    if before > 0 && bytes[before - 1] == b',' {
        return true;
    }
    memchr3_iter(b'T', b'F', b'N', bytes).any(|at| {
        let before = back_over_ws(bytes, at);
        before > 0 && matches!(bytes[before - 1], b':' | b',' | b'[')
    })
}

/// The position after the last non-blank byte before `at`.
fn back_over_ws(bytes: &[u8], mut at: usize) -> usize {
    while at > 0 && scan::is_ws(bytes[at - 1]) {
        at -= 1;
    }
    at
}
