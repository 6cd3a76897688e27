//! Request path normalisation: dot segments resolved, and a path that would climb above the
//! `--upstream` prefix refused.
//!
//! The proxy appends the request path to the upstream root, and the upstream (or a server in
//! front of it) resolves `..` — also written `%2e%2e`, `.%2E`, or hidden behind an encoded
//! `/` (`%2f`) or `\` — so `/../../admin` would reach above a root like
//! `http://host/tenant-a/v1` with the proxy's upstream key attached. Every segment is read
//! with its percent-escaped dots decoded; `.` segments go, `..` segments take the one before
//! them, and a `..` with nothing before it is refused. A segment that becomes a dot segment
//! only as some server reads it (an escaped `/` or `\`, `..;x`, `..%00`, `%252e`) is refused
//! too, since whether it climbs depends on the upstream's decoding. Any other segment is
//! forwarded exactly as written.

/// A request path that would leave the upstream prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request path climbs above the upstream root")]
pub struct PathEscapes;

/// The normalised form of a request path (no query): dot segments resolved, every other
/// segment as written. Must not fire on an ordinary path: one without dot segments comes back
/// unchanged (borrowed).
///
/// # Errors
///
/// [`PathEscapes`] when a `..` would climb above the root, or a segment hides a separator
/// beside a dot segment.
pub fn normalise_path(path: &str) -> Result<std::borrow::Cow<'_, str>, PathEscapes> {
    // `*` or a relative path would be glued to the root's last segment (`/v1*`).
    let body = path.strip_prefix('/').ok_or(PathEscapes)?;
    let needs_work = body
        .split('/')
        .any(|segment| dot_segment(segment).is_some() || ambiguous(segment));
    if !needs_work {
        return Ok(std::borrow::Cow::Borrowed(path));
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut trailing_slash = false;
    for segment in body.split('/') {
        trailing_slash = false;
        if let Some(dots) = dot_segment(segment) {
            trailing_slash = true;
            if dots == 2 {
                kept.pop().ok_or(PathEscapes)?;
            }
            continue;
        }
        if ambiguous(segment) && hides_dot_segment(segment) {
            return Err(PathEscapes);
        }
        kept.push(segment);
    }
    let mut out = String::with_capacity(path.len());
    for segment in &kept {
        out.push('/');
        out.push_str(segment);
    }
    if trailing_slash || out.is_empty() {
        out.push('/');
    }
    if out == path {
        return Ok(std::borrow::Cow::Borrowed(path));
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// `Some(1)` for a `.` segment, `Some(2)` for `..`, with escaped dots (`%2e`, `%2E`) decoded.
fn dot_segment(segment: &str) -> Option<u8> {
    let bytes = segment.as_bytes();
    let mut dots = 0u8;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'.' {
            i += 1;
        } else if bytes[i] == b'%'
            && bytes.get(i + 1) == Some(&b'2')
            && matches!(bytes.get(i + 2), Some(b'e' | b'E'))
        {
            i += 3;
        } else {
            return None;
        }
        dots += 1;
        if dots > 2 {
            return None;
        }
    }
    (dots > 0).then_some(dots)
}

/// Whether the upstream might read more into a segment than [`dot_segment`] does: it holds
/// an escape other than a dot's, a `\\`, or a path parameter (`..;x`, read as `..` by some
/// servers).
fn ambiguous(segment: &str) -> bool {
    segment.contains(['%', '\\', ';'])
}

/// Escape rounds tried on a segment (`%252e` is `%2e` once decoded, `.` twice).
const DECODE_ROUNDS: usize = 3;

/// Whether a segment becomes or holds a dot segment once percent-decoded (up to
/// [`DECODE_ROUNDS`] times) and split at `/` and `\\`, each part cut at `;` and NUL.
fn hides_dot_segment(segment: &str) -> bool {
    let mut bytes = segment.as_bytes().to_vec();
    for _ in 0..DECODE_ROUNDS {
        let has_dot_part = bytes.split(|b| matches!(b, b'/' | b'\\')).any(|part| {
            let part = part.split(|b| matches!(b, b';' | 0)).next().unwrap_or(part);
            matches!(part, b"." | b"..")
        });
        if has_dot_part {
            return true;
        }
        let decoded = percent_decode(&bytes);
        if decoded == bytes {
            return false;
        }
        bytes = decoded;
    }
    // Still escapes after every round: refuse rather than guess.
    bytes.contains(&b'%')
}

/// One round of `%XX` decoding; malformed escapes stay as written.
fn percent_decode(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(&h), Some(&l)) = (bytes.get(i + 1), bytes.get(i + 2))
            && let (Some(h), Some(l)) = (hex(h), hex(l))
        {
            out.push(u8::try_from(h * 16 + l).unwrap_or(b'%'));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// How deep a path ends up under the root when a server decodes everything a server might
    /// (`%XX` escapes, `\` as `/`, `;…` parameters dropped) and resolves dot segments;
    /// `None` when it climbs above the root at any point.
    fn depth_as_a_server_reads_it(path: &str) -> Option<usize> {
        let mut decoded = String::new();
        let bytes = path.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let escaped = (bytes[i] == b'%')
                .then(|| path.get(i + 1..i + 3))
                .flatten()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(byte) = escaped {
                decoded.push(char::from(byte));
                i += 3;
            } else {
                decoded.push(char::from(bytes[i]));
                i += 1;
            }
        }
        let mut depth = 0usize;
        for segment in decoded.replace('\\', "/").split('/') {
            match segment.split(';').next().unwrap_or("") {
                "." | "" => {}
                ".." => depth = depth.checked_sub(1)?,
                _ => depth += 1,
            }
        }
        Some(depth)
    }

    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "..", ".", "%2e%2e", "%2E.", ".%2e", "%2e", "v1", "a", "%2f", "%2F..", "%5c", "\\",
            "..;", ";x", "%252e", "...", "/", "//", "%", "%2", "chat", "é",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// No accepted path leaves the root, however a server decodes it, and an accepted
        /// path is a fixed point.
        #[test]
        fn no_accepted_path_leaves_the_root(
            pieces in prop::collection::vec((piece(), any::<bool>()), 0..12),
        ) {
            let mut path = String::new();
            for (piece, slash) in pieces {
                if slash {
                    path.push('/');
                }
                path.push_str(piece);
            }
            let path = format!("/{path}");
            if let Ok(normal) = normalise_path(&path) {
                prop_assert!(normal.starts_with('/'));
                prop_assert!(
                    depth_as_a_server_reads_it(&normal).is_some(),
                    "{path} -> {normal} leaves the root"
                );
                prop_assert_eq!(normalise_path(&normal).unwrap(), normal.clone());
            }
        }
    }

    #[test]
    fn ordinary_paths_are_untouched() {
        for path in [
            "/v1/chat/completions",
            "/",
            "/v1/models/a%2Fb",
            "/x/.hidden/...",
            "/a;b",
        ] {
            assert!(
                matches!(normalise_path(path), Ok(std::borrow::Cow::Borrowed(p)) if p == path),
                "{path}"
            );
        }
    }

    #[test]
    fn dot_segments_resolve_within_the_root() {
        assert_eq!(normalise_path("/v1/x/../models").unwrap(), "/v1/models");
        assert_eq!(normalise_path("/v1/./models/.").unwrap(), "/v1/models/");
        assert_eq!(normalise_path("/v1/%2e%2E/models").unwrap(), "/models");
        assert_eq!(normalise_path("/a/..").unwrap(), "/");
    }

    #[test]
    fn climbing_above_the_root_is_refused() {
        for path in [
            "/../../admin/keys",
            "/%2e%2e/%2e%2e/admin/keys",
            "/v1/../../admin",
            "/.%2E/admin",
            "/v1/a%2f..%2f..%2fadmin",
            "/v1/a%5C..%5c..",
            "/v1/..\\..\\admin",
            "/..",
            "/..;/admin",
            "/v1/..;x/..;y/admin",
            "*",
            "v1/models",
            "/..%3b/admin",
            "/%252e%252e/admin",
            "/..%00/admin",
        ] {
            assert_eq!(normalise_path(path), Err(PathEscapes), "{path}");
        }
    }
}
