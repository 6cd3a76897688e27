//! [`Mender`]: the pipeline, stage by stage, for one call or one assistant turn.

use std::sync::Arc;

use crate::feedback::{
    MessageOptions, RetryContext, emit, emit_dropped, notes_for, retry_message,
    unknown_tool_message, unvalidated_message,
};
use crate::recover::{LostCall, RecoverMode, recover_text};
use crate::repair::{
    Mended, Rejection, Strict, Verdict, compact, fast_path, mend_arguments, mend_value,
};
use crate::turn::call_id::{StableHasher, recovered_call_id, turn_tag};
use crate::turn::canonical::{fingerprint, signature};
use crate::turn::names::repair_name;
use crate::turn::{AssistantTurn, Session, Signature, TurnResult, guard_message};
use crate::{
    CallResult, Limits, Origin, Outcome, Repair, RepairKind, RepairStats, Status, Tool, ToolSet,
    TurnReport,
};

/// Options for a [`Mender`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct MenderOptions {
    /// Which text channels are scanned for leaked calls (default: off).
    pub recover: RecoverMode,
    /// The model id, for tracing events and per-model behaviour.
    pub model: String,
    /// Every size, depth and count bound.
    pub limits: Limits,
    /// Quote received values (bounded) in retry messages. Off by default: messages are
    /// value-free (DESIGN §3, invariant 8) because argument values may hold secrets.
    pub include_values: bool,
}

impl MenderOptions {
    /// Sets where leaked calls are recovered from.
    #[must_use]
    pub fn with_recover(mut self, recover: RecoverMode) -> Self {
        self.recover = recover;
        self
    }

    /// Sets the model id.
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Quotes received values, bounded, in retry messages.
    #[must_use]
    pub fn with_values(mut self, include_values: bool) -> Self {
        self.include_values = include_values;
        self
    }

    /// Sets the limits.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

/// The toolmend pipeline over one compiled [`ToolSet`].
///
/// Build it once per tool list; it is `Sync` and may be shared across threads. Per-run state
/// (storm window, retry budget) lives in a [`Session`] the caller owns.
///
/// # Examples
///
/// ```
/// use toolmend::{Mender, Status, ToolSet};
///
/// let tools = ToolSet::from_json(&serde_json::json!([{"name": "read_many", "parameters": {
///     "type": "object", "required": ["paths"],
///     "properties": {"paths": {"type": "array", "items": {"type": "string"}}}}}]));
/// let mender = Mender::new(tools);
///
/// let call = mender.repair_call("read_many", r#"{"paths": "[\"a\",\"b\"]"}"#);
/// assert_eq!(call.status, Status::Repaired);
/// assert_eq!(call.arguments_text, r#"{"paths":["a","b"]}"#);
///
/// let valid = r#"{ "paths" : ["a"] }"#;
/// assert_eq!(mender.repair_call("read_many", valid).arguments_text, valid);
/// ```
#[derive(Debug)]
pub struct Mender {
    tools: ToolSet,
    options: MenderOptions,
    stats: RepairStats,
}

/// A call on its way through the turn, before its messages are settled.
struct Pending {
    result: CallResult,
    rejection: Option<Rejection>,
    unknown: bool,
}

impl Mender {
    /// A mender with default options.
    #[must_use]
    pub fn new(tools: ToolSet) -> Self {
        Self::with_options(tools, MenderOptions::default())
    }

    /// A mender with the given options.
    #[must_use]
    pub fn with_options(tools: ToolSet, options: MenderOptions) -> Self {
        Self {
            tools,
            options,
            stats: RepairStats::new(),
        }
    }

    /// The tool set.
    #[must_use]
    pub fn tools(&self) -> &ToolSet {
        &self.tools
    }

    /// The options.
    #[must_use]
    pub fn options(&self) -> &MenderOptions {
        &self.options
    }

    /// The run's counters.
    #[must_use]
    pub fn stats(&self) -> &RepairStats {
        &self.stats
    }

