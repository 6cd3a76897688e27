//! Runs the `toolmend` binary as a user runs it (shared by the CLI test files).

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs the binary on raw stdin bytes with extra environment variables (`RUST_LOG` is removed
/// unless given).
pub(crate) fn toolmend_with(args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolmend"));
    command.env_remove("RUST_LOG");
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(bytes) = stdin {
        input.write_all(bytes).expect("write stdin");
    }
    drop(input);
    child.wait_with_output().expect("the binary finishes")
}
