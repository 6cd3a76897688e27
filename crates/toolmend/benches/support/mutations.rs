//! The mutations of the `make_corpus.py` corpus's small and medium calls that `answer_digest`
//! hashes and `swallow_scan` checks: each call cut at [`POINTS`] places, and with one of the
//! [`JUNK`] snippets inserted there.

/// Snippets a model (or a transport) leaves in a call: stray closers, Python literals, quotes,
/// escapes, a line break, a member, a fence.
pub(crate) const JUNK: [&str; 12] = [
    ",}",
    " True",
    "\"",
    "\\u00e9",
    "'",
    "\\",
    "\n",
    ", \"k\": ",
    "}",
    "]",
    "None",
    "```",
];

/// How many places each call is cut or has junk inserted at.
pub(crate) const POINTS: usize = 16;

/// The [`POINTS`] places of `input`, evenly spread, each on a character boundary.
pub(crate) fn points(input: &str) -> Vec<usize> {
    (1..=POINTS)
        .map(|i| {
            let mut at = input.len() * i / (POINTS + 1);
            while !input.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect()
}

/// `input` with `junk` inserted at `at`.
pub(crate) fn insert(input: &str, at: usize, junk: &str) -> String {
    format!("{}{junk}{}", &input[..at], &input[at..])
}
