//! The validate-then-repair loop.

use std::collections::HashSet;

use serde_json::Value;

use super::failures::Failures;
use super::rules::{Fix, Place, RULES, Site, md_link_unwrapped, relational_default};
use super::schema::SchemaView;
use super::splice::{compact_with_spans, splice};
use crate::pointer;

use crate::salvage::{
    self, Precheck, SalvageError, SalvageErrorKind, SalvageOptions, SalvagedCall, StrictPrefix,
    read_strict,
};
use crate::{Limits, Repair, RepairKind, Tool};

/// What happened to one call's arguments.
#[derive(Debug)]
pub(crate) struct Mended {
    pub(crate) verdict: Verdict,
    /// Every repair made, in order; syntax repairs (path `""`) first.
    pub(crate) repairs: Vec<Repair>,
    /// Notes from hint rules that must reach the model (relational defaults).
    pub(crate) notes: Vec<String>,
    /// The final value when valid or repaired; when invalid, the value as sent (after salvage),
    /// if the text could be read.
    pub(crate) value: Option<Value>,
    /// The repaired text, when it was spliced from the text as sent (see [`super::splice`]);
    /// `None` means: write [`Self::value`].
    pub(crate) text: Option<String>,
}

/// The verdict on one call's arguments.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// The raw text is strict JSON and validates: pass the bytes through.
    Valid,
    /// The value was repaired and validates.
    Repaired,
    /// The text held several complete objects back to back; the turn stage splits them.
    Concatenated(Vec<Value>),
    /// The call cannot be saved.
    Invalid(Rejection),
}

/// Why a call cannot be saved.
#[derive(Debug)]
pub(crate) enum Rejection {
    /// The text is not JSON, even leniently.
    Syntax(SalvageError),
    /// The text was cut off, and the tool is not known to be safe to call with closed text.
    Truncated,
    /// The value does not validate, even after repair.
    Schema,
    /// Several complete objects were sent as one call's arguments, where they cannot be split.
    Concatenated,
    /// A call leaked into text inside a block whose other calls were recovered, but whose own
    /// arguments could not be read there (issue #28): reported, never repaired.
    Unreadable,
    /// The tool's schema was refused, so no call of it can be checked (fail closed).
    Unvalidated,
    /// The call has so many keys that matching them against the schema's patterns is over
    /// [`Limits::max_call_key_matches`]: refused before validation (fail closed).
    OverKeyBudget(crate::prepare::CallCost),
    /// Validating the call could build more errors than its budget
    /// ([`Limits::max_call_errors`]): refused before its errors were collected (fail closed).
    OverErrorBudget(super::error_bound::ErrorCost),
}

impl Mended {
    /// A value that fails the schema, kept as sent, with no repair reported.
    fn invalid_as_sent(value: Value) -> Self {
        Self::refused_as_sent(value, Rejection::Schema)
    }

    /// A value refused for `rejection`, kept as sent, with no repair reported.
    fn refused_as_sent(value: Value, rejection: Rejection) -> Self {
        Self {
            verdict: Verdict::Invalid(rejection),
            repairs: Vec::new(),
            notes: Vec::new(),
            value: Some(value),
            text: None,
        }
    }

    fn rejected(rejection: Rejection, repairs: Vec<Repair>) -> Self {
        Self {
            verdict: Verdict::Invalid(rejection),
            repairs,
            notes: Vec::new(),
            value: None,
            text: None,
        }
    }
}

/// What the fast path learnt about a call's text, handed on so that the strict parse runs once
/// per call (issue #11 §3).
#[derive(Debug)]
pub(crate) enum Strict {
    /// Not read yet.
    Unread,
    /// Strict JSON that fails the schema (read by the fast path of a tool with no opt-in rule).
    Invalid(Value),
    /// Not strict JSON; what the strict parse read of a root object before it failed, for
    /// salvage to start after ([`salvage::salvage_after`]).
    NotJson(Option<StrictPrefix>),
    /// Strict JSON not yet checked against the schema: read by [`mend_arguments`] itself.
    Read(Value),
}

