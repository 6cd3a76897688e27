//! `toolmend-ffi`: a C ABI over the `toolmend` library, for the Go package (`go/`).
//!
//! JSON text in, JSON text out, but for the hot path: `toolmend_mender_repair_call` returns a
//! compact record ([`ToolmendCall`]: codes and flags, and tagged fields only for what is not
//! the caller's own input). Every other function returns a [`ToolmendStatus`] code and writes
//! its result (or an error message) into a [`ToolmendBuf`] owned by Rust, which the caller
//! hands back to [`toolmend_buf_free`]. Handles (mender, session, recoverer) are opaque and
//! freed by their `_free` function. Every entry point runs under `catch_unwind`: a panic
//! becomes [`TOOLMEND_PANIC`] with its message, never an unwind across the boundary.
//!
//! The crate holds no logic: each function maps to the library's public API, shaped as
//! the Python face shapes it (`crates/toolmend-py`). The header is `go/toolmend.h`
//! (cbindgen; `.ci/run` checks it for drift).

mod bench;
mod buffer;
mod handles;
mod input;
mod record;
mod wire;

pub use bench::toolmend_bench_repair_call;
pub use buffer::ToolmendBuf;
pub use handles::{
    ToolmendMender, ToolmendRecoverer, ToolmendSession, toolmend_buf_free, toolmend_mender_free,
    toolmend_mender_info, toolmend_mender_new, toolmend_mender_repair_call,
    toolmend_mender_run_turn, toolmend_mender_stats, toolmend_recoverer_feed,
    toolmend_recoverer_finish, toolmend_recoverer_free, toolmend_recoverer_new,
    toolmend_session_free, toolmend_session_new, toolmend_session_new_user_turn,
};
pub use record::*;

/// A function's outcome: [`TOOLMEND_OK`], [`TOOLMEND_ERROR`] or [`TOOLMEND_PANIC`].
pub type ToolmendStatus = i32;
/// Success: the buffer holds the result as JSON text.
pub const TOOLMEND_OK: ToolmendStatus = 0;
/// The input was refused (bad JSON, bad options, null handle): the buffer holds the message.
pub const TOOLMEND_ERROR: ToolmendStatus = 1;
/// A bug in toolmend panicked; it was caught. The buffer holds the panic message.
pub const TOOLMEND_PANIC: ToolmendStatus = 2;

/// The crate version, as a NUL-terminated string.
const VERSION: &std::ffi::CStr = c"0.1.0";

/// The ABI's revision within a version, as this header declares it: bumped whenever a
/// function's signature, a struct, a code or the record's layout changes, and the version
/// symbol renamed with it (the archive's revision is in that symbol's name). 2:
/// `toolmend_mender_repair_call` returns a `ToolmendCall` record instead of JSON.
pub const TOOLMEND_ABI_REVISION: u32 = 2;

/// The archive's version, and its link-time check.
///
/// The symbol's name carries the version and the ABI revision: a binding built for another
/// names a symbol this archive does not export, so linking fails instead of calling through a
/// mismatched ABI. Rename it with `version` in the workspace and with `TOOLMEND_ABI_REVISION`
/// (a test checks they agree).
#[unsafe(no_mangle)]
pub extern "C" fn toolmend_version_0_1_0_abi2() -> *const std::ffi::c_char {
    VERSION.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_symbol_matches_the_crate_version() {
        assert_eq!(VERSION.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
        let symbol = format!(
            "toolmend_version_{}_abi{TOOLMEND_ABI_REVISION}",
            env!("CARGO_PKG_VERSION").replace('.', "_")
        );
        let source = include_str!("lib.rs");
        assert!(
            source.contains(&format!("fn {symbol}()")),
            "rename the symbol to {symbol}"
        );
    }
}