    /// Mends one call with no session: salvage, validate-then-repair, feedback.
    ///
    /// Concatenated arguments (`{…}{…}`) are not split here (that needs a turn); such a call is
    /// `invalid`. Use [`Mender::run_turn`] for whole turns.
    #[must_use]
    pub fn repair_call(&self, name: &str, arguments: &str) -> CallResult {
        let mut unused = Vec::new();
        let mut pending = match self.tools.get(name) {
            Some(tool) => match fast_path(tool, arguments, &self.options.limits) {
                Ok(value) => {
                    // Nearly every call ends here: build the result once, count it, done.
                    let mut call =
                        blank(String::new(), tool.shared_name(), Origin::Native, arguments);
                    call.status = Status::Valid;
                    call.arguments = Some(value);
                    self.stats.count_valid();
                    return call;
                }
                // The rest of the pipeline starts from what the strict parse found, for the
                // tool found (not looked up again).
                Err(strict) => self.mend_tool_call(
                    tool,
                    Vec::new(),
                    String::new(),
                    (arguments, strict),
                    Origin::Native,
                    (false, false),
                    &mut unused,
                ),
            },
            None => self.mend_native(name, arguments, &mut unused),
        };
        // Settled where it lies: the result is moved once, into the caller's hands.
        self.settle_in_place(&mut pending, None);
        self.observe(&pending.result);
        pending.result
    }

    /// [`Self::repair_call`] counted nowhere (no stats, no tracing event): for calls of a
    /// history, which every later request of a conversation sends again
    /// ([`Self::mend_history`]).
    pub(crate) fn mend_quietly(&self, name: &str, arguments: &str) -> CallResult {
        let pending = self.mend_native(name, arguments, &mut Vec::new());
        self.settle(pending, None)
    }

    /// A native call read from nothing yet (no strict parse, no id, not cut off).
    fn mend_native(&self, name: &str, arguments: &str, more: &mut Vec<Pending>) -> Pending {
        self.mend_call(
            String::new(),
            name,
            (arguments, Strict::Unread),
            Origin::Native,
            false,
            false,
            more,
        )
    }

    /// Runs one assistant turn through every stage, with the session's storm and retry state.
    pub fn run_turn(&self, session: &mut Session, turn: &AssistantTurn) -> TurnResult {
        self.turn(session, turn, true)
    }

    /// [`Self::run_turn`] for the last turn of a session, which is dropped with it: the same
    /// result, without computing the storm signatures of calls that nothing in this turn
    /// compared (a proxy's window lives for one response, and most turns call a tool once).
    pub fn run_last_turn(&self, mut session: Session, turn: &AssistantTurn) -> TurnResult {
        self.turn(&mut session, turn, false)
    }

    /// The turn's stages; `keep` says the session outlives the turn (its window's signatures
    /// are then computed before the turn's calls are handed back).
    fn turn(&self, session: &mut Session, turn: &AssistantTurn, keep: bool) -> TurnResult {
        if turn.new_user_turn {
            session.new_user_turn();
        }
        let cut_off = turn.finish_reason.as_deref() == Some("length");
        let last = turn.tool_calls.len().saturating_sub(1);
        let mut pending: Vec<Pending> = Vec::new();
        for (i, call) in turn.tool_calls.iter().enumerate() {
            let mut parts = Vec::new();
            let first = self.mend_call(
                call.id.clone(),
                &call.name,
                (&call.arguments, Strict::Unread),
                Origin::Native,
                cut_off && i == last,
                true,
                &mut parts,
            );
            for mut part in std::iter::once(first).chain(parts) {
                part.result.native_index = Some(i);
                pending.push(part);
            }
        }
        let native = pending.len();

        let turn_number = session.turns;
        session.turns = session.turns.wrapping_add(1);
        let (content, reasoning) = self.recover(turn, turn_number, &mut pending, native);
        let mut report = TurnReport {
            duplicates_dropped: self.drop_duplicates(&mut pending, native),
            ..TurnReport::default()
        };

        let mut calls: Vec<CallResult> = Vec::with_capacity(pending.len());
        for p in pending {
            let dispatchable = p.rejection.is_none() && p.result.status != Status::Suppressed;
            calls.push(self.settle(p, Some(session)));
            if dispatchable {
                self.break_storm(session, &mut calls, &mut report);
            }
            let call = &calls[calls.len() - 1];
            count(call, &mut report);
            self.observe(call);
        }
        if keep {
            session
                .storm
                .settle(&mut |index| call_signature(&calls[index]));
        }
        TurnResult {
            content,
            reasoning,
            calls,
            report,
        }
    }