/// The fast path: the raw text is strict JSON that validates, and no opt-in rule applies. Then
/// the call passes byte for byte and nothing else runs. Otherwise what the strict parse found,
/// for [`mend_arguments`]. Inlined into its one caller, `Mender::repair_call`: what it found
/// is handed on there without being copied out of its result first (issue #31).
#[inline(always)]
pub(crate) fn fast_path(tool: &Tool, raw: &str, limits: &Limits) -> Result<Value, Strict> {
    if tool.has_opt_in_rules() {
        return Err(Strict::Unread);
    }
    match read_strict(raw, precheck(tool)) {
        Ok(value) if validates_within_budget(tool, &value, limits) => Ok(value),
        Ok(value) => Err(Strict::Invalid(value)),
        Err(prefix) => Err(Strict::NotJson(prefix)),
    }
}

/// The strict read's [`Precheck`] for `tool`'s calls (issue #31): a mutating tool's call cut off
/// after a member is refused without salvage, which the strict read then tells by a syntax-only
/// pass.
fn precheck(tool: &Tool) -> Precheck {
    if tool.is_mutating() {
        Precheck::Mutating
    } else {
        Precheck::ReadOnly
    }
}

/// Whether `value` validates, checked only within the call's key budget
/// ([`Limits::max_call_key_matches`]): a call over it is never `valid`.
fn validates_within_budget(tool: &Tool, value: &Value, limits: &Limits) -> bool {
    tool.over_key_budget(value, limits.max_call_key_matches)
        .is_none()
        && tool.is_valid(value)
}

