//! The Rust reference of the Go benchmark: the same `repair_call`, looped in Rust.
//!
//! Measurement only (no result crosses): `go test -bench` times Go's `RepairCall` against
//! this loop on the same mender and call, in the same process and run.

use crate::ToolmendStatus;
use crate::buffer::ToolmendBuf;
use crate::handles::{ToolmendMender, guarded, handle};
use crate::input::text;
use crate::record;

/// Calls `repair_call(name, arguments)` `iterations` times in Rust; with `encode` non-zero
/// each result is also written as the ABI's record (what a Go call adds on the Rust side).
/// `*out` holds the last record's body.
///
/// # Safety
/// `mender` is null or a live handle; each `(ptr, len)` pair is null with length 0 or `len`
/// readable bytes; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolmend_bench_repair_call(
    mender: *const ToolmendMender,
    name: *const u8,
    name_len: usize,
    arguments: *const u8,
    arguments_len: usize,
    iterations: u64,
    encode: i32,
    out: *mut ToolmendBuf,
) -> ToolmendStatus {
    guarded(out, || {
        // SAFETY: the caller's duty, as documented above.
        let mender = unsafe { handle("mender", mender) }?;
        // SAFETY: as above.
        let name = unsafe { text("name", name, name_len) }?;
        // SAFETY: as above.
        let arguments = unsafe { text("arguments", arguments, arguments_len) }?;
        let mut last = Vec::new();
        for _ in 0..iterations {
            let result = std::hint::black_box(mender.inner().repair_call(name, arguments));
            if encode != 0 {
                let (head, body) = record::encode(&result, name, arguments)?;
                std::hint::black_box(&head);
                // What the ABI hands over: the body as a boxed slice (no allocation when empty).
                last = body.into_boxed_slice().into_vec();
                std::hint::black_box(&last);
            }
        }
        Ok(last)
    })
}
