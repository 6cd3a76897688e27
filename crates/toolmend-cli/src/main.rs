//! The `toolmend` command.

fn main() {}
