//! Dotted keys: how a nested property path is written as one flat key, and read back.
//!
//! # The escape rule
//!
//! A path `["a", "b", "c"]` is written `a.b.c`. Inside each segment, a backslash is written `\\`
//! and a dot `\.`, so a real property named `file.name` under `config` is `config.file\.name`,
//! and it cannot be confused with `config` → `file` → `name`.
//!
//! Reading is lenient where that is unambiguous: a backslash followed by anything other than `.`
//! or `\` (or at the end of the key) is a literal backslash, so `a\b` reads as the one segment
//! `a\b`. Whether a segment is really a declared property, and what to do when a model forgot the
//! escape, is the schema's business (see `unflatten`).

/// Writes a property path as one flat key, escaping `\` and `.` inside segments.
pub(crate) fn join_dotted_key<S: AsRef<str>>(segments: &[S]) -> String {
    let mut key = String::new();
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            key.push('.');
        }
        push_escaped(&mut key, segment.as_ref());
    }
    key
}

/// Appends one segment with its `\` and `.` escaped.
pub(crate) fn push_escaped(out: &mut String, segment: &str) {
    for c in segment.chars() {
        if matches!(c, '\\' | '.') {
            out.push('\\');
        }
        out.push(c);
    }
}

/// Splits a flat key at its unescaped dots and unescapes each segment.
///
/// The inverse of [`join_dotted_key`]: `split_dotted_key(&join_dotted_key(p)) == p` for every
/// path `p` of at least one segment. A key without dots is one segment; empty segments are kept
/// (`a..b` is `["a", "", "b"]`) so nothing is silently dropped.
pub(crate) fn split_dotted_key(key: &str) -> Vec<String> {
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some(&next @ ('\\' | '.')) => {
                    current.push(next);
                    chars.next();
                }
                _ => current.push('\\'),
            },
            '.' => segments.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    segments.push(current);
    segments
}

/// Whether a key may hold a path or an escape, so that reading it could change it.
pub(crate) fn may_be_dotted(key: &str) -> bool {
    key.contains(['.', '\\'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_are_joined_with_dots() {
        assert_eq!(
            join_dotted_key(&["user", "profile", "name"]),
            "user.profile.name"
        );
        assert_eq!(
            split_dotted_key("user.profile.name"),
            ["user", "profile", "name"]
        );
    }

    #[test]
    fn dots_and_backslashes_inside_names_are_escaped() {
        let table: &[(&[&str], &str)] = &[
            (&["config", "file.name"], r"config.file\.name"),
            (&["a.b"], r"a\.b"),
            (&[r"dir\", "x"], r"dir\\.x"),
            (&[r"a\.b"], r"a\\\.b"),
            (&["", "x", ""], ".x."),
        ];
        for (path, key) in table {
            assert_eq!(join_dotted_key(path), *key, "{path:?}");
            assert_eq!(split_dotted_key(key), *path, "{key}");
        }
    }

    #[test]
    fn a_lone_backslash_is_literal() {
        assert_eq!(split_dotted_key(r"a\b.c"), [r"a\b", "c"]);
        assert_eq!(split_dotted_key(r"a\"), [r"a\"]);
    }

    #[test]
    fn only_dots_and_backslashes_make_a_key_dotted() {
        assert!(may_be_dotted("a.b"));
        assert!(may_be_dotted(r"a\b"));
        assert!(!may_be_dotted("file_path"));
    }
}
