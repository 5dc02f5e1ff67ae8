//! What a seed decides: the AB/BA schedule, RNG draws, a call's input seed, and the simulation harness.

use super::input::invalid;
use crate::py::{json, run};
use crate::stats::rng::{KeyPrefix, Part, Stream, RNG_NAME};
use crate::stats::schedule::{self, Order};
use crate::stats::simulate;
use pyo3::prelude::*;
use serde::Serialize;

/// `stats_simulate(options_json) -> bytes`: the honesty harness's report.
#[pyfunction]
pub fn stats_simulate(py: Python<'_>, options_json: &[u8]) -> PyResult<Vec<u8>> {
    let report = run(py, || {
        let opts: simulate::SimulationOptions = serde_json::from_slice(options_json)
            .map_err(|e| invalid("simulation options", &e.to_string()))?;
        simulate::run(&opts)
    })?;
    json(&report)
}

/// `stats_schedule(pairs, seed) -> bytes`: a seeded balanced AB/BA schedule.
#[pyfunction]
pub fn stats_schedule(py: Python<'_>, pairs: usize, seed: u64) -> PyResult<Vec<u8>> {
    #[derive(Serialize)]
    struct Doc {
        rng: &'static str,
        seed: u64,
        pairs: usize,
        orders: Vec<Order>,
    }
    let doc = run(py, || {
        if seed > crate::stats::rng::MAX_EXACT_INT {
            return Err(invalid("seed", "0 to 2^53 − 1"));
        }
        if pairs > 10_000_000 {
            return Err(invalid("pairs", "at most 10000000"));
        }
        Ok(Doc {
            rng: RNG_NAME,
            seed,
            pairs,
            orders: schedule::balanced(pairs, seed),
        })
    })?;
    json(&doc)
}

/// `stats_rng_draws(tag, parts_json, count) -> bytes`: JSON `{rng, key, draws}`, the first `count`
/// 64-bit outputs of the stream (tag, parts) — for cross-checking `gpuopt.rng/v1` elsewhere.
#[pyfunction]
pub fn stats_rng_draws(
    py: Python<'_>,
    tag: &str,
    parts_json: &[u8],
    count: usize,
) -> PyResult<Vec<u8>> {
    #[derive(Serialize)]
    struct Doc {
        rng: &'static str,
        key: u64,
        draws: Vec<u64>,
    }
    let doc = run(py, || {
        let parts: Vec<serde_json::Value> =
            serde_json::from_slice(parts_json).map_err(|e| invalid("parts", &e.to_string()))?;
        let mut prefix = KeyPrefix::new(tag, &[]);
        for p in &parts {
            match p {
                serde_json::Value::String(s) => prefix.push(Part::Str(s)),
                serde_json::Value::Number(n) => match n.as_u64() {
                    Some(v) if v <= crate::stats::rng::MAX_EXACT_INT => prefix.push(Part::Int(v)),
                    _ => return Err(invalid("parts", "integers must be 0 to 2^53 − 1")),
                },
                _ => return Err(invalid("parts", "each part is a string or an integer")),
            }
        }
        let key = prefix.key();
        let mut stream = Stream::from_key(key);
        let draws = (0..count.min(1_000_000))
            .map(|_| stream.next_u64())
            .collect();
        Ok(Doc {
            rng: RNG_NAME,
            key,
            draws,
        })
    })?;
    json(&doc)
}

/// `stats_input_seed(plan_seed, pair_index, case_id) -> int`: the 53-bit seed a workload driver receives
/// for one call, `key("input", seed, pair_index, case_id) >> 11` of `gpuopt.rng/v1`.
#[pyfunction]
pub fn stats_input_seed(
    py: Python<'_>,
    plan_seed: u64,
    pair_index: u64,
    case_id: &str,
) -> PyResult<u64> {
    run(py, || {
        if plan_seed > crate::stats::rng::MAX_EXACT_INT
            || pair_index > crate::stats::rng::MAX_EXACT_INT
        {
            return Err(invalid("seed", "0 to 2^53 − 1"));
        }
        Ok(crate::stats::rng::input_seed(
            plan_seed, pair_index, case_id,
        ))
    })
}
