//! A document of several fenced blocks among prose: every block, where a call reads the first.

use super::Document;
use crate::RepairKind;
use crate::salvage::{SyntaxRepair, scan};

/// A document of several fenced blocks among prose (`a ```json {…}``` b ```json […]``` c`):
/// every block's values in text order, when there are two or more and each one reads; `None`
/// otherwise (call salvage reads the first block only: one call, the rest prose). `read` reads
/// one block's text (the document entry passes call salvage).
pub(in crate::salvage) fn fenced_blocks(
    text: &str,
    mut read: impl FnMut(&str) -> Option<Document>,
) -> Option<Document> {
    let bytes = text.as_bytes();
    // Counted first, without reading: a text of one block (the usual fenced call) is then
    // not read a second time only to be given back (issue #31).
    if closed_blocks(bytes)? < 2 {
        return None;
    }
    let mut doc = Document {
        values: Vec::new(),
        repairs: Vec::new(),
        truncated: false,
    };
    let mut at = 0;
    while let Some(open) = memchr::memmem::find(&bytes[at..], b"```").map(|i| at + i) {
        let body = scan::fence_body(bytes, open);
        let close = memchr::memmem::find(&bytes[body..], b"```").map(|i| body + i)?;
        let block = read(&text[body..close])?;
        doc.values.extend(block.values);
        doc.truncated |= block.truncated;
        for r in block.repairs {
            if !doc.repairs.iter().any(|d: &SyntaxRepair| d.kind == r.kind) {
                doc.repairs.push(SyntaxRepair {
                    kind: r.kind,
                    offset: body + r.offset,
                });
            }
        }
        at = close + 3;
    }
    doc.repairs.push(SyntaxRepair {
        kind: RepairKind::FenceUnwrapped,
        offset: text.find("```").unwrap_or(0),
    });
    doc.repairs.sort_by_key(|r| r.offset);
    doc.repairs.dedup_by_key(|r| r.kind);
    Some(doc)
}

/// How many fenced blocks the text holds, as [`fenced_blocks`] walks them; `None` when the last
/// fence opened is never closed (no reading of every block then).
fn closed_blocks(bytes: &[u8]) -> Option<usize> {
    let (mut blocks, mut at) = (0, 0);
    while let Some(open) = memchr::memmem::find(&bytes[at..], b"```").map(|i| at + i) {
        let body = scan::fence_body(bytes, open);
        at = memchr::memmem::find(&bytes[body..], b"```").map(|i| body + i)? + 3;
        blocks += 1;
    }
    Some(blocks)
}
