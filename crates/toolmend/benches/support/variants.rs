//! The inputs the digests answer (`answer_digest`, `document_digest`), in their order: each
//! corpus case, and for the small and medium ones each cut at the mutation points, and with each
//! junk snippet inserted there, ended four ways.

use super::corpus::Case;
use super::mutations::{JUNK, insert, points};

/// How an input with junk inserted is ended: as it is, by a brace, a quote and a brace, a fence.
const ENDINGS: [&str; 4] = ["", "}", "\"}", "\n```"];

/// Calls `each` with every input of `cases`, in digest order.
pub(crate) fn for_each_variant(cases: &[Case], mut each: impl FnMut(&str)) {
    for case in cases {
        let input = case.input.as_str();
        each(input);
        if case.is_large() {
            continue;
        }
        for cut in points(input) {
            each(&input[..cut]);
            for junk in JUNK {
                for ending in ENDINGS {
                    let mut text = insert(input, cut, junk);
                    text.push_str(ending);
                    each(&text);
                }
            }
        }
    }
}
