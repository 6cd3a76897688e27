//! The table of markup families (GRAMMARS §2): one file per family, one entry per family here.
//!
//! Each entry names the family, its start sentinels and its parser. The scanner builds one
//! automaton over every sentinel; when several families share a sentinel (`<tool_call>`,
//! `<tool_calls>`, `<function_calls>`), their parsers are tried in table order and the first one
//! that does not answer [`Stop::Invalid`](super::cursor::Stop::Invalid) decides (an `Incomplete` answer waits for more text,
//! so a streamed scan never settles for a later family too early).
//!
//! # Order
//!
//! GRAMMARS §1.7: longer and more specific sentinels first. Distinct sentinels never compete
//! (the automaton is leftmost-longest), so the order only matters among families sharing one:
//! - `<function_calls>`: the Anthropic `<invoke>` body before OLMo 3's pythonic lines.
//! - `<tool_calls>`: the Hunyuan/Jamba array and HY v3 tags before MiniMax-M1 JSON lines
//!   (Hy3's suffixed `<tool_calls:` is a sentinel of its own).
//! - `<function name=`: MiniCPM 5's `<param>` children before Hermes' llama.cpp JSON variant.
//! - `<|start|>assistant`: Harmony's JSON body before Muse Glimmer's ATEM block.
//! - `<tool_call>`: Granite 3.1 (`[`), Qwen3-Coder (`<function=`), GLM (an identifier and
//!   `<arg_key>` pairs), Laguna (an identifier and a JSON object), then the generic Hermes JSON
//!   (`{`) last, as §1.7 asks. Their first significant byte differs, so
//!   the order is documentation more than arbitration.
//!
//! - ```` ```json ````: Command R+'s `Action:` list (a lead) before xLAM's fenced list. A fence
//!   sentinel that starts no block is read as the fence it is (the scanner's `pass`).
//!
//! Two sentinels start with a letter in the models' output (`functools[`, `function call<|
//! role_sep|>`); their grammars declare that text as a `lead` and key the automaton on the rare
//! byte after it, so every automaton pattern starts with `<`, `[`, `]`, a backtick, `~` or `>`
//! (functionary's `>>>`).
//!
//! The whole-message forms (xLAM arrays, bare Llama JSON, bare pythonic lists: §1.6) have no
//! sentinel; [`super::whole`] tries them last, only when the scan found no block at all.

use super::call::RawCall;
use super::cursor::Step;
use crate::ToolSet;

pub(crate) mod anthropic;
pub(crate) mod apertus;
pub(crate) mod atem;
pub(crate) mod cohere;
pub(crate) mod command_r;
pub(crate) mod deepseek;
pub(crate) mod dots;
pub(crate) mod dsml;
pub(crate) mod functionary;
pub(crate) mod gemma;
pub(crate) mod gigachat;
pub(crate) mod glm;
pub(crate) mod granite;
pub(crate) mod harmony;
pub(crate) mod hermes;
pub(crate) mod hunyuan;
pub(crate) mod internlm;
pub(crate) mod k2_horizon;
pub(crate) mod kimi_k2;
pub(crate) mod kimi_k3;
pub(crate) mod laguna;
pub(crate) mod llama;
pub(crate) mod minicpm;
pub(crate) mod minimax_m1;
pub(crate) mod minimax_m2;
pub(crate) mod minimax_m3;
pub(crate) mod mistral;
pub(crate) mod nemotron;
pub(crate) mod olmo3;
pub(crate) mod phi4;
pub(crate) mod pythonic;
pub(crate) mod qwen3_coder;
pub(crate) mod seed_oss;
pub(crate) mod solar_open;
pub(crate) mod step3;
pub(crate) mod xlam;

#[cfg(test)]
pub(crate) mod testing;

/// The text a grammar reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Input<'a> {
    /// The text, from its start (blocks are located by absolute index).
    pub text: &'a str,
    /// Whether `text` is final: no more bytes will arrive.
    pub eof: bool,
    /// Whether `text` ends where the message ends (final, and not cut at the block size
    /// bound): a block may then end at end of sequence ([`close_or_eos`]).
    pub message_end: bool,
    /// The declared tools, for the rare grammar that needs names to decide (Harmony's glued
    /// `json` suffix).
    pub tools: &'a ToolSet,
}

/// A complete block: where it ends and the calls it holds (names not yet checked).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Block {
    /// The index after the block's last consumed byte.
    pub end: usize,
    /// The calls, in block order; never empty.
    pub calls: Vec<RawCall>,
}

impl Block {
    /// A block ending at `end`; an empty call list is invalid.
    pub(crate) fn new(end: usize, calls: Vec<RawCall>) -> Step<Self> {
        if calls.is_empty() {
            Err(super::cursor::Stop::Invalid)
        } else {
            Ok(Self { end, calls })
        }
    }
}