/// Mends one call's raw argument text; `strict` is what the fast path found for the same tool
/// and text ([`Strict::Unread`] when it did not run).
///
/// `cut_off` says the turn ended at the token limit and this is its last call: arguments that
/// need salvage are then treated as truncated.
pub(crate) fn mend_arguments(
    tool: &Tool,
    raw: &str,
    mut strict: Strict,
    limits: &Limits,
    cut_off: bool,
) -> Mended {
    if tool.refusal().is_some() {
        return Mended::rejected(Rejection::Unvalidated, Vec::new());
    }
    // A byte-order mark is not JSON (RFC 8259 §8.1): the text after it is read, and the mark is
    // reported as a syntax repair, never dispatched.
    let (raw, bom) = match raw.strip_prefix('\u{feff}') {
        Some(rest) => (rest, true),
        None => (raw, false),
    };
    let mut repairs: Vec<Repair> = Vec::new();
    if bom {
        repairs.push(Repair::new(RepairKind::BomRemoved, String::new()));
    }
    // The fast path read the text with its mark, which serde_json refuses: read the rest. What
    // the strict read found stays where it lies until it is used (each move copies a prefix).
    let known_invalid = !bom && matches!(strict, Strict::Invalid(_));
    if bom || matches!(strict, Strict::Unread) {
        strict = match read_strict(raw, precheck(tool)) {
            Ok(value) => Strict::Read(value),
            Err(prefix) => Strict::NotJson(prefix),
        };
    }
    let strict_string = match &mut strict {
        Strict::Read(value) | Strict::Invalid(value) => match std::mem::take(value) {
            // Strict JSON that validates is never touched, whatever its type (invariant 1);
            // only an object can carry the opt-in hint rules.
            value
                if !known_invalid
                    && validates_within_budget(tool, &value, limits)
                    && !(value.is_object() && tool.has_opt_in_rules()) =>
            {
                return Mended {
                    verdict: if bom {
                        Verdict::Repaired
                    } else {
                        Verdict::Valid
                    },
                    repairs,
                    notes: Vec::new(),
                    value: Some(value),
                    text: bom.then(|| raw.to_owned()),
                };
            }
            // A bare string or null is read by salvage (double-encoded, empty) before any rule.
            Value::String(text) => Some(text),
            Value::Null => None,
            value => return mend_strict(tool, raw, value, repairs, limits),
        },
        Strict::NotJson(_) | Strict::Unread => None,
    };
    let prefix = match &mut strict {
        Strict::NotJson(prefix) => prefix.take(),
        _ => None,
    };
    let options = SalvageOptions::from_limits(limits);
    // Cut off after a complete member: salvage would close the object as truncated, which a
    // mutating tool's call is refused for whatever was read, so it is not read (issue #31).
    if tool.is_mutating()
        && prefix
            .as_ref()
            .is_some_and(|prefix| prefix.cut_after_member(raw, &options))
    {
        return Mended::rejected(Rejection::Truncated, Vec::new());
    }
    // Salvage goes on after what the strict parse read (the same result, read once).
    // Read in place: a `Salvaged` bound by value out of the result is copied whole (issue #31).
    let mut salvaged = salvage::salvage_call_after(raw, &options, prefix);
    match &mut salvaged {
        Ok(SalvagedCall { one, salvaged }) => {
            if repairs.is_empty() {
                // Sized once (a vector grown from nothing costs ~50 instructions more).
                repairs = Vec::with_capacity(salvaged.repairs.len());
            }
            for r in &salvaged.repairs {
                if r.kind == RepairKind::DuplicateKeyDropped {
                    for path in &salvaged.dropped_keys {
                        repairs.push(Repair::new(r.kind, path.clone()));
                    }
                } else if !repairs.iter().any(|seen| seen.kind == r.kind) {
                    repairs.push(Repair::new(r.kind, String::new()));
                }
            }
            let truncated = salvaged.truncated || (cut_off && strict_string.is_none());
            if truncated && tool.is_mutating() {
                return Mended::rejected(Rejection::Truncated, Vec::new());
            }
            if truncated
                && !repairs
                    .iter()
                    .any(|r| r.kind == RepairKind::TruncationClosed)
            {
                repairs.push(Repair::new(RepairKind::TruncationClosed, String::new()));
            }
            // Nearly always one value, read apart from the vector (none allocated).
            let value = match one.take() {
                Some(value) => Some(value),
                None => {
                    let mut values = std::mem::take(&mut salvaged.values);
                    if values.len() > 1 {
                        // Bounded like recovered calls (invariant 7): past it, nothing is
                        // dispatched.
                        if values.len() > limits.max_recovered_calls {
                            return Mended::rejected(Rejection::Concatenated, Vec::new());
                        }
                        return Mended {
                            verdict: Verdict::Concatenated(values),
                            repairs,
                            notes: Vec::new(),
                            value: None,
                            text: None,
                        };
                    }
                    values.pop()
                }
            };
            match value {
                Some(value) => match salvaged.alternative.take() {
                    None => {
                        let source = SalvageSource {
                            raw,
                            spans: &salvaged.spans,
                        };
                        mend_value_keeping(tool, value, repairs, limits, &mut None, Some(source))
                    }
                    Some(other) => mend_either(tool, value, other, repairs, limits),
                },
                None => Mended::rejected(Rejection::Schema, Vec::new()),
            }
        }
        Err(error) => {
            if cut_off && tool.is_mutating() && error.kind == SalvageErrorKind::Syntax {
                return Mended::rejected(Rejection::Truncated, Vec::new());
            }
            // Only a JSON string may become the one field of a one-field tool: text that is
            // not JSON at all (prose, an empty fence, `NaN`) is a syntax error, never a value.
            match strict_string {
                Some(text) => mend_value(tool, Value::String(text), repairs, limits),
                None => Mended::rejected(Rejection::Syntax(error.clone()), Vec::new()),
            }
        }
    }
}

/// Where a value read by salvage was read from, for its text: the text as sent, and the member
/// texts salvage noted there already written as serde_json writes them
/// ([`crate::salvage::Salvaged::spans`]).
#[derive(Clone, Copy)]
struct SalvageSource<'a> {
    raw: &'a str,
    spans: &'a [salvage::MemberText],
}

