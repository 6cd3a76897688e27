//! Byte offsets into UTF-8 text as UTF-16 indices, the unit JavaScript strings count in.

/// The UTF-16 index of byte `offset` in `text` (clamped to the text; an offset inside a
/// character counts the characters before it).
pub(crate) fn index(text: &str, offset: usize) -> u32 {
    let offset = offset.min(text.len());
    let head = &text.as_bytes()[..offset];
    let units = if head.is_ascii() {
        offset
    } else {
        // Bytes that start a character count 1, 4-byte characters (surrogate pairs) 2.
        head.iter()
            .map(|&b| match b {
                0x00..=0x7f | 0xc0..=0xef => 1,
                0xf0..=0xff => 2,
                _ => 0,
            })
            .sum()
    };
    u32::try_from(units).unwrap_or(u32::MAX)
}