    /// Salvage, name repair and validate-then-repair of one call. When its arguments held
    /// several objects and `split` is allowed, the first part is returned and the others are
    /// pushed to `more`. `raw` comes with what the fast path found in it, if it ran for the
    /// tool `name` names.
    #[allow(clippy::too_many_arguments)]
    fn mend_call(
        &self,
        id: String,
        name: &str,
        (raw, strict): (&str, Strict),
        origin: Origin,
        cut_off: bool,
        split: bool,
        more: &mut Vec<Pending>,
    ) -> Pending {
        let mut name_repairs = Vec::new();
        let tool = match self.tools.get(name) {
            Some(tool) => tool,
            None => match repair_name(name, &self.tools).and_then(|n| self.tools.get(n)) {
                Some(tool) => {
                    name_repairs.push(Repair::new(RepairKind::NameRepaired, String::new()));
                    tool
                }
                None => {
                    let result = blank(id, Arc::from(name), origin, raw);
                    return Pending {
                        result,
                        rejection: None,
                        unknown: true,
                    };
                }
            },
        };
        self.mend_tool_call(
            tool,
            name_repairs,
            id,
            (raw, strict),
            origin,
            (cut_off, split),
            more,
        )
    }

    /// [`Self::mend_call`] once the call's tool is known (`name_repairs`: how its name was
    /// repaired to find it). Inlined: what the strict read found, handed to a call, is copied
    /// whole on the way (issue #31).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn mend_tool_call(
        &self,
        tool: &Tool,
        mut name_repairs: Vec<Repair>,
        id: String,
        (raw, strict): (&str, Strict),
        origin: Origin,
        (cut_off, split): (bool, bool),
        more: &mut Vec<Pending>,
    ) -> Pending {
        let mut mended = mend_arguments(tool, raw, strict, &self.options.limits, cut_off);
        // Told apart in place: nearly every call goes on whole to `pending` (a verdict taken
        // out and put back made the call's `Mended` be copied on the way, issue #31).
        let values = match &mut mended.verdict {
            Verdict::Concatenated(values) => std::mem::take(values),
            _ => {
                if !name_repairs.is_empty() {
                    name_repairs.append(&mut mended.repairs);
                    mended.repairs = name_repairs;
                }
                return self.pending(tool, id, origin, raw, mended, false);
            }
        };
        if !split {
            let mut result = blank(id, tool.shared_name(), origin, raw);
            result.repairs = name_repairs;
            return Pending {
                result,
                rejection: Some(Rejection::Concatenated),
                unknown: false,
            };
        }
        let mut parts = values.into_iter().enumerate().map(|(k, value)| {
            let part_id = if k == 0 {
                id.clone()
            } else {
                format!("{id}_{}", k + 1)
            };
            let mut repairs = name_repairs.clone();
            repairs.push(Repair::new(RepairKind::ConcatenatedSplit, String::new()));
            repairs.extend(mended.repairs.iter().cloned());
            let text = value.to_string();
            let part = mend_value(tool, value, repairs, &self.options.limits);
            self.pending(tool, part_id, origin, &text, part, true)
        });
        let first = parts
            .next()
            .expect("salvage gives two or more values for a split");
        more.extend(parts);
        first
    }