/// The calls of a token-delimited section: each call is read by `one_call` from just after
/// its `call_start` token, the next call begins with `call_start` again, and the section ends
/// with one of the optional `closers`. `i` is just after the first `call_start`.
///
/// A call cut off at the end of the text ends the section after the complete calls before it
/// (GRAMMARS §1.3 counts each call by its own terminator); the cut call stays text.
pub(crate) fn section(
    input: &Input<'_>,
    mut i: usize,
    call_start: &str,
    closers: &[&str],
    one_call: fn(&Input<'_>, usize) -> Step<(RawCall, usize)>,
) -> Step<Block> {
    use super::cursor::{Stop, optional};
    let s = input.text;
    let mut calls = Vec::new();
    let mut last_end = i;
    loop {
        let (call, end) = match one_call(input, i) {
            Ok(parsed) => parsed,
            Err(Stop::Incomplete) if input.eof && !calls.is_empty() => {
                return Block::new(last_end, calls);
            }
            Err(stop) => return Err(stop),
        };
        calls.push(call);
        last_end = end;
        if let Some(next) = optional(s, end, call_start, input.eof)? {
            i = next;
            continue;
        }
        for closer in closers {
            if let Some(close) = optional(s, end, closer, input.eof)? {
                return Block::new(close, calls);
            }
        }
        return Block::new(end, calls);
    }
}

/// Tokens a model may emit at end of sequence, after its last call.
const END_TOKENS: &[&str] = &[
    "<|im_end|>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end|>",
    "<|return|>",
    "</s>",
    "<eos>",
    "<end_of_turn>",
];

/// The index after `close` (whitespace before it skipped); or, when the message ends with
/// nothing but whitespace and end tokens after `i`, the index after that whitespace: the
/// model stopped at end of sequence before its closer (GRAMMARS §1.3). The payload before `i`
/// must already be complete and strictly parsed; the end tokens stay text.
pub(crate) fn close_or_eos(input: &Input<'_>, i: usize, close: &str) -> Step<usize> {
    use super::cursor::{Stop, expect_ws, skip_ws};
    let s = input.text;
    match expect_ws(s, i, close) {
        Ok(end) => Ok(end),
        Err(stop) => {
            let ws = skip_ws(s, i);
            let mut rest = &s[ws..];
            while let Some(token) = END_TOKENS.iter().find(|t| rest.starts_with(**t)) {
                rest = rest[token.len()..].trim_start();
            }
            let cut_token = !input.eof && END_TOKENS.iter().any(|t| t.starts_with(rest));
            if input.message_end && rest.is_empty() {
                Ok(ws)
            } else if cut_token || stop == Stop::Incomplete {
                // More text may still bring the closer (or other text).
                Err(Stop::Incomplete)
            } else {
                Err(Stop::Invalid)
            }
        }
    }
}

/// A call whose JSON arguments start at `at` and whose closer is `end`: the call and the index
/// after its closer. Arguments that do not parse but still reach their own `end` before any of
/// `stops` (the next call, the section's end) make an unreadable call: this call is lost and
/// reported, its neighbours are not. Otherwise the JSON's own stop (cut off, invalid) stands.
pub(crate) fn json_call_until(
    input: &Input<'_>,
    name: String,
    at: usize,
    end: &str,
    stops: &[&str],
) -> Step<(super::call::RawCall, usize)> {
    use super::call::RawCall;
    use super::cursor::find_before;
    let s = input.text;
    let whole = super::json::object_span(s, at)
        .and_then(|(from, to)| Ok((from, to, close_or_eos(input, to, end)?)));
    match (whole, find_before(s, at, end, stops)) {
        (Ok((from, to, after)), _) => Ok((RawCall::json(name, s[from..to].to_owned()), after)),
        (Err(_), Ok(own_end)) => Ok((
            RawCall::unreadable(name, s[at..own_end].trim().to_owned()),
            own_end + end.len(),
        )),
        (Err(stop), Err(_)) => Err(stop),
    }
}

/// A family's parser: the block that starts at `start`, whose sentinel ends at `body`.
pub(crate) type Parse = fn(&Input<'_>, usize, usize) -> Step<Block>;

/// One family of markup.
#[derive(Debug)]
pub(crate) struct Grammar {
    /// Text that must directly precede a sentinel and belongs to the block (`functools` before
    /// `[`). Keeps every automaton pattern starting with a byte that is rare in prose.
    pub lead: &'static str,
    /// The family's name (GRAMMARS §2 heading), for docs and test output.
    pub family: &'static str,
    /// Literal texts that start a block.
    pub sentinels: &'static [&'static str],
    /// The parser.
    pub parse: Parse,
}

/// Every sentinel family, in dispatch order (see the module doc).
pub(crate) static GRAMMARS: &[Grammar] = &[
    dsml::GRAMMAR,
    deepseek::GRAMMAR,
    step3::GRAMMAR,
    minimax_m3::GRAMMAR,
    kimi_k2::GRAMMAR,
    kimi_k3::GRAMMAR,
    solar_open::GRAMMAR,
    minimax_m2::GRAMMAR,
    anthropic::GRAMMAR,
    dots::GRAMMAR,
    k2_horizon::GRAMMAR,
    olmo3::GRAMMAR,
    harmony::GRAMMAR,
    atem::GRAMMAR,
    gemma::GRAMMAR,
    granite::GRAMMAR,
    seed_oss::GRAMMAR,
    hunyuan::GRAMMAR,
    hunyuan::GRAMMAR_SUFFIXED,
    minimax_m1::GRAMMAR,
    qwen3_coder::GRAMMAR,
    glm::GRAMMAR,
    laguna::GRAMMAR,
    minicpm::GRAMMAR,
    hermes::GRAMMAR,
    nemotron::GRAMMAR,
    mistral::GRAMMAR,
    llama::GRAMMAR,
    pythonic::GRAMMAR,
    phi4::GRAMMAR,
    cohere::GRAMMAR,
    command_r::GRAMMAR,
    command_r::GRAMMAR_NEWLINE,
    xlam::GRAMMAR_FENCED,
    functionary::GRAMMAR,
    apertus::GRAMMAR,
    internlm::GRAMMAR,
    gigachat::GRAMMAR,
    gigachat::GRAMMAR_31,
];
