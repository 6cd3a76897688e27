//! Any request path: the proxy's normaliser either refuses it or returns a path that no
//! server decoding it (`%XX` escapes, `\` as `/`, `;…` parameters dropped, dot segments
//! resolved) reads as above the upstream root, and that normalises to itself (issue #25).
#![no_main]

// The module is compiled in on its own (it needs only `thiserror`), so fuzzing it does not
// build the proxy's HTTP stack with the sanitizer.
#[path = "../../crates/toolmend-proxy/src/path.rs"]
#[allow(dead_code)]
mod path;

use libfuzzer_sys::fuzz_target;

/// How deep `path` ends under the root as a server may read it; `None` if it climbs above.
fn depth_as_a_server_reads_it(path: &str) -> Option<usize> {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| path.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        if let Some(byte) = escaped {
            decoded.push(byte);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    let decoded = String::from_utf8_lossy(&decoded).replace('\\', "/");
    let mut depth = 0usize;
    for segment in decoded.split('/') {
        match segment.split(';').next().unwrap_or("") {
            "." | "" => {}
            ".." => depth = depth.checked_sub(1)?,
            _ => depth += 1,
        }
    }
    Some(depth)
}

fuzz_target!(|path: &str| {
    if let Ok(normal) = path::normalise_path(path) {
        assert!(normal.starts_with('/'), "{path:?} -> {normal:?}");
        assert!(
            depth_as_a_server_reads_it(&normal).is_some(),
            "{path:?} -> {normal:?} leaves the root"
        );
        assert_eq!(path::normalise_path(&normal).as_deref(), Ok(&*normal));
    }
});