    /// The pending call of a mended call's verdict. Inlined: a `Mended` handed to a call is
    /// copied whole on the way (a `memcpy` call on every malformed call, issue #31).
    #[inline(always)]
    fn pending(
        &self,
        tool: &Tool,
        id: String,
        origin: Origin,
        raw: &str,
        mended: Mended,
        forced_repair: bool,
    ) -> Pending {
        // Each field is decided first and the result is built once, in the returned place (a
        // result built and then moved is copied whole): a repaired call's text is written,
        // never copied from `raw` first, and only a repaired call's notes are built.
        let Mended {
            verdict,
            repairs,
            notes: rule_notes,
            value,
            text,
        } = mended;
        let (status, arguments_text, notes, rejection) = match verdict {
            Verdict::Valid if !forced_repair && repairs.is_empty() => {
                (Status::Valid, raw.to_owned(), Vec::new(), None)
            }
            verdict @ (Verdict::Valid | Verdict::Repaired) => {
                // Spliced text keeps what no rule touched; arguments no rule changed (the call's
                // only repair is its name) pass as sent.
                let text = match (text, &value) {
                    (Some(text), _) => text,
                    (None, Some(value)) if matches!(verdict, Verdict::Repaired) => {
                        compact(value, raw.len())
                    }
                    (None, None) if matches!(verdict, Verdict::Repaired) => String::new(),
                    (None, _) => raw.to_owned(),
                };
                let mut notes = notes_for(&repairs);
                notes.extend(rule_notes);
                (Status::Repaired, text, notes, None)
            }
            Verdict::Invalid(rejection) => {
                (Status::Invalid, raw.to_owned(), Vec::new(), Some(rejection))
            }
            Verdict::Concatenated(_) => (
                Status::Invalid,
                raw.to_owned(),
                Vec::new(),
                Some(Rejection::Concatenated),
            ),
        };
        Pending {
            result: CallResult {
                id,
                name: tool.shared_name(),
                origin,
                status,
                // None for a concatenated verdict (its values are the turn's to split).
                arguments: value,
                arguments_text,
                repairs,
                notes,
                outcome: None,
                error: None,
                native_index: None,
            },
            rejection,
            unknown: false,
        }
    }

