//! The effect scale. Per pair, ℓ = ln(ref/cand) for a lower-is-better metric and ln(cand/ref) for a
//! higher-is-better one, so ℓ > 0 always means "candidate better" and a 2× slowdown lies as far from 0 as
//! a 2× speedup. Reported as `effect_pct` = 100·(e^ℓ − 1) next to the raw `change_pct` = 100·(cand/ref − 1).
//! A minimum effect of m % becomes the threshold τ = ln(1 + m/100) on the same scale.
//!
//! Parity mode (`arithmetic_pct`) instead uses 100·(ref − cand)/ref (lower) or 100·(cand − ref)/ref
//! (higher) per pair and compares with m directly; it reproduces the classic median-of-percentages
//! percentile bootstrap.

use serde::{Deserialize, Serialize};

/// The largest ratio (either way) between two values compared. Beyond it the percent effects and
/// their spread overflow `f64` (a subnormal 4.9e-324 against 1 is a ratio of 2e323), so such input is
/// refused by name instead of answering `null` percentages; no two measurements of one metric are 10⁹ apart.
pub const MAX_RATIO: f64 = 1e9;

/// Whether `a / b` lies within [1/[`MAX_RATIO`], [`MAX_RATIO`]] (both finite and > 0).
pub fn ratio_in_range(a: f64, b: f64) -> bool {
    let r = a / b;
    r.is_finite() && (1.0 / MAX_RATIO..=MAX_RATIO).contains(&r)
}

/// Whether smaller or larger values of the metric are better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Lower,
    Higher,
}

/// The scale pair effects are computed, resampled and judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum EffectScale {
    #[default]
    LogRatio,
    ArithmeticPct,
}

impl EffectScale {
    /// One pair's effect (positive = candidate better). Both values must be finite and > 0.
    pub fn pair_effect(self, direction: Direction, reference: f64, candidate: f64) -> f64 {
        match (self, direction) {
            (Self::LogRatio, Direction::Lower) => libm::log(reference / candidate),
            (Self::LogRatio, Direction::Higher) => libm::log(candidate / reference),
            (Self::ArithmeticPct, Direction::Lower) => 100.0 * (reference - candidate) / reference,
            (Self::ArithmeticPct, Direction::Higher) => 100.0 * (candidate - reference) / reference,
        }
    }

    /// An effect on this scale as a percent improvement.
    pub fn to_pct(self, effect: f64) -> f64 {
        match self {
            Self::LogRatio => 100.0 * libm::expm1(effect),
            Self::ArithmeticPct => effect,
        }
    }

    /// An effect on this scale as the raw change of the candidate, 100·(cand/ref − 1) (never −0).
    pub fn to_change_pct(self, direction: Direction, effect: f64) -> f64 {
        0.0 + match (self, direction) {
            (Self::LogRatio, Direction::Lower) => 100.0 * libm::expm1(-effect),
            (Self::LogRatio, Direction::Higher) => 100.0 * libm::expm1(effect),
            (Self::ArithmeticPct, Direction::Lower) => -effect,
            (Self::ArithmeticPct, Direction::Higher) => effect,
        }
    }

    /// The threshold on this scale for a minimum effect of `m_pct` percent (τ = ln(1 + m/100)).
    pub fn threshold(self, m_pct: f64) -> f64 {
        match self {
            Self::LogRatio => libm::log1p(m_pct / 100.0),
            Self::ArithmeticPct => m_pct,
        }
    }

    /// Whether values on this scale are log ratios (so the `_log` fields are meaningful).
    pub fn is_log(self) -> bool {
        self == Self::LogRatio
    }
}

/// Percent change of a log effect, mirrored for a CI: `(low, high)` of ℓ → `(low, high)` of change.
pub fn change_interval(
    scale: EffectScale,
    direction: Direction,
    low: f64,
    high: f64,
) -> (f64, f64) {
    let a = scale.to_change_pct(direction, low);
    let b = scale.to_change_pct(direction, high);
    (a.min(b), a.max(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_to_eight_ms_is_a_25_pct_effect_and_a_minus_20_pct_change() {
        let l = EffectScale::LogRatio.pair_effect(Direction::Lower, 10.0, 8.0);
        assert!((l - 0.223_143_551_314_209_76).abs() < 1e-15);
        assert!((EffectScale::LogRatio.to_pct(l) - 25.0).abs() < 1e-12);
        assert!((EffectScale::LogRatio.to_change_pct(Direction::Lower, l) + 20.0).abs() < 1e-12);
        assert!((EffectScale::LogRatio.threshold(5.0) - 0.048_790_164_169_432).abs() < 1e-12);
    }

    #[test]
    fn a_2x_slowdown_is_as_far_as_a_2x_speedup() {
        let s = EffectScale::LogRatio;
        let up = s.pair_effect(Direction::Lower, 2.0, 1.0);
        let down = s.pair_effect(Direction::Lower, 1.0, 2.0);
        assert_eq!(up, -down);
        let thr = s.pair_effect(Direction::Higher, 100.0, 150.0);
        assert!((s.to_pct(thr) - 50.0).abs() < 1e-12);
        assert!((s.to_change_pct(Direction::Higher, thr) - 50.0).abs() < 1e-12);
    }

    #[test]
    fn parity_scale_is_percent_of_reference() {
        let s = EffectScale::ArithmeticPct;
        assert_eq!(s.pair_effect(Direction::Lower, 10.0, 8.0), 20.0);
        assert_eq!(s.pair_effect(Direction::Higher, 10.0, 8.0), -20.0);
        assert_eq!(s.threshold(5.0), 5.0);
        assert_eq!(change_interval(s, Direction::Lower, 1.0, 3.0), (-3.0, -1.0));
    }
}
