//! The lenient parser: one pass over the bytes with an explicit stack, building the value
//! directly (no repaired text, no re-parse).
//!
//! A run starts at a `{` or `[` and reads values back to back (`{…}{…}`, NDJSON) until the text
//! ends or something that is not JSON follows (prose, a closing fence). Nesting lives in a `Vec`
//! of frames, never in recursion, so depth is bounded by [`super::SalvageOptions::max_depth`]
//! with a typed error instead of a stack overflow.
//!
//! This file owns the [`Parser`] struct and its main loop (values, keys, commas, closers);
//! the files of this folder implement the rest of it and are read only from here:
//!
//! - `strings`: delimiters, escapes and the content policies; `plain`: the fast read of a
//!   string value that is plain JSON;
//! - `numbers`: numbers and literal words;
//! - `lookahead`: whether a quote inside a value closes it (bytes only, no parser state);
//! - `truncation`: closing a value the text ended inside;
//! - `scratch`: the stack and closers buffers, reused from run to run on a thread.
//!
//! A circle between the type and the files that implement it stays inside this folder. Below
//! it: `scan` (bytes), `memo`, `repairs`, `seed` (where a run starts), and the document
//! readings (`super::document`), consulted at named decision points only.

use std::ops::Range;

use serde_json::Value;

mod lookahead;
mod member;
mod numbers;
mod plain;
mod scratch;
mod strings;
mod truncation;

use super::document;
use super::memo::Memo;
use super::node::{Array, Node, Object, Roots, Spelt, Str as Text};
use super::repairs::RepairLog;
use super::scan::{self, Comment, Quote};
use super::seed::{SPANS_CAPACITY, Seed};
use super::{MemberText, Readings, SalvageErrorKind};
use crate::RepairKind;
use crate::pointer;
use strings::{Role, Str};

/// What one run found.
#[derive(Debug, Clone)]
pub(super) struct Run {
    /// The complete (or closed) top-level values, in order; never empty.
    pub(super) values: Roots,
    /// The repairs made.
    pub(super) log: RepairLog,
    /// The text ended inside the last value, which was closed.
    pub(super) truncated: bool,
    /// Where text that is not JSON starts right after the last value.
    pub(super) prose_after: Option<usize>,
    /// Where non-blank text starts after the closing fence.
    pub(super) after_fence: Option<usize>,
    /// Where the run stopped reading.
    pub(super) end: usize,
    /// A quote that closed the last value right before prose (see [`lookahead::Verdict`]).
    pub(super) top_close_quote: Option<usize>,
    /// The string closed by [`Self::top_close_quote`] opened a bracket it did not close.
    pub(super) top_close_open_bracket: bool,
    /// A string that holds one of the quotes taken as content closed, and a `,` followed it:
    /// the object goes on after the longer string, which is what a retry hopes to find.
    pub(super) extended_member: bool,
    /// A string value held `, "key":` right before a quote taken as content: its closing quote
    /// may be missing there (see [`Parser::insert_quotes`]).
    pub(super) quote_insertable: bool,
    /// The first reading of the value, when this run inserted quotes (see [`super::Salvaged`]);
    /// boxed, as the result keeps it: nearly every run has none, and the run is moved whole
    /// several times on its way to the result (72 bytes less each time).
    pub(super) alternative: Option<Box<Node>>,
    /// Where a closer of the wrong kind closed two containers of the first value, when the
    /// values after it then closed containers they never opened, or a comma followed it: the
    /// split (or the prose) may be a stray closer's doing (see [`Parser::stray_at`]).
    pub(super) split_closer: Option<usize>,
    /// Where the text of each member of the one value (an object) is already what serde_json
    /// writes for it; empty when the run found several values (see [`super::Salvaged::spans`]).
    pub(super) spans: Vec<MemberText>,
}

/// Why a run failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RunError {
    /// What went wrong.
    pub(super) kind: SalvageErrorKind,
    /// Where.
    pub(super) offset: usize,
    /// Whether the text looked like JSON before it failed (a member's colon or an array element
    /// was read): such a failure is a syntax error, not prose with braces in it.
    pub(super) progressed: bool,
    /// The text ended inside the value, which kept nothing (`{"pa`).
    pub(super) cut: bool,
}

/// One open container.
#[derive(Debug)]
pub(super) enum Frame {
    /// An object and the key whose value is being read.
    Object(Object, Option<Text>),
    /// An array.
    Array(Array),
}

impl Frame {
    fn into_node(self) -> Node {
        match self {
            Self::Object(members, _) => members.into_node(),
            Self::Array(items) => items.into_node(),
        }
    }
}

/// What the parser expects next inside the innermost container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expect {
    /// A key or `}`; `comma` is where the preceding comma was, if any.
    Key { comma: Option<usize> },
    /// The `:` after a key.
    Colon,
    /// A member's value.
    Value,
    /// An array element or `]`.
    Element { comma: Option<usize> },
    /// A `,` or the closer, after a value.
    Next,
}

