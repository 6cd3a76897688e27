//! Stage 4: validate-then-repair a call's arguments against the tool's JSON Schema.
//!
//! The fast path is what nearly every call takes: the raw text parses as strict JSON and the
//! value validates, and the output is the input bytes. Otherwise the text is salvaged into a
//! value if needed, the validator's typed errors say which locations fail, and the shape rules
//! ([`rules::RULES`]) run at those locations only. After at most a few rounds the value is
//! validated once more: all or nothing.

mod engine;
pub(crate) mod error_bound;
mod failures;
pub(crate) mod rules;
pub(crate) mod schema;
mod splice;

pub(crate) use engine::{
    Mended, Rejection, Strict, Verdict, fast_path, mend_arguments, mend_value,
};
pub(crate) use splice::compact;
