//! Reasoning tags: which markup opens and closes a model's reasoning in content (GRAMMARS §1.2,
//! §1.5).
//!
//! Reasoning in content is never masked (its complete calls are recovered like any others);
//! its tags matter in two places: a code fence left open in reasoning ends at the closing tag
//! (`scan`), and a whole-message payload may start after the last closing tag (`whole`,
//! `stream`). The tags:
//!
//! - `<think>…</think>`, `[THINK]…[/THINK]` (Magistral), `<seed:think>…</seed:think>` (Seed-OSS);
//! - Hy3 (`tencent-Hy3`): `<think:opensource>…</think:opensource>`, the checkpoint suffix its
//!   template bakes into every special token, the same suffix as its tool-call tags
//!   (`<tool_calls:opensource>`, `grammars/hunyuan.rs`). Any suffix of ASCII letters, digits
//!   and `_` (at most 32 bytes) is read, as for the tool-call tags;
//! - Solar Open (`upstage-Solar-Open-100B`): `<|think|>…<|end|>`. Its template ends every
//!   message with `<|end|>` (`<|begin|>assistant<|content|>…<|end|>`), and so do Phi and Harmony,
//!   so an `<|end|>` closes reasoning only when the last `<|think|>` or `<|end|>` before it is a
//!   `<|think|>`.
//!
//! Every tag ends with `>` or `]`, so callers try only the positions after those bytes.

/// Tags that close reasoning, matched as written.
const CLOSES: [&[u8]; 3] = [b"</think>", b"[/THINK]", b"</seed:think>"];

/// Tags that open reasoning, matched as written.
const OPENS: [&[u8]; 4] = [b"<think>", b"[THINK]", b"<seed:think>", SOLAR_OPEN];

/// Solar Open's reasoning opener, and the end of each of its messages.
const SOLAR_OPEN: &[u8] = b"<|think|>";
const SOLAR_END: &[u8] = b"<|end|>";

/// Longest checkpoint suffix read in `<think:SUFFIX>` (as `grammars/hunyuan.rs` reads it).
const MAX_SUFFIX_BYTES: usize = 32;

/// Whether a closing reasoning tag ends at `end`, lying whole in `bytes[floor..end]`.
pub(crate) fn closes_at(bytes: &[u8], floor: usize, end: usize) -> bool {
    let hay = &bytes[floor..end];
    CLOSES.iter().any(|t| hay.ends_with(t))
        || suffixed(hay, b"</think:")
        || (hay.ends_with(SOLAR_END) && solar_thinking(&bytes[..end - SOLAR_END.len()]))
}

/// Whether an opening reasoning tag ends at `end`, lying whole in `bytes[floor..end]`.
pub(crate) fn opens_at(bytes: &[u8], floor: usize, end: usize) -> bool {
    let hay = &bytes[floor..end];
    OPENS.iter().any(|t| hay.ends_with(t)) || suffixed(hay, b"<think:")
}

/// Whether `hay` ends with `head`, a suffix (1 to 32 ASCII letters, digits or `_`) and `>`.
fn suffixed(hay: &[u8], head: &[u8]) -> bool {
    let Some(rest) = hay.strip_suffix(b">") else {
        return false;
    };
    let suffix = rest
        .iter()
        .rev()
        .take(MAX_SUFFIX_BYTES + 1)
        .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_')
        .count();
    (1..=MAX_SUFFIX_BYTES).contains(&suffix) && rest[..rest.len() - suffix].ends_with(head)
}