    /// Recovers calls leaked into text (per the mode) and returns the texts left.
    ///
    /// In `content` mode a turn with native calls has its content scanned for copies of those
    /// calls only: a copy's markup is consumed (and the copy dropped as a duplicate); any other
    /// call stays in the text as sent.
    fn recover(
        &self,
        turn: &AssistantTurn,
        turn_number: u64,
        pending: &mut Vec<Pending>,
        native: usize,
    ) -> (Option<String>, Option<String>) {
        let mode = self.options.recover;
        let max = self.options.limits.max_recovered_calls;
        let mut content = turn.content.clone();
        let mut reasoning = turn.reasoning.clone();
        let scan_content = mode != RecoverMode::Off;
        let copies_only = mode == RecoverMode::Content && !turn.tool_calls.is_empty();
        // The native calls' signatures, computed once a recovered call needs them: most turns
        // recover nothing.
        let mut natives: Option<Vec<String>> = None;
        let mut found = 0usize;
        // Hashed only once a call is found: most turns recover nothing.
        let mut tag: Option<String> = None;
        let channels: [(&mut Option<String>, Origin, bool); 2] = [
            (&mut content, Origin::Content, scan_content),
            (&mut reasoning, Origin::Reasoning, mode == RecoverMode::All),
        ];
        for (text, origin, scan) in channels {
            let Some(source) = text.as_deref().filter(|_| scan) else {
                continue;
            };
            let recovered = recover_text(source, &self.tools, max.saturating_sub(found));
            if mode == RecoverMode::Strip {
                *text = Some(recovered.text);
                continue;
            }
            if recovered.calls.is_empty() {
                continue;
            }
            // Blocks whose every call is invalid stay in the text as sent (nothing is lost);
            // the others are consumed. Calls of one block share its span. With `copies_only`,
            // a block is consumed only when every call in it copies a native call.
            let mut blocks: Vec<(std::ops::Range<usize>, bool)> = Vec::new();
            let mut kept: Vec<std::ops::Range<usize>> = Vec::new();
            let mut lost = recovered.lost.into_iter().peekable();
            for (k, call) in recovered
                .calls
                .into_iter()
                .map(Some)
                .chain([None])
                .enumerate()
            {
                // A call of a recovered block that could not be read is reported where it
                // stood, as an invalid call (issue #28: never dropped silently).
                while let Some(entry) = lost.next_if(|l| l.position <= k) {
                    found += 1;
                    let tag = tag.get_or_insert_with(|| recovered_tag(turn, turn_number));
                    let Some(p) = self.lost_call(recovered_call_id(tag, found), &entry, origin)
                    else {
                        continue;
                    };
                    if copies_only && origin == Origin::Content {
                        kept.push(entry.span.clone());
                        continue;
                    }
                    pending.push(p);
                    if !blocks.iter().any(|(span, _)| *span == entry.span) {
                        blocks.push((entry.span.clone(), false));
                    }
                }
                let Some(call) = call else {
                    continue;
                };
                found += 1;
                let tag = tag.get_or_insert_with(|| recovered_tag(turn, turn_number));
                let id = recovered_call_id(tag, found);
                let mut parts = Vec::new();
                let first = self.mend_call(
                    id,
                    &call.name,
                    (&call.arguments, Strict::Unread),
                    origin,
                    false,
                    true,
                    &mut parts,
                );
                parts.insert(0, first);
                if copies_only && origin == Origin::Content {
                    let natives =
                        natives.get_or_insert_with(|| native_signatures(&pending[..native]));
                    if !parts.iter().all(|p| is_copy(p, natives)) {
                        kept.push(call.span.clone());
                        continue;
                    }
                }
                let mut dispatchable = false;
                for mut p in parts {
                    p.result
                        .repairs
                        .insert(0, Repair::new(RepairKind::Recovered, String::new()));
                    if call.arguments_unwrapped {
                        p.result.repairs.insert(
                            1,
                            Repair::new(RepairKind::ArgumentsUnwrapped, String::new()),
                        );
                    }
                    if p.rejection.is_none() && !p.unknown {
                        if p.result.status == Status::Valid {
                            p.result.arguments_text = call.arguments.clone();
                        }
                        p.result.status = Status::Recovered;
                        dispatchable = true;
                    }
                    pending.push(p);
                }
                match blocks.iter_mut().find(|(span, _)| *span == call.span) {
                    Some((_, any)) => *any |= dispatchable,
                    None => blocks.push((call.span.clone(), dispatchable)),
                }
            }
            blocks.retain(|(span, _)| !kept.contains(span));
            let mut left = if kept.is_empty() && blocks.iter().all(|(_, any)| *any) {
                recovered.text
            } else {
                remove_ranges(
                    source,
                    blocks.iter().filter(|(_, any)| *any).map(|(span, _)| span),
                )
            };
            if blocks.iter().any(|(_, any)| *any) && left.trim().is_empty() {
                // Blanks between removed markup are not text the model wrote for anyone.
                left.clear();
            }
            *text = Some(left);
        }
        (content, reasoning)
    }

    /// The invalid call reporting `entry`, a call of a recovered block that could not be read;
    /// `None` when its tool is not in the set.
    fn lost_call(&self, id: String, entry: &LostCall, origin: Origin) -> Option<Pending> {
        let tool = self.tools.get(&entry.name)?;
        Some(Pending {
            result: blank(id, tool.shared_name(), origin, &entry.text),
            rejection: Some(Rejection::Unreadable),
            unknown: false,
        })
    }

    /// Drops recovered calls identical to a native call or to an earlier recovered call
    /// (DESIGN §5.3): not dispatched, not listed; their markup was consumed like any recovered
    /// call's. Returns how many were dropped.
    fn drop_duplicates(&self, pending: &mut Vec<Pending>, native: usize) -> usize {
        if pending.len() <= native {
            // No recovered call: nothing to drop, no signature to compute.
            return 0;
        }
        let mut seen: Vec<String> = Vec::new();
        let mut i = 0usize;
        let mut dropped = 0usize;
        pending.retain(|p| {
            let at = i;
            i += 1;
            let Some(args) = p
                .result
                .arguments
                .as_ref()
                .filter(|_| p.rejection.is_none() && !p.unknown)
            else {
                return true;
            };
            let signature = signature(&p.result.name, args);
            if at >= native && seen.contains(&signature) {
                dropped += 1;
                self.stats.count_kind(RepairKind::DuplicateDropped);
                emit_dropped(&p.result.name, &self.options.model);
                return false;
            }
            seen.push(signature);
            true
        });
        dropped
    }