impl SalvageSource<'_> {
    /// The text of a call repaired by salvage alone, copied from what salvage noted: the same
    /// bytes as [`super::compact`] (issue #11 §3). `None` for a call a rule changed, which is
    /// written from its value, since the spans describe the value salvage read. Written where
    /// the result is built (a result built, then given its text, is copied whole on return).
    fn text(self, verdict: &Verdict, repairs: &[Repair], value: &Value) -> Option<String> {
        if self
            .spans
            .iter()
            .all(|s| s.key.is_none() && s.value.is_none())
            || !matches!(verdict, Verdict::Repaired)
            || !repairs.iter().all(|r| r.kind.is_syntax())
        {
            return None;
        }
        Some(compact_with_spans(value, self.raw, self.spans))
    }
}

/// [`mend_value`] for a value read from strict JSON `raw`: a repaired value's text is spliced
/// from `raw`, so what no rule touched keeps its spelling, and a value dropped for a key sent
/// twice is reported.
fn mend_strict(
    tool: &Tool,
    raw: &str,
    value: Value,
    repairs: Vec<Repair>,
    limits: &Limits,
) -> Mended {
    let mut sent = None;
    let mut mended = mend_value_keeping(tool, value, repairs, limits, &mut sent, None);
    match (&mended.verdict, &mended.value) {
        (Verdict::Valid, _) => mended.text = Some(raw.to_owned()),
        (Verdict::Repaired, Some(value)) => {
            // No copy as sent: no rule changed the value (the only repair is the mark).
            let spliced = splice(raw, sent.as_ref().unwrap_or(value), value);
            mended.text = Some(spliced.text);
            // A syntax repair: reported beside the others made to the text, before the shape
            // repairs.
            let at = mended
                .repairs
                .iter()
                .take_while(|r| r.kind.is_syntax())
                .count();
            mended.repairs.splice(
                at..at,
                (spliced.dropped.into_iter())
                    .map(|path| Repair::new(RepairKind::DuplicateKeyDropped, path)),
            );
        }
        _ => {}
    }
    mended
}

/// Two readings of one text (salvage inserted a missing closing quote in `preferred`; in
/// `other` the string swallowed what follows): the schema is the prior. The preferred reading
/// wins unless only the other validates; when neither does, the call is invalid as the
/// preferred reading.
fn mend_either(
    tool: &Tool,
    preferred: Value,
    other: Value,
    repairs: Vec<Repair>,
    limits: &Limits,
) -> Mended {
    let mended = mend_value(tool, preferred, repairs.clone(), limits);
    if !matches!(mended.verdict, Verdict::Invalid(_)) {
        return mended;
    }
    // The other reading took the quote as content, which salvage reports as quotes_normalized.
    let mut other_repairs: Vec<Repair> = repairs
        .into_iter()
        .filter(|r| r.kind != RepairKind::QuoteInserted)
        .collect();
    if !other_repairs
        .iter()
        .any(|r| r.kind == RepairKind::QuotesNormalized)
    {
        other_repairs.push(Repair::new(RepairKind::QuotesNormalized, String::new()));
    }
    let alternative = mend_value(tool, other, other_repairs, limits);
    if matches!(alternative.verdict, Verdict::Invalid(_)) {
        mended
    } else {
        alternative
    }
}

/// Validates `value` and repairs it at the failing locations; `repairs` are those made so far
/// (syntax repairs by salvage).
///
/// All or nothing: when the repaired value still fails, the verdict is invalid, the value is
/// the one given (as the model sent it, after salvage), and no repair is reported.
pub(crate) fn mend_value(
    tool: &Tool,
    value: Value,
    repairs: Vec<Repair>,
    limits: &Limits,
) -> Mended {
    mend_value_keeping(tool, value, repairs, limits, &mut None, None)
}

