//! Linker setup for a Node-API addon (the `napi_*` symbols come from the node process).

fn main() {
    napi_build::setup();
}