    /// Settles a call's outcome and messages, spending the session's retry budget.
    fn settle(&self, mut p: Pending, session: Option<&mut Session>) -> CallResult {
        self.settle_in_place(&mut p, session);
        p.result
    }

    /// [`Self::settle`] on the call where it lies (a call result is moved whole, a `memcpy`
    /// call each time: a small call's result is moved once).
    ///
    /// Inlined in front of the work: a call neither unknown nor rejected (nearly every call)
    /// only has its outcome set, without a call (issue #31).
    #[inline(always)]
    fn settle_in_place(&self, p: &mut Pending, session: Option<&mut Session>) {
        if p.unknown || p.rejection.is_some() {
            return self.settle_refused(p, session);
        }
        if matches!(p.result.status, Status::Repaired | Status::Recovered) {
            p.result.outcome = Some(Outcome::LocalSalvage);
        }
    }

    /// [`Self::settle_in_place`] for a call of an unknown tool or a rejected one: its status,
    /// retry message and outcome, the session's retry budget spent.
    #[inline(never)]
    fn settle_refused(&self, p: &mut Pending, session: Option<&mut Session>) {
        let result = &mut p.result;
        let limits = &self.options.limits;
        if p.unknown {
            let names = self.tools.iter().map(Tool::name);
            result.status = Status::Invalid;
            result.error = Some(unknown_tool_message(&result.name, names));
            result.outcome = Some(self.spend(session, &result.name, &result.arguments_text).0);
            return;
        }
        match p.rejection.take() {
            Some(crate::repair::Rejection::Unvalidated) => {
                // Fail closed, and spend no retry budget: no retry can fix the tool's schema.
                let tool = self
                    .tools
                    .get(&result.name)
                    .expect("a rejected known call names a tool");
                result.status = Status::Unvalidated;
                result.error = Some(unvalidated_message(tool, limits.max_message_bytes));
                result.repairs.clear();
                result.notes.clear();
            }
            Some(rejection) => {
                result.status = Status::Invalid;
                let (outcome, context) = self.spend(session, &result.name, &result.arguments_text);
                let tool = self
                    .tools
                    .get(&result.name)
                    .expect("a rejected known call names a tool");
                result.error = Some(retry_message(
                    tool,
                    result.arguments.as_ref(),
                    &rejection,
                    context,
                    MessageOptions {
                        max_bytes: limits.max_message_bytes,
                        include_values: self.options.include_values,
                        max_call_errors: limits.max_call_errors,
                    },
                ));
                result.outcome = Some(outcome);
                // All or nothing: an invalid call reports no repair, and none is counted.
                result.repairs.clear();
                result.notes.clear();
            }
            // Not reached: a call neither unknown nor rejected is settled in place.
            None => {}
        }
    }

    fn spend(
        &self,
        session: Option<&mut Session>,
        tool: &str,
        raw: &str,
    ) -> (Outcome, RetryContext) {
        let context = session.map_or(RetryContext::First, |s| {
            s.budget.fail(tool, &fingerprint(raw))
        });
        let outcome = if matches!(context, RetryContext::GaveUp { .. }) {
            Outcome::GaveUp
        } else {
            Outcome::Reprompt
        };
        (outcome, context)
    }

