//! Paired and unpaired comparisons: effects per pair, a bootstrap CI of the estimator, the verdict
//! against the minimum effect, per-case and tail effects, the order effect and the observed spread.
//! One job per file, bottom up: `input` (what is compared, checked), `model` (what is reported),
//! `estimate` (the bootstrap estimate, effect and header every comparison shares), `blocks`
//! (per-block effects, their disagreement and the block bootstrap), `facts` (spread, resolution, per
//! case, order, tails), `paired` (the paired entry points) and `unpaired`.

pub mod blocks;
mod estimate;
mod facts;
mod input;
mod model;
mod paired;
mod unpaired;

pub use estimate::{bootstrap_prefix, estimate_interval};
pub use input::{Blocks, Cases, PairedInput};
pub use model::*;
pub use paired::{compare, compare_with};
pub use unpaired::{compare_unpaired, UnpairedBlocks, UnpairedInput, UnpairedOutcome};

#[cfg(test)]
mod tests;
