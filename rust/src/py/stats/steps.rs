//! Steps of a comparison on their own: within-call summaries, per-pair effects and the MDE.

use super::input::{calls, f64_bytes, f64s, invalid, named};
use crate::py::run;
use crate::stats::effect::{Direction, EffectScale};
use crate::stats::estimators::Estimator;
use crate::stats::quantile::WithinCall;
use crate::stats::resolution;
use pyo3::prelude::*;

/// `stats_summarize(values, offsets, within_call) -> bytes`: each call's within-call summary (float64,
/// the value a pair holds for that call).
#[pyfunction]
pub fn stats_summarize(
    py: Python<'_>,
    values: &[u8],
    offsets: &[u8],
    within_call: &str,
) -> PyResult<Vec<u8>> {
    run(py, || {
        let how: WithinCall = named("within_call", within_call)?;
        let calls = calls("values", values, Some(offsets))?;
        Ok(f64_bytes(
            (0..calls.len()).map(|i| how.summarize(calls.call(i)).unwrap_or(f64::NAN)),
        ))
    })
}

/// `stats_pair_effects(reference, candidate, direction, effect_scale) -> bytes`: each pair's effect
/// (float64, > 0 = candidate better); NaN where a value is not finite and positive.
#[pyfunction]
pub fn stats_pair_effects(
    py: Python<'_>,
    reference: &[u8],
    candidate: &[u8],
    direction: &str,
    effect_scale: &str,
) -> PyResult<Vec<u8>> {
    run(py, || {
        let direction: Direction = named("direction", direction)?;
        let scale: EffectScale = named("effect_scale", effect_scale)?;
        let reference = f64s("reference", reference)?;
        let candidate = f64s("candidate", candidate)?;
        if reference.len() != candidate.len() {
            return Err(invalid("candidate", "as many values as the reference"));
        }
        let usable = |v: f64| v.is_finite() && v > 0.0;
        Ok(f64_bytes(reference.iter().zip(&candidate).map(
            |(&r, &c)| {
                if usable(r) && usable(c) {
                    scale.pair_effect(direction, r, c)
                } else {
                    f64::NAN
                }
            },
        )))
    })
}

/// `stats_mde_pct(sd_log, n, estimator, confidence, power) -> float`: the minimum detectable effect at
/// n pairs that an A/A SD predicts, as a percentage (the noise report's normal approximation).
#[pyfunction]
pub fn stats_mde_pct(
    py: Python<'_>,
    sd_log: f64,
    n: usize,
    estimator: &str,
    confidence: f64,
    power: f64,
) -> PyResult<f64> {
    run(py, || {
        let estimator: Estimator = named("estimator", estimator)?;
        if !(sd_log.is_finite() && sd_log >= 0.0) {
            return Err(invalid("sd_log", "a finite number >= 0"));
        }
        if !(crate::stats::options::level_ok(confidence) && crate::stats::options::level_ok(power))
        {
            return Err(invalid(
                "confidence",
                "confidence and power in (0, 1), at most 1 - 1e-9",
            ));
        }
        let mde = resolution::Resolving::new(sd_log, estimator, confidence, power).mde(n);
        Ok(EffectScale::LogRatio.to_pct(mde))
    })
}
