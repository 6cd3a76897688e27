//! TODO granite.

use super::{Block, Grammar, Input};
use crate::recover::cursor::{Step, Stop};

pub(crate) const GRAMMAR: Grammar = Grammar { family: "granite", sentinels: &["<granite-stub>"], parse };

fn parse(_input: &Input<'_>, _start: usize, _body: usize) -> Step<Block> {
    Err(Stop::Invalid)
}

pub(crate) fn parse_whole(_input: &Input<'_>, _start: usize) -> Step<Block> {
    Err(Stop::Invalid)
}
