//! Verdict rules. A minimum effect m % gives the threshold τ on the effect scale (τ = ln(1 + m/100) for
//! log ratios). Checked in order:
//!
//! | condition | verdict |
//! |---|---|
//! | n < minimum pairs | `inconclusive` (`too_few_pairs`): statistics never reject below the minimum |
//! | m > 0 ∧ CI low ≥ τ, or m = 0 ∧ CI low > 0 | `improved` |
//! | m > 0 ∧ CI high ≤ −τ, or m = 0 ∧ CI high < 0 | `regressed` |
//! | m > 0 ∧ −τ < CI low ∧ CI high < τ | `equivalent` |
//! | otherwise | `inconclusive` |
//!
//! An inconclusive verdict carries `pairs_needed_estimate` = ⌈n·(h/d)²⌉ (h = CI half-width, d = distance
//! from the estimate to the nearest of ±τ, or to 0 when m = 0; none when d = 0): a projection under the
//! observed spread, not a promise.
//!
//! Constraints are non-inferiority tests on a regression ρ (positive = worse) against a limit λ:
//! `passed` if CI high ≤ λ, `failed` if CI low > λ, else `inconclusive`; below the minimum, `inconclusive`.

use serde::{Deserialize, Serialize};

/// The verdict on a primary or secondary metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Improved,
    Regressed,
    Equivalent,
    Inconclusive,
}

/// Which rule decided the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictReason {
    /// Fewer valid pairs than the minimum.
    TooFewPairs,
    /// The whole CI lies at or beyond the minimum effect (beyond 0 when m = 0).
    CiClearsMinimumEffect,
    /// The whole CI lies at or beyond −τ (below 0 when m = 0).
    CiClearsMinimumRegression,
    /// The whole CI lies strictly inside (−τ, τ).
    CiInsideEquivalenceBand,
    /// The CI spans a threshold.
    CiSpansThreshold,
}

/// A verdict with its reason and, when inconclusive, the projected pair count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Judgement {
    pub verdict: Verdict,
    pub reason: VerdictReason,
    pub pairs_needed_estimate: Option<u64>,
}

/// The primary (or secondary) verdict for an estimate and CI from `n` pairs against threshold `tau`
/// (τ ≥ 0; τ = 0 means m = 0).
pub fn judge(
    n: usize,
    minimum_pairs: usize,
    estimate: Option<f64>,
    ci: Option<(f64, f64)>,
    tau: f64,
) -> Judgement {
    let inconclusive = |reason| Judgement {
        verdict: Verdict::Inconclusive,
        reason,
        pairs_needed_estimate: projection(n, estimate, ci, tau),
    };
    let Some((low, high)) = ci else {
        return Judgement {
            pairs_needed_estimate: Some(minimum_pairs.max(2) as u64),
            ..inconclusive(VerdictReason::TooFewPairs)
        };
    };
    if n < minimum_pairs {
        let projected = projection(n, estimate, ci, tau).unwrap_or(0);
        return Judgement {
            pairs_needed_estimate: Some(projected.max(minimum_pairs as u64)),
            ..inconclusive(VerdictReason::TooFewPairs)
        };
    }
    let zero = tau <= 0.0;
    let verdict = |verdict, reason| Judgement {
        verdict,
        reason,
        pairs_needed_estimate: None,
    };
    if (zero && low > 0.0) || (!zero && low >= tau) {
        return verdict(Verdict::Improved, VerdictReason::CiClearsMinimumEffect);
    }
    if (zero && high < 0.0) || (!zero && high <= -tau) {
        return verdict(Verdict::Regressed, VerdictReason::CiClearsMinimumRegression);
    }
    if !zero && -tau < low && high < tau {
        return verdict(Verdict::Equivalent, VerdictReason::CiInsideEquivalenceBand);
    }
    inconclusive(VerdictReason::CiSpansThreshold)
}

/// ⌈n·(h/d)²⌉, or `None` when it cannot be projected (no CI, no estimate, or d = 0).
pub fn projection(
    n: usize,
    estimate: Option<f64>,
    ci: Option<(f64, f64)>,
    tau: f64,
) -> Option<u64> {
    let (low, high) = ci?;
    let estimate = estimate?;
    let h = 0.5 * (high - low);
    let d = if tau <= 0.0 {
        estimate.abs()
    } else {
        (estimate - tau).abs().min((estimate + tau).abs())
    };
    if d <= 0.0 || !h.is_finite() {
        return None;
    }
    let needed = (n as f64 * (h / d) * (h / d)).ceil();
    (needed.is_finite() && needed < 1e15).then_some(needed as u64)
}

/// The status of a constraint or guardrail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintStatus {
    Passed,
    Failed,
    Inconclusive,
}

/// Non-inferiority: `passed` if the regression's CI high ≤ `limit`, `failed` if its CI low > `limit`.
pub fn constraint(
    n: usize,
    minimum_pairs: usize,
    regression_ci: Option<(f64, f64)>,
    limit: f64,
) -> ConstraintStatus {
    match regression_ci {
        Some((_, high)) if n >= minimum_pairs && high <= limit => ConstraintStatus::Passed,
        Some((low, _)) if n >= minimum_pairs && low > limit => ConstraintStatus::Failed,
        _ => ConstraintStatus::Inconclusive,
    }
}

/// How an absolute guardrail compares the candidate with its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitOp {
    /// The value must be at most the limit.
    Le,
    /// The value must be at least the limit.
    Ge,
}

impl LimitOp {
    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Self::Le => value <= limit,
            Self::Ge => value >= limit,
        }
    }
}