/// Whether Solar Open is reasoning at the end of `before`: its last `<|think|>` or `<|end|>`
/// is a `<|think|>`. Reads back to the nearest of the two only, so the `<|end|>`s of a text
/// cost one pass over it together.
fn solar_thinking(before: &[u8]) -> bool {
    memchr::memrchr_iter(b'>', before)
        .map(|i| &before[..=i])
        .find_map(|hay| {
            if hay.ends_with(SOLAR_OPEN) {
                Some(true)
            } else if hay.ends_with(SOLAR_END) {
                Some(false)
            } else {
                None
            }
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{closes_at, opens_at};
    use crate::recover::grammars::testing::{ignores, recovers};

    /// Whether a closing tag ends at the end of `text`.
    fn closes(text: &str) -> bool {
        closes_at(text.as_bytes(), 0, text.len())
    }

    fn opens(text: &str) -> bool {
        opens_at(text.as_bytes(), 0, text.len())
    }

    #[test]
    fn reads_every_family_s_tags() {
        for close in [
            "a</think>",
            "[/THINK]",
            "</seed:think>",
            "x</think:opensource>",
        ] {
            assert!(closes(close), "{close}");
        }
        for open in [
            "<think>",
            "[THINK]",
            "<seed:think>",
            "<think:opensource>",
            "<|think|>",
        ] {
            assert!(opens(open), "{open}");
        }
        assert!(closes("<think:6124c78e>r</think:6124c78e>"));
        assert!(closes("<|think|>plan<|end|>"));
    }

    #[test]
    fn a_suffix_is_letters_digits_and_underscores_up_to_32() {
        assert!(!closes("</think:>"));
        assert!(!closes("</think:open source>"));
        assert!(!closes("</think:a-b>"));
        assert!(closes(&format!("</think:{}>", "a".repeat(32))));
        assert!(!closes(&format!("</think:{}>", "a".repeat(33))));
        assert!(!opens("<thinking:x>"));
    }

    #[test]
    fn solar_end_closes_only_reasoning() {
        // A message's end, or Phi's and Harmony's, is no reasoning closer.
        assert!(!closes("<|end|>"));
        assert!(!closes("<|begin|>assistant<|content|>hi<|end|>"));
        assert!(!closes(
            "<|think|>r<|end|><|begin|>assistant<|content|>hi<|end|>"
        ));
        assert!(closes("<|begin|>assistant<|think|>r > s<|end|>"));
    }

    #[test]
    fn a_tag_must_lie_whole_after_the_floor() {
        let text = b"</think>";
        assert!(!closes_at(text, 1, text.len()));
        let suffixed = b"</think:opensource>";
        assert!(!closes_at(suffixed, 1, suffixed.len()));
        // The gate of `<|end|>` may read before the floor: it is context, not the tag.
        let solar = b"<|think|>r<|end|>";
        assert!(closes_at(solar, 10, solar.len()));
    }

    /// A fence the model left open in its reasoning ends at the closing tag: the call after it
    /// is recovered (whole and streamed at every split), the code stays text.
    #[test]
    fn an_open_fence_in_reasoning_ends_at_each_family_s_closer() {
        let hy3 = "<tool_calls:opensource>\n<tool_call:opensource>bash<tool_sep:opensource>\n<arg_key:opensource>command</arg_key:opensource>\n<arg_value:opensource>ls</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>";
        let text = format!("<think:opensource>Try:\n```bash\nls -la\n</think:opensource>{hy3}");
        let left = recovers(&text, &[("bash", json!({"command": "ls"}))]);
        assert_eq!(
            left,
            "<think:opensource>Try:\n```bash\nls -la\n</think:opensource>"
        );

        let solar = "<|begin|>assistant<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>bash<|tool_call:args|>{\"command\": \"ls\"}<|tool_call:end|><|calls|>";
        let text = format!("<|think|>Try:\n```bash\nls -la\n<|end|>{solar}");
        let left = recovers(&text, &[("bash", json!({"command": "ls"}))]);
        assert_eq!(
            left,
            "<|think|>Try:\n```bash\nls -la\n<|end|><|begin|>assistant"
        );
    }

    /// Without its `<|think|>`, an `<|end|>` is a message's end: a fence open before it stays
    /// open, and the markup after it stays code.
    #[test]
    fn a_message_end_does_not_end_a_fence() {
        ignores(
            "Try:\n```bash\nls -la\n<|end|><|tool_call:begin|>x<|tool_call:name|>bash<|tool_call:args|>{\"command\": \"ls\"}<|tool_call:end|>",
        );
        // Nor does a suffixed closer quoted in the answer's own fence (opened after reasoning).
        ignores(
            "<think:opensource>r</think:opensource>\n```\n</think:opensource><tool_calls:opensource>\n<tool_call:opensource>bash<tool_sep:opensource>\n<arg_key:opensource>command</arg_key:opensource>\n<arg_value:opensource>ls</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>",
        );
    }

    /// A whole-message payload may follow the reasoning (GRAMMARS §1.6).
    #[test]
    fn a_whole_message_payload_after_the_reasoning_is_recovered() {
        let xlam = r#"[{"name": "bash", "arguments": {"command": "ls"}}]"#;
        for (think, close) in [
            ("<think:opensource>plan", "</think:opensource>"),
            ("<|think|>plan", "<|end|>"),
        ] {
            let text = format!("{think}{close}\n{xlam}");
            let left = recovers(&text, &[("bash", json!({"command": "ls"}))]);
            assert_eq!(left, format!("{think}{close}\n"));
        }
        // An `<|end|>` that closes no `<|think|>` is no reasoning closer: the text is prose.
        ignores(&format!("<|content|>plan<|end|>\n{xlam}"));
    }
}