    /// Suppresses the last of `calls` if it is the storm threshold's identical call in the
    /// window. Its signature (and those of the turn's earlier calls) is computed only when the
    /// window holds another call of its tool.
    fn break_storm(
        &self,
        session: &mut Session,
        calls: &mut [CallResult],
        report: &mut TurnReport,
    ) {
        let Some(last) = calls.len().checked_sub(1) else {
            return;
        };
        let call = &calls[last];
        let Some(tool) = self.tools.get(&call.name) else {
            return;
        };
        if call.arguments.is_none() {
            return;
        }
        let hints = tool.hints();
        let flags = crate::turn::StormFlags {
            mutating: hints.mutating == Some(true),
            idempotent: hints.idempotent == Some(true),
            exempt: hints.storm_exempt,
        };
        let suppressed = session.storm.observe_call(
            &call.name,
            Signature::Deferred(last),
            flags,
            &mut |index| call_signature(&calls[index]),
        );
        if suppressed {
            let call = &mut calls[last];
            call.status = Status::Suppressed;
            call.repairs
                .push(Repair::new(RepairKind::StormSuppressed, String::new()));
            call.error = Some(guard_message(&call.name));
            call.outcome = None;
            call.notes.clear();
            report.storms_broken += 1;
            self.stats.count_storm();
        }
    }

    /// Counters and tracing for a finished call.
    fn observe(&self, call: &CallResult) {
        self.stats.count_call(call.repairs.iter().map(|r| r.kind));
        match call.status {
            Status::Invalid | Status::Unvalidated => self.stats.count_invalid(),
            Status::Recovered => self.stats.count_recovered(),
            _ => {}
        }
        if call.outcome == Some(Outcome::GaveUp) {
            self.stats.count_gave_up();
        }
        emit(call, &self.options.model);
    }
}

/// The tag of a turn in its recovered calls' ids: its caller's id, its number in the session
/// and its text (`turn/call_id.rs`).
fn recovered_tag(turn: &AssistantTurn, turn_number: u64) -> String {
    let mut hasher = StableHasher::new();
    hasher.write(turn.id.as_deref().unwrap_or_default().as_bytes());
    hasher.write(&turn_number.to_le_bytes());
    hasher.write(turn.content.as_deref().unwrap_or_default().as_bytes());
    hasher.write(turn.reasoning.as_deref().unwrap_or_default().as_bytes());
    turn_tag(hasher.finish())
}

/// The storm signature of a settled call (one the window holds has arguments).
fn call_signature(call: &CallResult) -> String {
    call.arguments
        .as_ref()
        .map_or_else(String::new, |args| signature(&call.name, args))
}

/// The signatures of the native calls a recovered call may copy (not rejected, of a known tool).
fn native_signatures(natives: &[Pending]) -> Vec<String> {
    natives
        .iter()
        .filter(|p| p.rejection.is_none() && !p.unknown)
        .filter_map(|p| Some(signature(&p.result.name, p.result.arguments.as_ref()?)))
        .collect()
}

/// Whether a call is valid (or repaired) and the same call as one of the `natives` signatures.
fn is_copy(p: &Pending, natives: &[String]) -> bool {
    p.rejection.is_none()
        && !p.unknown
        && p.result
            .arguments
            .as_ref()
            .is_some_and(|args| natives.contains(&signature(&p.result.name, args)))
}

/// `text` without the byte `ranges` (sorted, disjoint).
fn remove_ranges<'a>(
    text: &str,
    ranges: impl Iterator<Item = &'a std::ops::Range<usize>>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for range in ranges {
        out.push_str(&text[at..range.start.max(at)]);
        at = range.end.max(at);
    }
    out.push_str(&text[at..]);
    out
}

/// A call result with nothing decided yet: invalid calls keep their text as sent.
fn blank(id: String, name: Arc<str>, origin: Origin, raw: &str) -> CallResult {
    CallResult {
        id,
        name,
        origin,
        status: Status::Invalid,
        arguments: None,
        arguments_text: raw.to_owned(),
        repairs: Vec::new(),
        notes: Vec::new(),
        outcome: None,
        error: None,
        native_index: None,
    }
}

fn count(call: &CallResult, report: &mut TurnReport) {
    match call.status {
        Status::Repaired => report.repaired += 1,
        Status::Invalid | Status::Unvalidated => report.invalid += 1,
        Status::Recovered => {
            report.scavenged += 1;
            if call.repairs.iter().any(|r| r.kind != RepairKind::Recovered) {
                report.repaired += 1;
            }
        }
        _ => {}
    }
    if call.is_dispatchable() && call.has(RepairKind::TruncationClosed) {
        report.truncations_fixed += 1;
    }
}
