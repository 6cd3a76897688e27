//! JSON Pointers (RFC 6901), built while walking an instance.
//!
//! Ground-floor vocabulary beside [`crate::limits`], the repair kinds and the errors: salvage
//! names the keys it dropped with them and the repair stages name the fields they changed, so
//! they belong to neither stage (syntax knows no schema: `salvage` imports nothing from
//! `repair`).

/// Appends one reference token to `pointer`, escaping `~` and `/`.
pub(crate) fn push(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Appends an array index to `pointer`.
pub(crate) fn push_index(pointer: &mut String, index: usize) {
    use std::fmt::Write;
    let _ = write!(pointer, "/{index}");
}

/// Whether `pointer` is `ancestor` or lies below it.
pub(crate) fn is_within(pointer: &str, ancestor: &str) -> bool {
    pointer
        .strip_prefix(ancestor)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The pointer as a field path for people: `/edits/0/old_text` → `edits[0].old_text`.
pub(crate) fn display(pointer: &str) -> String {
    let mut out = String::new();
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(&token);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_escaped_pointers() {
        let mut p = String::new();
        push(&mut p, "a/b");
        push(&mut p, "m~n");
        push_index(&mut p, 3);
        assert_eq!(p, "/a~1b/m~0n/3");
    }

    #[test]
    fn within_respects_token_boundaries() {
        assert!(is_within("/a/b", "/a"));
        assert!(is_within("/a", "/a"));
        assert!(is_within("/a", ""));
        assert!(!is_within("/ab", "/a"));
    }

    #[test]
    fn displays_field_paths() {
        assert_eq!(display("/edits/0/old_text"), "edits[0].old_text");
        assert_eq!(display("/paths"), "paths");
        assert_eq!(display("/a~1b"), "a/b");
        assert_eq!(display(""), "");
    }
}
