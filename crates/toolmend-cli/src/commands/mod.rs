//! One module per subcommand.

pub(crate) mod audit;
pub(crate) mod eval;
pub(crate) mod mcp;
pub(crate) mod prepare;
pub(crate) mod repair;
pub(crate) mod serve;
pub(crate) mod turns;
