//! Document readings at a string's end: layout before the closing quote (`trim_layout`), a cut
//! string's trailing blanks (`trim_cut_strings`), a closing fence right after a cut string.

use crate::salvage::scan;

/// The end of a string value the text ended inside, read as json_repair reads it by default
/// ([`DocumentOptions::trim_cut_strings`]): a backslash the text ends on (an odd run of them) is
/// kept as a backslash, then trailing blanks are dropped.
pub(in crate::salvage) fn trim_cut_string(bytes: &[u8], read: &mut String) {
    let slashes = bytes.iter().rev().take_while(|&&b| b == b'\\').count();
    if slashes % 2 == 1 {
        read.push('\\');
    }
    read.truncate(read.trim_end().len());
}

/// How many bytes of layout end the string `read`, whose closing delimiter ends right before
/// `after` in `bytes`: the raw blanks before that delimiter when they hold a line break, else 0.
/// A blank escaped by a backslash is content; so is everything when the delimiter was inserted
/// (the byte before `after` is no closing quote).
pub(in crate::salvage) fn layout_tail(bytes: &[u8], after: usize, read: &str) -> usize {
    let close = if after >= 1 && matches!(bytes[after - 1], b'"' | b'\'') {
        after - 1
    } else if after >= 3 && &bytes[after - 3..after] == scan::RIGHT_DOUBLE {
        after - 3
    } else {
        return 0;
    };
    let mut start = close;
    while start > 0 && matches!(bytes[start - 1], b' ' | b'\t' | b'\n' | b'\r') {
        start -= 1;
    }
    let slashes = bytes[..start]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count();
    if slashes % 2 == 1 {
        start += 1;
    }
    let run = &bytes[start.min(close)..close];
    let broken = run.iter().any(|&b| b == b'\n' || b == b'\r');
    if !(broken && read.as_bytes().ends_with(run)) {
        return 0;
    }
    run.len()
}

/// A string value the text ended inside, `read`, that ends with its closing quote or the
/// closers of its containers and then a closing fence (`{"a": "x"```, `{"a": "x}```): the
/// string ended there and the fence closed the block. Drops the fence, the closers and the
/// quote from `read`; leaves it as it is unless a raw `"` or closer stands right before the
/// fence (a fence after a line break is content: code in a string value).
pub(in crate::salvage) fn closing_fence(text: &str, closers: &[u8], read: &mut String) {
    let tail = text.trim_end();
    let Some(mut body) = tail.strip_suffix("```") else {
        return;
    };
    for &closer in closers.iter().rev() {
        match body.trim_end().strip_suffix(char::from(closer)) {
            Some(rest) => body = rest,
            None => break,
        }
    }
    if let Some(rest) = body.strip_suffix('"')
        && !rest.ends_with('\\')
    {
        body = rest;
    }
    let removed = &tail[body.len()..];
    if removed.len() == 3 {
        return;
    }
    // The string read is the text's own tail there (no escape in what goes).
    let end = read.trim_end().len();
    if let Some(keep) = end.checked_sub(removed.len())
        && read.get(keep..end) == Some(removed)
    {
        read.truncate(keep);
    }
}