/// [`mend_value`], keeping in `sent` the value as sent when a rule may have changed it (left
/// `None`: the value is the one given), so that the caller needs no copy of its own. The value
/// as sent is handed back beside the result, not with it in a pair: a `Mended` taken out of a
/// returned pair is copied whole (issue #31). A value read by salvage comes with its `source`,
/// which a call repaired by salvage alone has its text written from.
fn mend_value_keeping(
    tool: &Tool,
    value: Value,
    mut repairs: Vec<Repair>,
    limits: &Limits,
    sent: &mut Option<Value>,
    source: Option<SalvageSource<'_>>,
) -> Mended {
    if tool.refusal().is_some() {
        return Mended::rejected(Rejection::Unvalidated, Vec::new());
    }
    // Before any validation: a call over the key budget is refused as sent, never checked in
    // part and never `valid`.
    if let Some(cost) = tool.over_key_budget(&value, limits.max_call_key_matches) {
        let rejection = Rejection::OverKeyBudget(cost);
        return Mended::refused_as_sent(value, rejection);
    }
    let verdict = if repairs.is_empty() {
        Verdict::Valid
    } else {
        Verdict::Repaired
    };
    let (Some(validator), Some(schema)) = (tool.validator(), tool.schema()) else {
        // No schema: any object is accepted as it is.
        if !value.is_object() {
            return Mended::invalid_as_sent(value);
        }
        let text = source.and_then(|source| source.text(&verdict, &repairs, &value));
        return Mended {
            verdict,
            repairs,
            notes: Vec::new(),
            value: Some(value),
            text,
        };
    };
    // What salvage reads nearly always validates as it is: then no rule runs, and no copy of
    // the value as sent is needed.
    if !tool.has_opt_in_rules() && tool.is_valid(&value) {
        let text = source.and_then(|source| source.text(&verdict, &repairs, &value));
        return Mended {
            verdict,
            repairs,
            notes: Vec::new(),
            value: Some(value),
            text,
        };
    }
    let as_sent = value.clone();
    let mut value = value;
    let root_view = SchemaView::of_tool(schema, tool.patterns());
    if tool.is_flattened()
        && let Value::Object(map) = &value
        && let Ok(Some(nested)) = crate::prepare::unflatten(map, schema)
    {
        value = Value::Object(nested);
        repairs.push(Repair::new(RepairKind::Unflattened, String::new()));
    }
    let mut notes = apply_hint_rules(tool, &root_view, &mut value, &mut repairs);
    let before_rounds = repairs.len();
    for _ in 0..limits.max_repair_rounds {
        // The validator builds every error before yielding one: a call whose errors could be
        // over its budget is refused before they are built.
        if let Some(cost) = super::error_bound::over_budget(tool, &value, limits.max_call_errors) {
            let rejection = Rejection::OverErrorBudget(cost);
            return Mended::refused_as_sent(as_sent, rejection);
        }
        let failures = Failures::collect(validator, &value);
        if failures.is_empty() {
            break;
        }
        let mut walker = Walker {
            tool,
            failures: &failures,
            repairs: &mut repairs,
            changed: false,
            limits,
        };
        if let Some(Fix::Replace(root)) =
            walker.walk(&mut value, &root_view, Place::Root, &mut String::new(), 0)
        {
            value = root;
        }
        if !walker.changed {
            break;
        }
    }
    if repairs.len() > before_rounds {
        // A rule may fire at one location in two rounds (the validator's errors are capped, so a
        // wide object is renamed in parts): the report names each repair once.
        let mut seen = std::collections::HashSet::new();
        repairs.retain(|r| seen.insert((r.kind, r.path.clone())));
        // A renamed, unwrapped or re-nested field is seen by the hint rules only now.
        notes.extend(apply_hint_rules(tool, &root_view, &mut value, &mut repairs));
    }
    if !tool.is_valid(&value) {
        return Mended::invalid_as_sent(as_sent);
    }
    *sent = Some(as_sent);
    let verdict = if repairs.is_empty() {
        Verdict::Valid
    } else {
        Verdict::Repaired
    };
    let text = source.and_then(|source| source.text(&verdict, &repairs, &value));
    Mended {
        verdict,
        repairs,
        notes,
        value: Some(value),
        text,
    }
}