/// The parser's state for one run.
#[derive(Debug)]
pub(super) struct Parser<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
    pub(super) log: RepairLog,
    pub(super) max_depth: usize,
    /// The run started inside a Markdown fence, so a closing fence may follow the values.
    pub(super) fence: bool,
    /// Quotes that earlier attempts found to be content (see [`super::extract`]).
    pub(super) content_quotes: &'a [usize],
    /// What earlier runs of the same call learnt about the text.
    pub(super) memo: &'a Memo,
    pub(super) top_close_quote: Option<usize>,
    pub(super) top_close_open_bracket: bool,
    pub(super) extended_member: bool,
    /// End a string value whose content reaches `, "key":` before that comma, as if its
    /// closing quote were there (`quote_inserted`). Off in the first reading; a second reading
    /// turns it on when the first met such a place ([`Run::quote_insertable`]).
    pub(super) insert_quotes: bool,
    pub(super) quote_insertable: bool,
    /// A string value the text ended inside was closed before the closers it ended with
    /// (`quote_inserted`): the text may as well have been cut inside the string, so the run
    /// stays flagged as truncated.
    pub(super) closed_at_end: bool,
    /// The closer of each open container, outermost first, for the look-ahead.
    closers: scratch::Reused<u8>,
    pub(super) progressed: bool,
    /// A string value was not plain: later ones go straight to strings.rs (see [`plain`]).
    pub(super) plain_gave_up: bool,
    /// Where the text's last unescaped `"` is, found once when a plain read first asks
    /// (`Some(None)`: there is none); a string opened at or after it can only be cut.
    pub(super) last_quote: Option<Option<usize>>,
    /// The same for `'`.
    pub(super) last_single: Option<Option<usize>>,
    /// The opening and closing quote of the key after `, ` that the look-ahead at a plain
    /// string value's closing quote read (see [`lookahead::value_quote_noting_key`]): where
    /// the key reader's scan from that opening quote stops. A fact about the text, so never
    /// stale; only the key at that offset takes it.
    pub(super) next_key: Option<(usize, usize)>,
    /// The canonical text of the value about to be emitted, if it has one.
    value_span: Option<Range<usize>>,
    /// Per member of the root object being read, in order: its key's and its value's
    /// canonical text.
    spans: Vec<MemberText>,
    /// A root member was sent twice, so `spans` no longer lines up with the object.
    spans_void: bool,
    /// The document-only readings (off for calls): see [`super::DocumentOptions`].
    pub(super) readings: Readings,
    /// Every document reading is off ([`Readings::is_call`]), asked once per member: kept.
    pub(super) call_grammar: bool,
    /// What `serde_json` read of the object the run starts at, taken by the first value.
    pub(super) seed: Option<Seed>,
    /// Where a closer of the wrong kind first closed two containers (see [`Run::split_closer`]).
    closed_both_at: Option<usize>,
    /// A closer at this offset is read as stray, never as closing two containers: the second
    /// reading of a suspect split (see [`super::extract`]).
    pub(super) stray_at: Option<usize>,
}

/// Whether the single value read hit the end of the text.
pub(super) type Parsed = Result<(Node, bool), RunError>;

