//! Every bound toolmend enforces, in one place (DESIGN §3, invariant 7).
//!
//! Breaching a limit gives a typed error or an `invalid` call, never a panic and never unbounded
//! work.

/// The limits one [`crate::Mender`] applies.
///
/// The defaults are the DESIGN values; a harness may tighten or loosen them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Limits {
    /// Largest argument text salvage will look at (the strict fast path has no limit).
    pub max_salvage_bytes: usize,
    /// Deepest nesting of arrays and objects salvage and repair will walk.
    pub max_depth: usize,
    /// Most calls recovered from one turn's text.
    pub max_recovered_calls: usize,
    /// Most repair rounds (validate, repair failing paths, validate again) per call.
    pub max_repair_rounds: usize,
    /// Longest retry message, in bytes.
    pub max_message_bytes: usize,
    /// Most key-against-pattern matches one call may cost before it is refused unchecked
    /// (see [`MAX_CALL_KEY_MATCHES`]).
    pub max_call_key_matches: u64,
    /// Most validator errors one failing call may make the validator build, beyond one per
    /// value of the call, before it is refused unchecked (see [`MAX_CALL_ERRORS`]).
    pub max_call_errors: u64,
}

/// Default for [`Limits::max_salvage_bytes`]: 256 KiB.
pub const MAX_SALVAGE_BYTES: usize = 256 * 1024;
/// Default for [`Limits::max_depth`]: 128 levels.
pub const MAX_DEPTH: usize = 128;
/// Default for [`Limits::max_recovered_calls`]: 16 calls per turn.
pub const MAX_RECOVERED_CALLS: usize = 16;
/// Default for [`Limits::max_repair_rounds`]: a repair can expose a nested failure (a stringified
/// array whose items need repair), so a few rounds are allowed; each round only touches paths
/// the validator reported.
pub const MAX_REPAIR_ROUNDS: usize = 4;
/// Default for [`Limits::max_message_bytes`]: 4 KiB.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024;
/// Most `Note:` lines a repaired call carries, one per repair; past it one more line counts the
/// rest (the notes are prepended to the tool result the model reads).
pub const MAX_NOTES: usize = 8;
/// Most keys sent twice reported for one call (`duplicate_key_dropped`, one per pointer).
pub const MAX_REPORTED_DUPLICATE_KEYS: usize = 8;

/// Most subschema evaluations a tool's schema may cause at one instance location (`$ref`s
/// followed, every `anyOf` / `oneOf` / `allOf` branch counted, each path through a shared
/// subschema counted again). A schema over it is refused when the [`crate::ToolSet`] is built
/// ([`crate::Error::Schema`] names the construct) and its calls are `unvalidated`. Each
/// evaluation of a failing branch builds a validator error (a few µs, and the validator builds
/// them twice: for the repair and for the retry message), so the bound is set for the slowest
/// accepted schema to validate and report an invalid call in a few ms on a loaded machine
/// (`examples/schema_budget_ratio.rs`, `bench/ISSUE8.md`: an `anyOf` of 500 object branches
/// took 7–13 ms at 512); real tool schemas stay far below it.
pub const MAX_SCHEMA_EVALUATIONS: u64 = 256;
/// Most members of one `enum` in a tool's schema. Repair rules compare a failing value with
/// every member, so a 40 000-member `enum` made one call cost 30 ms; a schema with a longer one
/// is refused ([`crate::Error::Schema`] names it). Real enums (countries, time zones) stay far
/// below it.
pub const MAX_SCHEMA_ENUM_MEMBERS: usize = 4096;
/// Most names in one `required` list of a tool's schema: every missing name is a failure the
/// validator builds and the repair rules look at (40 000 missing names: 215 ms per call).
pub const MAX_SCHEMA_REQUIRED: usize = 1024;
/// Most `patternProperties` of one schema object: the validator matches every key of the
/// instance against every pattern (200 patterns × 2,000 keys: 112 ms per call).
pub const MAX_SCHEMA_PATTERN_PROPERTIES: usize = 16;
/// Default for [`Limits::max_call_key_matches`]: most key-against-pattern matches one call may
/// cost: the call's keys (every object, at any
/// depth) times the most patterns one key can be matched against in the tool's schema
/// (`patternProperties` entries, again beside `additionalProperties`, one for
/// `propertyNames`; measured when the tool set is built). The validator and the repair walk
/// match every key of a call against every pattern in each of their passes, so 2,000 keys
/// against 16 patterns cost 32,000 matches a pass (75–150 ms a call under load). A call over
/// the budget is refused before validation: `invalid`, with a retry message that names the
/// budget and asks for fewer keys; never `valid`. A tool without `patternProperties` or
/// `propertyNames` is never charged.
pub const MAX_CALL_KEY_MATCHES: u64 = 8_192;
/// Default for [`Limits::max_call_errors`]: most errors the validator may build for one
/// failing call beyond one per value of the call. jsonschema builds every error of a value
/// before yielding the first (about 1–3 µs each, and toolmend asks twice: for the repair and
/// for the retry message), and the count grows with the call as well as the schema: a
/// `required` list of 1,024 names over 200 empty objects is 204,800 errors (335–419 ms).
/// Before errors are collected, a call that failed the fast path is walked beside the schema
/// and its errors bounded from above (`repair/error_bound.rs`); over the budget it is refused
/// unchecked: `invalid`, with a retry message that asks for a call closer to the schema, never
/// `valid`. Calls that take the fast path are never charged.
pub const MAX_CALL_ERRORS: u64 = 2_048;
/// Backtracking steps one `pattern` match may take with the backtracking engine, which is used
/// only for patterns the linear-time engine cannot compile (lookaround, backreferences). A
/// match over it is undecided, and the validator reports the value as failing.
pub const PATTERN_BACKTRACK_LIMIT: usize = 10_000;
/// Validator errors one validation collects beyond one per value of the call, nested `anyOf` /
/// `oneOf` errors included; past that the call is hopeless anyway.
pub const MAX_COLLECTED_ERRORS: usize = 256;
/// Longest key name or path echoed into a retry message or tracing field, in characters;
/// longer ones are cut with `…`.
pub const MAX_ECHOED_NAME: usize = 64;

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_salvage_bytes: MAX_SALVAGE_BYTES,
            max_depth: MAX_DEPTH,
            max_recovered_calls: MAX_RECOVERED_CALLS,
            max_repair_rounds: MAX_REPAIR_ROUNDS,
            max_message_bytes: MAX_MESSAGE_BYTES,
            max_call_key_matches: MAX_CALL_KEY_MATCHES,
            max_call_errors: MAX_CALL_ERRORS,
        }
    }
}