/// The opt-in hint rules (DESIGN §6): Markdown links in path-tagged fields, relational groups.
/// Both are idempotent, so running them again after the shape repairs changes only what the
/// repairs exposed.
fn apply_hint_rules(
    tool: &Tool,
    root_view: &SchemaView<'_>,
    value: &mut Value,
    repairs: &mut Vec<Repair>,
) -> Vec<String> {
    // Only a path-tagged field can be unwrapped: other tools skip the walk (a wide call against
    // many `patternProperties` made it cost keys × patterns for nothing).
    if tool.has_path_fields() {
        md_link_unwrapped::apply(value, root_view, &mut String::new(), 0, repairs);
    }
    relational_default::apply(value, &tool.hints().relational, repairs)
}

/// One repair round over the failing locations of a value.
struct Walker<'a> {
    tool: &'a Tool,
    failures: &'a Failures,
    repairs: &'a mut Vec<Repair>,
    changed: bool,
    limits: &'a Limits,
}

impl Walker<'_> {
    /// Tries the rules at `at` if it failed, else descends towards the failures below it.
    /// Returns the fix for the caller to apply at this location.
    fn walk(
        &mut self,
        value: &mut Value,
        view: &SchemaView<'_>,
        place: Place<'_>,
        at: &mut String,
        depth: usize,
    ) -> Option<Fix> {
        if depth > self.limits.max_depth {
            return None;
        }
        if let Some(failure) = self.failures.at(at) {
            let site = Site {
                value,
                view,
                failure,
                place,
                tool: self.tool,
                limits: self.limits,
            };
            // The first rule that applies wins; the next round sees its result.
            if let Some((kind, fix)) = RULES
                .iter()
                .filter(|rule| failure.keywords.any(rule.triggers()))
                .find_map(|rule| rule.apply(&site).map(|fix| (rule.kind(), fix)))
            {
                self.changed = true;
                if let Fix::Fill(members) = fix {
                    let Value::Object(map) = &*value else {
                        return None;
                    };
                    let mut map = map.clone();
                    for (key, member) in members {
                        let mut path = at.clone();
                        pointer::push(&mut path, &key);
                        self.repairs.push(Repair::new(kind, path));
                        map.insert(key, member);
                    }
                    return Some(Fix::Replace(Value::Object(map)));
                }
                self.repairs.push(Repair::new(kind, at.clone()));
                return Some(fix);
            }
        }
        if !self.failures.within(at) {
            return None;
        }
        match value {
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                let required: HashSet<&str> = view.required_names().collect();
                // Keys to drop, removed in one pass at the end: removing each in place shifts
                // the keys after it, quadratic in a wide object full of nulls.
                let mut removed: HashSet<String> = HashSet::new();
                for key in keys {
                    let Some(child_view) = view.property(&key) else {
                        continue;
                    };
                    let required = required.contains(key.as_str());
                    let Some(child) = map.get_mut(&key) else {
                        continue;
                    };
                    let len = at.len();
                    pointer::push(at, &key);
                    let fix = self.walk(
                        child,
                        &child_view,
                        Place::Member {
                            key: &key,
                            required,
                        },
                        at,
                        depth + 1,
                    );
                    at.truncate(len);
                    match fix {
                        Some(Fix::Replace(new)) => *child = new,
                        Some(Fix::Remove) => {
                            removed.insert(key);
                        }
                        Some(Fix::Fill(_)) | None => {}
                    }
                }
                if !removed.is_empty() {
                    map.retain(|key, _| !removed.contains(key));
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    let Some(item_view) = view.item(index) else {
                        continue;
                    };
                    let len = at.len();
                    pointer::push_index(at, index);
                    let fix = self.walk(item, &item_view, Place::Item, at, depth + 1);
                    at.truncate(len);
                    if let Some(Fix::Replace(new)) = fix {
                        *item = new;
                    }
                }
            }
            _ => {}
        }
        None
    }
}
