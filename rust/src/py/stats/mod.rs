//! Bindings for the statistics engine. Numbers come in as little-endian byte buffers (float64 values,
//! uint64 call offsets, uint32 case codes, uint8 orders/validity), options as JSON; results go out as
//! JSON documents and Arrow tables.
//!
//! One file per job, bottom up: `input` (buffers and options decoded), `compare` (paired, unpaired,
//! constraint and guardrail), `noise` (A/A noise), `files` (sample files read, then compared or used for
//! noise), `seeded` (schedule, RNG draws, input seeds, simulation) and `steps` (summaries, pair effects
//! and the MDE on their own).

pub mod compare;
pub mod files;
mod input;
pub mod noise;
pub mod seeded;
pub mod steps;
