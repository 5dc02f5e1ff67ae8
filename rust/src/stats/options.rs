//! What a comparison is asked to compute: the metric, its direction and minimum effect, and the
//! statistics settings. Deserialized from JSON at the Python boundary (unknown fields are an error);
//! every field has the documented default.

use super::bootstrap::CiMethod;
use super::codes;
use super::effect::{Direction, EffectScale};
use super::estimators::Estimator;
use super::quantile::WithinCall;
use super::rng::MAX_EXACT_INT;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The settings of one comparison (paired or unpaired) or noise analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompareOptions {
    /// The metric's name; part of every bootstrap stream key.
    pub metric: String,
    pub direction: Direction,
    /// The minimum effect m (%) a verdict is judged against (≥ 0).
    pub minimum_effect_pct: f64,
    /// How a call's samples become the pair's value.
    pub within_call: WithinCall,
    /// Also report p50/p95/p99 effects where every call carries enough samples.
    pub tails: bool,
    /// Two-sided confidence of every interval, in (0, 1) (see [`level_ok`]).
    pub confidence: f64,
    /// Bootstrap replicates B (≥ 1; records require ≥ 1000).
    pub resamples: usize,
    /// Fewer valid pairs than this give `inconclusive` (`too_few_pairs`), never a rejection (≥ 2).
    pub minimum_pairs: usize,
    /// The seed of every bootstrap stream (≤ 2^53 − 1).
    pub seed: u64,
    pub estimator: Estimator,
    pub ci_method: CiMethod,
    pub effect_scale: EffectScale,
    /// Power for the minimum detectable effect, in (0, 1) (see [`level_ok`]).
    pub power: f64,
    /// What the comparison belongs to (a request digest; empty when standalone); part of every stream key.
    pub scope: String,
    /// SD of A/A log ratios from a noise analysis, to judge whether the minimum effect is resolvable.
    pub noise_sd_log: Option<f64>,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            metric: "value".to_string(),
            direction: Direction::Lower,
            minimum_effect_pct: 0.0,
            within_call: WithinCall::Median,
            tails: false,
            confidence: 0.95,
            resamples: 10_000,
            minimum_pairs: 10,
            seed: 0,
            estimator: Estimator::Median,
            ci_method: CiMethod::Bca,
            effect_scale: EffectScale::LogRatio,
            power: 0.8,
            scope: String::new(),
            noise_sd_log: None,
        }
    }
}

/// The largest replicate count accepted.
pub const MAX_RESAMPLES: usize = 10_000_000;

/// A confidence or power level's range: (0, 1 − 10⁻⁹]. Closer to 1 the tail (1 − level)/2 is lost
/// against 1 in a double, the normal quantile is infinite and every interval with it.
pub fn level_ok(level: f64) -> bool {
    level > 0.0 && level <= 1.0 - 1e-9
}

/// How a level's range reads in errors.
pub const LEVEL_RANGE: &str = "in (0, 1), at most 1 - 1e-9";

fn invalid(field: &str, expected: &str, observed: impl std::fmt::Display) -> Error {
    Error::input(
        codes::STATISTICS_INVALID,
        format!("statistics option {field} is out of range"),
    )
    .with_path(field.to_string())
    .with_expected(expected.to_string())
    .with_observed(observed.to_string())
}

impl CompareOptions {
    /// Checks every range; parity mode (`arithmetic_pct`) requires `median` + `percentile`.
    pub fn validate(&self) -> Result<()> {
        if !(self.minimum_effect_pct.is_finite() && self.minimum_effect_pct >= 0.0) {
            return Err(invalid(
                "minimum_effect_pct",
                "a finite percentage ≥ 0",
                self.minimum_effect_pct,
            ));
        }
        if !level_ok(self.confidence) {
            return Err(invalid("confidence", LEVEL_RANGE, self.confidence));
        }
        if !(1..=MAX_RESAMPLES).contains(&self.resamples) {
            return Err(invalid(
                "resamples",
                "1 to 10000000 (records require ≥ 1000)",
                self.resamples,
            ));
        }
        if self.minimum_pairs < 2 {
            return Err(invalid("minimum_pairs", "≥ 2", self.minimum_pairs));
        }
        if self.seed > MAX_EXACT_INT {
            return Err(invalid("seed", "0 to 2^53 − 1", self.seed));
        }
        if !level_ok(self.power) {
            return Err(invalid("power", LEVEL_RANGE, self.power));
        }
        if let Some(sd) = self.noise_sd_log {
            if !(sd.is_finite() && sd >= 0.0) {
                return Err(invalid("noise_sd_log", "a finite SD ≥ 0", sd));
            }
        }
        if self.effect_scale == EffectScale::ArithmeticPct
            && (self.estimator != Estimator::Median || self.ci_method != CiMethod::Percentile)
        {
            return Err(invalid(
                "effect_scale",
                "arithmetic_pct (parity mode) with estimator median and ci_method percentile",
                format!(
                    "arithmetic_pct with {} and {}",
                    self.estimator.name(),
                    self.ci_method.name()
                ),
            ));
        }
        Ok(())
    }

    /// The threshold τ on the effect scale.
    pub fn threshold(&self) -> f64 {
        self.effect_scale.threshold(self.minimum_effect_pct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones_and_valid() {
        let o = CompareOptions::default();
        assert_eq!(
            (o.confidence, o.resamples, o.minimum_pairs),
            (0.95, 10_000, 10)
        );
        assert!(o.validate().is_ok());
        let parsed: CompareOptions = serde_json::from_str("{}").unwrap();
        assert_eq!(parsed, o);
    }

    #[test]
    fn unknown_fields_and_bad_ranges_are_refused() {
        assert!(serde_json::from_str::<CompareOptions>(r#"{"confidnce": 0.9}"#).is_err());
        let bad = CompareOptions {
            confidence: 1.0,
            ..CompareOptions::default()
        };
        assert_eq!(bad.validate().unwrap_err().code, codes::STATISTICS_INVALID);
        let parity = CompareOptions {
            effect_scale: EffectScale::ArithmeticPct,
            ..CompareOptions::default()
        };
        assert!(parity.validate().is_err());
        let parity = CompareOptions {
            ci_method: CiMethod::Percentile,
            ..parity
        };
        assert!(parity.validate().is_ok());
    }
}