impl<'a> Parser<'a> {
    /// A parser over `text`.
    pub(super) fn new(
        text: &'a str,
        max_depth: usize,
        fence: bool,
        content_quotes: &'a [usize],
        memo: &'a Memo,
    ) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            log: RepairLog::default(),
            max_depth,
            fence,
            content_quotes,
            memo,
            top_close_quote: None,
            top_close_open_bracket: false,
            extended_member: false,
            insert_quotes: false,
            quote_insertable: false,
            closed_at_end: false,
            closers: scratch::closers(),
            progressed: false,
            plain_gave_up: false,
            last_quote: None,
            last_single: None,
            next_key: None,
            value_span: None,
            spans: Vec::new(),
            spans_void: false,
            readings: Readings::CALL,
            call_grammar: true,
            seed: None,
            closed_both_at: None,
            stray_at: None,
        }
    }

    /// This parser with the document-only `readings`.
    pub(super) fn with_readings(mut self, readings: Readings) -> Self {
        self.readings = readings;
        self.call_grammar = readings.is_call();
        self
    }

    /// Drops the layout before the closing quote of the string `read` just closed, when the
    /// readings ask for it (documents only; see [`document::layout_tail`]).
    fn trim_layout(&self, read: &mut String) {
        if self.readings.trim_layout {
            let cut = document::layout_tail(self.bytes, self.pos, read);
            read.truncate(read.len() - cut);
        }
    }

    /// [`Self::trim_layout`] for a string that may still be a span of the text.
    fn trim_layout_text(&self, read: &mut Text) {
        if self.readings.trim_layout {
            self.trim_layout(read.to_mut(self.text));
        }
    }

    /// Reads the values starting at `start`, which must be a `{` or `[`.
    pub(super) fn run(mut self, start: usize) -> Result<Run, RunError> {
        self.pos = start;
        // Nearly always one value: room for it at once, without the growth path's bookkeeping.
        let mut values = Roots::new(self.readings.build);
        let mut truncated = false;
        let mut prose_after = None;
        let mut after_fence = None;
        let mut first_spans = Vec::new();
        // The first value's closes-both closer, and whether a later stray closer balanced it.
        let mut first_closed_both = None;
        let mut stray_after_first = false;
        'values: loop {
            let value_start = self.pos;
            let saved = (values.is_empty())
                .then(RepairLog::default)
                .unwrap_or_else(|| self.log.clone());
            self.progressed = false;
            match self.parse_value() {
                Ok((value, cut)) => {
                    truncated |= cut || self.closed_at_end;
                    // A cut-off value that kept nothing (`{"pa`) is not evidence of anything.
                    let empty = cut && holds_nothing(&value);
                    if empty && values.is_empty() {
                        let mut e = self.error(SalvageErrorKind::Syntax, value_start);
                        e.cut = true;
                        return Err(e);
                    }
                    if !empty {
                        if values.is_empty() {
                            first_closed_both = self.closed_both_at;
                            if !self.spans_void {
                                first_spans = std::mem::take(&mut self.spans);
                            }
                        }
                        values.push(value, self.text);
                    }
                    if cut {
                        break;
                    }
                }
                // After a first value, text that fails early (`{placeholder}`) is prose.
                Err(e)
                    if !values.is_empty()
                        && e.kind == SalvageErrorKind::Syntax
                        && !e.progressed =>
                {
                    self.log = saved;
                    self.pos = value_start;
                    prose_after = Some(value_start);
                    break;
                }
                Err(e) => return Err(e),
            }
            // Between values: blanks, comments, stray closers, a comma before the next object.
            loop {
                self.skip_between_values();
                let Some(&b) = self.bytes.get(self.pos) else {
                    break 'values;
                };
                match b {
                    b'{' | b'[' => continue 'values,
                    b',' => {
                        // Comments may stand between the comma and the next value too.
                        let (comma, log) = (self.pos, self.log.clone());
                        self.pos += 1;
                        self.skip_between_values();
                        if matches!(self.bytes.get(self.pos), Some(b'{' | b'[')) {
                            continue 'values;
                        }
                        (self.pos, self.log) = (comma, log);
                    }
                    b'}' | b']' => {
                        stray_after_first |= values.len() > 1;
                        self.log.note(RepairKind::ExtraCloserRemoved, self.pos);
                        self.pos += 1;
                        continue;
                    }
                    _ => {}
                }
                if self.fence && self.bytes[self.pos..].starts_with(b"```") {
                    let rest = scan::skip_ws(self.bytes, self.pos + 3);
                    // Another fenced block of JSON right after: the next call.
                    let next = scan::skip_ws(self.bytes, scan::fence_body(self.bytes, rest));
                    if next > rest && matches!(self.bytes.get(next), Some(b'{' | b'[')) {
                        self.pos = next;
                        continue 'values;
                    }
                    after_fence = (rest < self.bytes.len()).then_some(rest);
                    self.pos = self.bytes.len();
                } else {
                    prose_after = Some(self.pos);
                }
                break 'values;
            }
        }
        Ok(Run {
            log: self.log,
            truncated,
            prose_after,
            after_fence,
            end: self.pos,
            top_close_quote: self.top_close_quote,
            top_close_open_bracket: self.top_close_open_bracket,
            extended_member: self.extended_member,
            quote_insertable: self.quote_insertable,
            alternative: None,
            split_closer: first_closed_both.filter(|_| {
                (values.len() > 1 && stray_after_first)
                    || prose_after.is_some_and(|p| self.bytes[p] == b',')
            }),
            spans: if values.len() == 1 {
                first_spans
            } else {
                Vec::new()
            },
            values,
        })
    }

    /// The root object of a closed seed (a fence's body or a `{` among prose that the strict
    /// read took whole, issue #31), in the state reading it would have left: after its `}`,
    /// nothing repaired. The judgements left are the look-ahead at its last string's closing
    /// quote, made here as the string's reading makes it, and whether the object goes on after
    /// its `}` (as at any root closer); `None` (the seed dropped, the object read the long way)
    /// when it does not close there.
    fn closed_seed(&mut self, seed: Seed) -> Option<Node> {
        // `{"a": "b"}, "c": "d"}`: the root object goes on after a stray `}`.
        if !seed.closed || self.root_goes_on(seed.comma) {
            return None;
        }
        if let Some(quote) = seed.last_quote {
            // The containers open at that quote, outermost first.
            let closers: &[u8] = if seed.last_in_array { b"}]" } else { b"}" };
            match lookahead::value_quote(self.bytes, quote + 1, closers, self.fence, true) {
                lookahead::Verdict::Closes => {}
                lookahead::Verdict::ClosesBeforeProse => {
                    // As `strings.rs` remembers it (the plain read gives that string up).
                    let last = match seed.members.values().next_back() {
                        Some(Value::Array(items)) => items.last(),
                        last => last,
                    };
                    let Some(Value::String(last)) = last else {
                        return None;
                    };
                    self.top_close_quote = Some(quote);
                    self.top_close_open_bracket = strings::opens_a_bracket(last);
                    self.plain_gave_up = true;
                }
                lookahead::Verdict::Content | lookahead::Verdict::Swallows => return None,
            }
        }
        // Spans only where the run notes them (`salvage_after`): the same `Run` either way.
        if self.readings.member_text {
            self.spans = seed.spans;
        } else {
            self.spans.clear();
        }
        self.spans_void = false;
        self.plain_gave_up |= seed.plain_gave_up;
        self.progressed = true;
        self.pos = seed.comma;
        let members = Object::seeded(self.readings.build, seed.members, self.text);
        Some(Frame::Object(members, None).into_node())
    }

    /// Reads one container starting at the current `{` or `[`.
    pub(super) fn parse_value(&mut self) -> Parsed {
        // A closed seed is the whole object: nothing to set up for reading it.
        if self
            .seed
            .as_ref()
            .is_some_and(|s| s.closed && s.root == self.pos)
            && let Some(seed) = self.seed.take()
            && let Some(root) = self.closed_seed(seed)
        {
            return Ok((root, false));
        }
        let mut stack = scratch::stack();
        self.closers.clear();
        self.spans.clear();
        self.spans_void = false;
        let mut expect = Expect::Value;
        if let Some(seed) = self.seed.take().filter(|s| s.root == self.pos) {
            // The state reading the members would have left: inside the root object, right
            // after the comma that follows them, nothing repaired.
            let members = Object::seeded(self.readings.build, seed.members, self.text);
            stack.push(Frame::Object(members, None));
            self.closers.push(b'}');
            // Spans only where the run notes them (`salvage_after`): the same `Run` either way.
            if self.readings.member_text {
                self.spans = seed.spans;
            }
            self.plain_gave_up |= seed.plain_gave_up;
            self.progressed = true;
            self.pos = seed.comma + 1;
            expect = Expect::Key {
                comma: Some(seed.comma),
            };
        } else if self.readings.member_text {
            // A call's root object holds a handful of members: room for them at once (not
            // before the seed, whose spans replace these, and only when they are noted: an
            // allocation and its free for nothing on every other run). Made, not reserved:
            // `spans` is empty here, and `reserve`'s growth path cost ~80 instructions more.
            if self.spans.capacity() < SPANS_CAPACITY {
                self.spans = Vec::with_capacity(SPANS_CAPACITY);
            }
        }
        loop {
            self.skip_blank();
            let Some(&b) = self.bytes.get(self.pos) else {
                return Ok((self.close_at_end(&mut stack, expect), true));
            };
            match expect {
                Expect::Key { comma } => match b {
                    b'}' => {
                        if let Some(c) = comma {
                            self.log.note(RepairKind::TrailingCommaRemoved, c);
                        }
                        self.pos += 1;
                        if let Some(root) = self.pop(&mut stack, &mut expect) {
                            return Ok((root, false));
                        }
                    }
                    b']' => self.stray_closer_in(&stack)?,
                    _ => match self.read_member(&mut stack, &mut expect)? {
                        Some(Step::Cut(pending)) => {
                            return Ok(self.cut_inside(&mut stack, &mut expect, pending));
                        }
                        Some(_) => {}
                        None => {
                            if !self.read_key(&mut stack, &mut expect)? {
                                return Ok((self.close_at_end(&mut stack, expect), true));
                            }
                        }
                    },
                },
                Expect::Colon => {
                    // A member missing its colon (`"key2" "value2",`): blanks part a quoted
                    // key from a quoted value that is whole, and a member's end follows it. No
                    // blank (`"key"": false`) is a doubled quote, and a bare word before a
                    // string (`True "end_line"`) is no key: both stay refused.
                    if b != b':'
                        && self.pos > 0
                        && scan::is_ws(self.bytes[self.pos - 1])
                        && matches!(
                            self.bytes[..self.pos].trim_ascii_end().last(),
                            Some(b'"' | b'\'')
                        )
                        && Quote::at(self.bytes, self.pos)
                            .is_some_and(|q| lookahead::is_member_value(self.bytes, self.pos, q))
                    {
                        self.log.note(RepairKind::ColonInserted, self.pos);
                        self.progressed = true;
                        expect = Expect::Value;
                        continue;
                    }
                    if b != b':' {
                        return Err(self.error(SalvageErrorKind::Syntax, self.pos));
                    }
                    self.pos += 1;
                    self.progressed = true;
                    expect = Expect::Value;
                }
                Expect::Element { comma } if b == b']' => {
                    if let Some(c) = comma {
                        self.log.note(RepairKind::TrailingCommaRemoved, c);
                    }
                    self.pos += 1;
                    if let Some(root) = self.pop(&mut stack, &mut expect) {
                        return Ok((root, false));
                    }
                }
                // A document's array left open before the `}` of the object below it
                // (`{foo: [}`): that `}` closes both, as after a value (documents only: a
                // call keeps refusing a closer where nothing was read).
                Expect::Element { .. }
                    if b == b'}'
                        && self.readings.lenient_scalars
                        && self.closers.len() >= 2
                        && self.closers[self.closers.len() - 2] == b'}' =>
                {
                    self.log.note(RepairKind::ExtraCloserRemoved, self.pos);
                    self.pos += 1;
                    if let Some(root) = self.pop(&mut stack, &mut expect) {
                        return Ok((root, false));
                    }
                    if let Some(root) = self.pop(&mut stack, &mut expect) {
                        return Ok((root, false));
                    }
                }
                Expect::Element { .. } if b == b'}' => self.stray_closer_in(&stack)?,
                Expect::Value | Expect::Element { .. } => {
                    match self.read_value(b, &mut stack, &mut expect)? {
                        Step::Go => {}
                        Step::Done(root) => return Ok((root, false)),
                        Step::Cut(pending) => {
                            return Ok(self.cut_inside(&mut stack, &mut expect, pending));
                        }
                    }
                }
                Expect::Next => {
                    if let Some(root) = self.after_value(b, &mut stack, &mut expect)? {
                        return Ok((root, false));
                    }
                }
            }
        }
    }

    /// The text ended inside a value: the part kept (`pending`, a string) goes into its
    /// container, and every open container is closed.
    fn cut_inside(
        &mut self,
        stack: &mut Vec<Frame>,
        expect: &mut Expect,
        pending: Option<Node>,
    ) -> (Node, bool) {
        if let Some(value) = pending
            && let Some(root) = self.emit(stack, expect, value)
        {
            return (root, true);
        }
        (self.close_at_end(stack, *expect), true)
    }

    /// After a value: a comma, a closer, or (repaired) a missing comma or a stray closer. The
    /// root when its closer was read.
    fn after_value(
        &mut self,
        b: u8,
        stack: &mut Vec<Frame>,
        expect: &mut Expect,
    ) -> Result<Option<Node>, RunError> {
        let in_object = matches!(stack.last(), Some(Frame::Object(..)));
        let closer = if in_object { b'}' } else { b']' };
        if b == b',' {
            let comma = Some(self.pos);
            *expect = if in_object {
                Expect::Key { comma }
            } else {
                Expect::Element { comma }
            };
            self.pos += 1;
        } else if b == closer {
            // `{"a": "b"}, "c": "d"}`: the root object goes on after a stray `}`.
            if in_object && stack.len() == 1 && self.root_goes_on(self.pos + 1) {
                self.stray_closer();
                return Ok(None);
            }
            self.pos += 1;
            return Ok(self.pop(stack, expect));
        } else if b == b'}'
            && !in_object
            && matches!(stack.iter().rev().nth(1), Some(Frame::Object(..)))
            && lookahead::member_after_comma(self.bytes, self.pos + 1)
        {
            // `["a", "b"}, "c": 1}`: `}` for `]` before a comma and a member of the object
            // below closes the array.
            self.log.note(RepairKind::ExtraCloserRemoved, self.pos);
            self.pos += 1;
            return Ok(self.pop(stack, expect));
        } else if (b == b'}' || b == b']')
            && self.closers.len() >= 2
            && self.closers[self.closers.len() - 2] == b
            && self.stray_at != Some(self.pos)
        {
            // A closer of the other kind that matches the container below.
            // - Detects: `[{"a": "b"], "c": 1}`, `["a"}, {…}]` (after the member case above).
            // - Does: the innermost container's closer is missing, and this one closes both
            //   (reported as `extra_closer_removed`, the closer it stands for).
            // - Never fires when: the container below is of the innermost kind (`{"a": [1}`
            //   then `}` is a stray, as before), or in the second reading of a split this
            //   closer made (`stray_at`: there it is a stray).
            // - Example: `{"a": [{"k": 1], "b": 2}` → `{"a": [{"k": 1}], "b": 2}`.
            self.log.note(RepairKind::ExtraCloserRemoved, self.pos);
            self.closed_both_at.get_or_insert(self.pos);
            self.pos += 1;
            if let Some(root) = self.pop(stack, expect) {
                return Ok(Some(root));
            }
            return Ok(self.pop(stack, expect));
        } else if b == b':'
            && self.readings.lenient_scalars
            && let Some(Frame::Array(items)) = stack.last_mut()
            && let Some(key) = items.take_lone_string()
        {
            self.open_object_at_colon(stack, expect, key)?;
        } else if b == b'}' || b == b']' {
            self.stray_closer();
        } else if in_object && (Quote::at(self.bytes, self.pos).is_some() || scan::is_key_start(b))
        {
            self.log.note(RepairKind::CommaInserted, self.pos);
            *expect = Expect::Key { comma: None };
        } else if !in_object
            && (starts_value(self.bytes, self.pos) || self.quoted_word_end(self.pos).is_some())
        {
            self.log.note(RepairKind::CommaInserted, self.pos);
            *expect = Expect::Element { comma: None };
        } else {
            return Err(self.error(SalvageErrorKind::Syntax, self.pos));
        }
        Ok(None)
    }

    /// A document's array whose first element is a key: the object's `{` was left out.
    ///
    /// - Detects: a colon right after the first element of an array, a string
    ///   (`["key": "value"]`, `["key": "value"}]`).
    /// - Does: that string becomes the key of an object opened inside the array
    ///   (`opener_inserted`); its `}`, or the array's `]` (which then closes both), ends it.
    /// - Never fires when: reading a call (documents only: json_repair's reading), or the colon
    ///   follows a later element or a non-string (`["a", 1: 2]`, `[1: 2]` stay refused: where
    ///   the object would start is a guess).
    /// - Example: `["key":"value"]` → `[{"key": "value"}]`.
    ///
    /// The caller has taken `key` out of the array, which is now empty.
    fn open_object_at_colon(
        &mut self,
        stack: &mut Vec<Frame>,
        expect: &mut Expect,
        key: Text,
    ) -> Result<(), RunError> {
        if stack.len() + 1 >= self.max_depth {
            return Err(self.error(SalvageErrorKind::TooDeep, self.pos));
        }
        self.log.note(RepairKind::OpenerInserted, self.pos);
        stack.push(Frame::Object(
            Object::new(self.readings.build, 0),
            Some(key),
        ));
        self.closers.push(b'}');
        self.pos += 1;
        self.progressed = true;
        *expect = Expect::Value;
        Ok(())
    }

    /// Whether a comma and then another member of an object follow `at`.
    fn root_goes_on(&self, at: usize) -> bool {
        let comma = scan::skip_ws(self.bytes, at);
        self.bytes.get(comma) == Some(&b',')
            && lookahead::continues_root(self.bytes, scan::skip_ws(self.bytes, comma + 1))
    }

    /// Reads a key (quoted or bare) into the innermost object. `false` when the text ends in it.
    fn read_key(&mut self, stack: &mut [Frame], expect: &mut Expect) -> Result<bool, RunError> {
        let start = self.pos;
        // Runs started at different candidates may reach the same cut key: read it once.
        if self.memo.key_is_cut(start) {
            self.pos = self.bytes.len();
            return Ok(false);
        }
        let key = if let Some(quote) = Quote::at(self.bytes, self.pos) {
            if quote != Quote::Smart
                && self.readings.lenient_scalars
                && let Some(misquoted) = document::misquoted_key(self.bytes, start)
            {
                Text::Owned(self.read_misquoted_key(quote, start, misquoted))
            } else if let Some(key) = self.read_quoted_key(quote, start)? {
                key
            } else {
                return Ok(false);
            }
        } else if scan::is_key_start(self.bytes[self.pos]) {
            let end = scan::key_end(self.bytes, self.pos);
            if end == self.bytes.len() {
                self.memo.note_cut_key(start);
                self.pos = end;
                return Ok(false);
            }
            self.log.note(RepairKind::KeyQuoted, self.pos);
            // Bare-key bytes (letters, digits, `_ $ . -`): nothing JSON escapes.
            let key = Text::Span {
                start: self.pos,
                end,
                spelt: Spelt::Bare,
            };
            self.pos = end;
            // `b":` — a key missing only its opening quote: the closing one goes too.
            if self.bytes.get(end) == Some(&b'"')
                && self.bytes.get(scan::skip_ws(self.bytes, end + 1)) == Some(&b':')
            {
                self.pos = end + 1;
            }
            key
        } else {
            return Err(self.error(SalvageErrorKind::Syntax, self.pos));
        };
        if let Some(Frame::Object(_, pending)) = stack.last_mut() {
            *pending = Some(key);
        }
        *expect = Expect::Colon;
        Ok(true)
    }

    /// Reads the document key opened by `quote` (`"` or `'`) at `start` as `misquoted` says
    /// (`{"key:"value"}`, `{"k"e"y": 1}`: see [`document::misquoted_key`]).
    fn read_misquoted_key(
        &mut self,
        quote: Quote,
        start: usize,
        misquoted: document::MisquotedKey,
    ) -> String {
        let (end, resume) = match misquoted {
            document::MisquotedKey::MissingClose(colon) => {
                self.log.note(RepairKind::QuoteInserted, colon);
                if quote == Quote::Single {
                    self.log.note(RepairKind::QuotesNormalized, start);
                }
                (colon, colon)
            }
            document::MisquotedKey::HoldsQuotes(close) => {
                self.log.note(RepairKind::QuotesNormalized, start);
                (close, close + 1)
            }
        };
        self.pos = resume;
        self.text[start + quote.len()..end].to_owned()
    }

    /// Reads the quoted key opened by `quote` at `start`; `None` when the text ends in it.
    fn read_quoted_key(&mut self, quote: Quote, start: usize) -> Result<Option<Text>, RunError> {
        if quote == Quote::Smart {
            self.smart_key_fits()?;
        } else if let Some(mut key) = self.read_plain_key_span(quote) {
            // The content as it stands: `"…"` around it is what serde_json writes.
            self.trim_layout_text(&mut key);
            return Ok(Some(key));
        }
        match self.read_string(quote, Role::Key) {
            Str::Closed(mut key) => {
                self.trim_layout(&mut key);
                Ok(Some(Text::Owned(key)))
            }
            Str::Cut(_) | Str::Broken(_) => {
                self.memo.note_cut_key(start);
                Ok(None)
            }
        }
    }

    /// A key opened by a smart quote ends only at `”`, so every later `“` is content. One that
    /// meets a line break or a `{` before its `”` is prose, not a key: it fails there, so a prose
    /// candidate costs the distance to the next `{`, not the rest of the text (`p {“a {“a …`).
    fn smart_key_fits(&self) -> Result<(), RunError> {
        let body = self.pos + Quote::Smart.len();
        let rest = &self.bytes[body..];
        let Some(stop) = memchr::memchr2(b'{', b'\n', rest) else {
            return Ok(());
        };
        if memchr::memmem::find(&rest[..stop], scan::RIGHT_DOUBLE).is_some() {
            return Ok(());
        }
        Err(self.error(SalvageErrorKind::Syntax, body + stop))
    }

    /// Reads a value starting with `b`.
    fn read_value(
        &mut self,
        b: u8,
        stack: &mut Vec<Frame>,
        expect: &mut Expect,
    ) -> Result<Step, RunError> {
        let value = match b {
            b'{' | b'[' => {
                // Counted as serde_json counts its recursion limit (128 by default): it refuses
                // strict JSON nested that deep, so salvage refuses the same nesting, and no
                // value comes back that serde_json cannot read again.
                if stack.len() + 1 >= self.max_depth {
                    return Err(self.error(SalvageErrorKind::TooDeep, self.pos));
                }
                self.pos += 1;
                if b == b'{' {
                    stack.push(Frame::Object(Object::new(self.readings.build, 8), None));
                    self.closers.push(b'}');
                    *expect = Expect::Key { comma: None };
                } else {
                    stack.push(Frame::Array(Array::new(self.readings.build)));
                    self.closers.push(b']');
                    *expect = Expect::Element { comma: None };
                }
                return Ok(Step::Go);
            }
            // `.25` only in a document's lenient readings.
            b'-' | b'+' | b'0'..=b'9' | b'.'
                if b != b'.'
                    || (self.readings.lenient_scalars
                        && self.bytes.get(self.pos + 1).is_some_and(u8::is_ascii_digit)) =>
            {
                let end = scan::number_end(self.bytes, self.pos);
                // An integer JSON spells as it stands (the call's numbers nearly all are): kept
                // as where it is, built into a `Number` only with the values.
                if let Some(value) = (!self.readings.lenient_scalars)
                    .then(|| numbers::small_integer_value(&self.bytes[self.pos..end]))
                    .flatten()
                {
                    let start = self.pos;
                    self.pos = end;
                    Node::Int { value, start, end }
                } else {
                    match self.read_number()? {
                        Some(value) => Node::from_value(value),
                        None => return Ok(Step::Cut(None)),
                    }
                }
            }
            _ => {
                let quote = Quote::at(self.bytes, self.pos);
                let open = self.pos;
                let plain = quote
                    .filter(|q| matches!(q, Quote::Double | Quote::Single))
                    .and_then(|q| self.read_plain_string(q));
                if let Some(plain) = plain {
                    let (mut s, after) = (plain.text, self.pos);
                    // Layout before the closing quote is raw, so never in canonical text.
                    self.trim_layout_text(&mut s);
                    match self.concatenation(&mut s) {
                        Joined::Closed => {
                            // Nothing joined on: the string's text is the quotes and what
                            // lies between them.
                            if plain.canonical && self.pos == after {
                                self.value_span = Some(open..after);
                            }
                            Node::Str(s)
                        }
                        Joined::Cut => return Ok(Step::Cut(Some(Node::Str(s)))),
                        Joined::Broken(at) => {
                            return Err(self.error(SalvageErrorKind::Syntax, at));
                        }
                    }
                } else if let Some(quote) = quote {
                    match self.read_string(quote, Role::Value) {
                        Str::Closed(mut s) => {
                            self.trim_layout(&mut s);
                            let mut s = Text::Owned(s);
                            match self.concatenation(&mut s) {
                                Joined::Closed => Node::Str(s),
                                Joined::Cut => return Ok(Step::Cut(Some(Node::Str(s)))),
                                Joined::Broken(at) => {
                                    return Err(self.error(SalvageErrorKind::Syntax, at));
                                }
                            }
                        }
                        // The model closed the fence, so the text was not cut: the string
                        // swallowed the closing fence, which is a syntax error, not truncation.
                        Str::Cut(_) if self.fence && ends_with_fence(self.bytes) => {
                            return Err(self.error(SalvageErrorKind::Syntax, self.bytes.len()));
                        }
                        Str::Cut(mut s) => {
                            if self.readings.lenient_scalars {
                                document::closing_fence(self.text, &self.closers, &mut s);
                            }
                            if self.readings.trim_cut_strings {
                                document::trim_cut_string(self.bytes, &mut s);
                            }
                            return Ok(Step::Cut(Some(Node::Str(Text::Owned(s)))));
                        }
                        Str::Broken(at) => return Err(self.error(SalvageErrorKind::Syntax, at)),
                    }
                } else if let Some(word) = self.word_missing_open_quote() {
                    Node::Str(Text::Owned(word))
                } else if let Some(literal) = self.read_literal() {
                    literal
                } else if b.is_ascii_alphabetic() {
                    match self.read_word()? {
                        Some(value) => Node::from_value(value),
                        None => return Ok(Step::Cut(None)),
                    }
                } else {
                    return Err(self.error(SalvageErrorKind::Syntax, self.pos));
                }
            }
        };
        Ok(match self.emit(stack, expect, value) {
            Some(root) => Step::Done(root),
            None => Step::Go,
        })
    }

    /// Joins `'a' + 'b'` (JavaScript or Python string concatenation) onto the string just read,
    /// reported as `quotes_normalized`: how the parts end, like one string.
    ///
    /// Inlined for the common case, where no `+` or `/` follows the string.
    #[inline]
    fn concatenation(&mut self, read: &mut Text) -> Joined {
        let peek = scan::skip_ws(self.bytes, self.pos);
        if !matches!(self.bytes.get(peek), Some(b'+' | b'/')) {
            return Joined::Closed;
        }
        self.join_parts(read.to_mut(self.text))
    }

    /// [`Self::concatenation`] once a `+` or `/` follows the string.
    #[inline(never)]
    fn join_parts(&mut self, read: &mut String) -> Joined {
        loop {
            // The common case, a comma or closer next, costs one look.
            let peek = scan::skip_ws(self.bytes, self.pos);
            if !matches!(self.bytes.get(peek), Some(b'+' | b'/')) {
                return Joined::Closed;
            }
            let (before, log) = (self.pos, self.log.clone());
            self.skip_blank();
            let plus = self.pos;
            if self.bytes.get(plus) == Some(&b'+') {
                self.pos += 1;
                self.skip_blank();
            }
            let quote =
                Quote::at(self.bytes, self.pos).filter(|_| self.bytes.get(plus) == Some(&b'+'));
            let Some(quote) = quote else {
                (self.pos, self.log) = (before, log);
                return Joined::Closed;
            };
            self.log.note(RepairKind::QuotesNormalized, plus);
            match self.read_string(quote, Role::Value) {
                Str::Closed(part) => read.push_str(&part),
                Str::Cut(part) => {
                    read.push_str(&part);
                    return Joined::Cut;
                }
                Str::Broken(at) => return Joined::Broken(at),
            }
        }
    }

    /// An array element missing its opening quote: a bare word, its closing quote, then `,` or
    /// `]`.
    ///
    /// - Detects: `["value1", value2", "value3"]` (and `["value1" value2"]`, where the look-ahead
    ///   ended the first string before the word).
    /// - Does: reads the word as the string it closes (`quote_inserted`).
    /// - Never fires when: outside an array, when the word is not followed at once by its quote,
    ///   or when that quote is followed by something other than `,` or `]`.
    /// - Example: `["a" b", "c"]` → `["a", "b", "c"]`.
    fn word_missing_open_quote(&mut self) -> Option<String> {
        let end = self.quoted_word_end(self.pos)?;
        self.log.note(RepairKind::QuoteInserted, self.pos);
        let word = self.text[self.pos..end].to_owned();
        self.pos = end + 1;
        Some(word)
    }

    /// Where the bare word at `pos` ends (at its closing quote) when it is an array element
    /// missing its opening quote (see [`Self::word_missing_open_quote`]).
    fn quoted_word_end(&self, pos: usize) -> Option<usize> {
        if self.readings.lenient_scalars && self.closers.last() == Some(&b'}') {
            return document::value_missing_open_quote(self.bytes, pos);
        }
        if self.closers.last() != Some(&b']') || !scan::is_key_start(self.bytes[pos]) {
            return None;
        }
        let end = scan::key_end(self.bytes, pos);
        (self.bytes.get(end) == Some(&b'"')
            && end + 1 < self.bytes.len()
            && scan::followed_by(self.bytes, end + 1, b",]"))
        .then_some(end)
    }

    /// Puts a finished value into the innermost container; the value itself when there is none.
    pub(super) fn emit(
        &mut self,
        stack: &mut [Frame],
        expect: &mut Expect,
        value: Node,
    ) -> Option<Node> {
        *expect = Expect::Next;
        let span = self.value_span.take();
        let Some((last, outer)) = stack.split_last_mut() else {
            return Some(value);
        };
        match last {
            Frame::Object(members, key) => {
                if let Some(key) = key.take() {
                    self.insert_member(members, outer, key, value, span);
                }
                None
            }
            Frame::Array(items) => {
                items.push(value, self.text);
                self.progressed = true;
                None
            }
        }
    }

    /// Puts the member `key`: `value` into `members`, the innermost object, whose containers
    /// are `outer`; `span` is the value's canonical text. Always inlined: once per member, and
    /// the call's own frame cost ~20 instructions of it.
    #[inline(always)]
    fn insert_member(
        &mut self,
        members: &mut Object,
        outer: &[Frame],
        key: Text,
        value: Node,
        span: Option<Range<usize>>,
    ) {
        let key_at = key.canonical_at();
        match members.insert(key, value, self.text) {
            // The last value wins, in the first place, as in serde_json; the earlier one is
            // reported.
            Err(key) => {
                let at = pointer_to(outer, key.as_str(self.text), self.text);
                self.log.drop_key(at, self.pos);
                self.spans_void |= outer.is_empty();
            }
            Ok(()) => {
                if outer.is_empty() && self.readings.member_text {
                    self.spans.push(MemberText {
                        key: key_at,
                        value: span,
                    });
                }
            }
        }
    }

    /// Closes the innermost container; the root when it was the last.
    pub(super) fn pop(&mut self, stack: &mut Vec<Frame>, expect: &mut Expect) -> Option<Node> {
        let frame = stack.pop()?;
        self.closers.pop();
        self.emit(stack, expect, frame.into_node())
    }

    /// A stray closer where a key or element may start: garbage (`{]}`) when the container has
    /// read nothing yet, so that it never closes to `{}`.
    fn stray_closer_in(&mut self, stack: &[Frame]) -> Result<(), RunError> {
        let empty = match stack.last() {
            Some(Frame::Object(members, _)) => members.is_empty(),
            Some(Frame::Array(items)) => items.is_empty(),
            None => true,
        };
        if empty {
            return Err(self.error(SalvageErrorKind::Syntax, self.pos));
        }
        self.stray_closer();
        Ok(())
    }

    fn stray_closer(&mut self) {
        self.log.note(RepairKind::ExtraCloserRemoved, self.pos);
        self.pos += 1;
    }

    /// Skips whitespace and comments.
    /// [`Self::skip_blank`] between top-level values; with the document readings
    /// (`lenient_scalars`) a `#` starts a line comment there too (Python's and YAML's, which
    /// json_repair reads), noted as a removed comment. Inside values `#` stays what it was.
    fn skip_between_values(&mut self) {
        loop {
            self.skip_blank();
            if !(self.readings.lenient_scalars && self.bytes.get(self.pos) == Some(&b'#')) {
                return;
            }
            self.log.note(RepairKind::CommentRemoved, self.pos);
            self.pos = memchr::memchr(b'\n', &self.bytes[self.pos..])
                .map_or(self.bytes.len(), |end| self.pos + end);
        }
    }

    /// Skips whitespace and comments. Inlined for its common case, called at every token of
    /// the main loop: nothing to skip, or blanks and then no `/`.
    #[inline(always)]
    fn skip_blank(&mut self) {
        let at = scan::skip_ws(self.bytes, self.pos);
        self.pos = at;
        if self.bytes.get(at) == Some(&b'/') {
            self.skip_comments();
        }
    }

    /// [`Self::skip_blank`] at a `/`: comments and the blanks between them.
    #[cold]
    #[inline(never)]
    fn skip_comments(&mut self) {
        loop {
            self.pos = scan::skip_ws(self.bytes, self.pos);
            if self.bytes.get(self.pos) != Some(&b'/') {
                return;
            }
            match self.memo.comment_at(self.bytes, self.pos) {
                Comment::None => return,
                Comment::Closed(end) => {
                    self.log.note(RepairKind::CommentRemoved, self.pos);
                    self.pos = end;
                }
                Comment::Unterminated => {
                    self.log.note(RepairKind::CommentRemoved, self.pos);
                    self.pos = self.bytes.len();
                    return;
                }
            }
        }
    }

    pub(super) fn error(&self, kind: SalvageErrorKind, offset: usize) -> RunError {
        RunError {
            kind,
            offset,
            progressed: self.progressed,
            cut: false,
        }
    }
}