/// An absolute guardrail judged on the CI of the candidate's estimator: `le` passes if CI high ≤ limit
/// and fails if CI low > limit (`ge` mirrored).
pub fn guardrail_ci(
    n: usize,
    minimum_pairs: usize,
    ci: Option<(f64, f64)>,
    op: LimitOp,
    limit: f64,
) -> ConstraintStatus {
    let Some((low, high)) = ci else {
        return ConstraintStatus::Inconclusive;
    };
    if n < minimum_pairs {
        return ConstraintStatus::Inconclusive;
    }
    match op {
        LimitOp::Le if high <= limit => ConstraintStatus::Passed,
        LimitOp::Le if low > limit => ConstraintStatus::Failed,
        LimitOp::Ge if low >= limit => ConstraintStatus::Passed,
        LimitOp::Ge if high < limit => ConstraintStatus::Failed,
        _ => ConstraintStatus::Inconclusive,
    }
}

/// An absolute guardrail on every call: the indices of the violating values (empty = passed). A
/// non-statistical rule, so one violation fails at any pair count.
pub fn guardrail_every_call(values: &[f64], op: LimitOp, limit: f64) -> Vec<usize> {
    values
        .iter()
        .enumerate()
        .filter(|(_, &v)| !op.holds(v, limit))
        .map(|(i, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAU: f64 = 0.048_790_164_169_432; // ln 1.05

    #[test]
    fn rules_in_order() {
        let j = |lo, hi, tau| judge(20, 10, Some(0.5 * (lo + hi)), Some((lo, hi)), tau);
        assert_eq!(j(TAU, 0.2, TAU).verdict, Verdict::Improved);
        assert_eq!(j(0.04, 0.2, TAU).verdict, Verdict::Inconclusive);
        assert_eq!(j(-0.2, -TAU, TAU).verdict, Verdict::Regressed);
        assert_eq!(j(-0.01, 0.02, TAU).verdict, Verdict::Equivalent);
        assert_eq!(j(-TAU, 0.02, TAU).verdict, Verdict::Inconclusive);
        // m = 0: a CI touching 0 is inconclusive; nothing is equivalent.
        assert_eq!(j(0.0, 0.1, 0.0).verdict, Verdict::Inconclusive);
        assert_eq!(j(-0.1, 0.0, 0.0).verdict, Verdict::Inconclusive);
        assert_eq!(j(1e-9, 0.1, 0.0).verdict, Verdict::Improved);
        assert_eq!(j(-0.1, -1e-9, 0.0).verdict, Verdict::Regressed);
        assert_eq!(j(-1e-3, 1e-3, 0.0).verdict, Verdict::Inconclusive);
        assert_eq!(j(0.0, 0.0, 0.0).verdict, Verdict::Inconclusive);
    }

    #[test]
    fn below_the_minimum_is_never_a_rejection() {
        let got = judge(5, 10, Some(-0.5), Some((-0.6, -0.4)), TAU);
        assert_eq!(got.verdict, Verdict::Inconclusive);
        assert_eq!(got.reason, VerdictReason::TooFewPairs);
        assert_eq!(got.pairs_needed_estimate, Some(10));
        let none = judge(1, 10, Some(0.1), None, TAU);
        assert_eq!(none.pairs_needed_estimate, Some(10));
    }

    #[test]
    fn pairs_needed_projects_the_half_width() {
        // Estimate 0.02, CI ±0.03, m = 0: d = 0.02, h = 0.03 → ⌈20·2.25⌉ = 45.
        let got = judge(20, 10, Some(0.02), Some((-0.01, 0.05)), 0.0);
        assert_eq!(got.verdict, Verdict::Inconclusive);
        assert_eq!(got.pairs_needed_estimate, Some(45));
        // Nearest of ±τ: estimate 0.03, τ = 0.05 → d = 0.02.
        assert_eq!(
            projection(10, Some(0.03), Some((0.0, 0.06)), 0.05),
            Some(23)
        );
        assert_eq!(projection(10, Some(0.05), Some((0.0, 0.1)), 0.05), None);
    }

    #[test]
    fn constraints_and_guardrails() {
        assert_eq!(
            constraint(20, 10, Some((-0.1, 0.02)), 0.03),
            ConstraintStatus::Passed
        );
        assert_eq!(
            constraint(20, 10, Some((0.04, 0.1)), 0.03),
            ConstraintStatus::Failed
        );
        assert_eq!(
            constraint(20, 10, Some((0.0, 0.1)), 0.03),
            ConstraintStatus::Inconclusive
        );
        assert_eq!(
            constraint(2, 10, Some((0.04, 0.1)), 0.03),
            ConstraintStatus::Inconclusive
        );
        assert_eq!(
            guardrail_ci(20, 10, Some((1.0, 2.0)), LimitOp::Le, 2.0),
            ConstraintStatus::Passed
        );
        assert_eq!(
            guardrail_ci(20, 10, Some((2.5, 3.0)), LimitOp::Le, 2.0),
            ConstraintStatus::Failed
        );
        assert_eq!(
            guardrail_ci(20, 10, Some((2.5, 3.0)), LimitOp::Ge, 2.0),
            ConstraintStatus::Passed
        );
        assert_eq!(
            guardrail_ci(20, 10, Some((1.0, 1.5)), LimitOp::Ge, 2.0),
            ConstraintStatus::Failed
        );
        assert_eq!(
            guardrail_every_call(&[1.0, 3.0, 2.0], LimitOp::Le, 2.0),
            vec![1]
        );
    }
}