/// The JSON Pointer of member `key` of the innermost object, whose containers are `outer`.
fn pointer_to(outer: &[Frame], key: &str, text: &str) -> String {
    let mut at = String::new();
    for frame in outer {
        match frame {
            Frame::Object(_, Some(k)) => pointer::push(&mut at, k.as_str(text)),
            Frame::Object(_, None) => {}
            Frame::Array(items) => pointer::push_index(&mut at, items.len()),
        }
    }
    pointer::push(&mut at, key);
    at
}

/// What reading one value did.
enum Step {
    /// Keep going.
    Go,
    /// The root container closed.
    Done(Node),
    /// The text ended inside the value; a partial string is kept, anything else dropped.
    Cut(Option<Node>),
}

/// How a string joined by `+` to the ones after it ended.
enum Joined {
    /// Every part closed.
    Closed,
    /// The text ended inside the last part.
    Cut,
    /// The last part cannot be closed safely (see [`Str::Broken`]).
    Broken(usize),
}

/// Whether a value can start at `pos` (for a missing comma between array elements).
fn starts_value(bytes: &[u8], pos: usize) -> bool {
    Quote::at(bytes, pos).is_some()
        || matches!(
            bytes[pos],
            b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b'T' | b'F' | b'N'
        )
}

/// Whether a closed value kept nothing read from the text: no key and no scalar (`{}`, `[[]]`).
fn holds_nothing(value: &Node) -> bool {
    match value {
        Node::Object(members) => members.is_empty(),
        Node::Array(items) => items.iter().all(holds_nothing),
        Node::Built(Value::Object(map)) => map.is_empty(),
        Node::Built(Value::Array(items)) => items.iter().all(holds_nothing_built),
        Node::Built(_) | Node::Int { .. } | Node::Str(_) => false,
    }
}

/// [`holds_nothing`] for a value the strict read built.
fn holds_nothing_built(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.iter().all(holds_nothing_built),
        _ => false,
    }
}

/// Whether the text ends with a closing fence on a line of its own.
fn ends_with_fence(bytes: &[u8]) -> bool {
    let mut end = bytes.len();
    while end > 0 && scan::is_ws(bytes[end - 1]) {
        end -= 1;
    }
    let Some(mut at) = end.checked_sub(3) else {
        return false;
    };
    if &bytes[at..end] != b"```" {
        return false;
    }
    while at > 0 && matches!(bytes[at - 1], b' ' | b'\t') {
        at -= 1;
    }
    at > 0 && bytes[at - 1] == b'\n'
}
