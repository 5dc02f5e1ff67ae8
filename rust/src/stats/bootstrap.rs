//! Bootstrap confidence intervals from replicates θ*₁..θ*_B. `Q(q)` is the type-7 quantile of the
//! sorted replicates at position (B − 1)·q and α = 1 − confidence.
//!
//! - **Percentile**: (Q(α/2), Q(1 − α/2)).
//! - **BCa** (Efron 1987): p₀ = (#{θ* < θ̂} + #{θ* ≤ θ̂})/(2B), z₀ = Φ⁻¹(p₀); acceleration a from the
//!   jackknife; for z ∈ {Φ⁻¹(α/2), Φ⁻¹(1 − α/2)}: q = Φ(z₀ + (z₀ + z)/(1 − a(z₀ + z))). If p₀ ∈ {0, 1}
//!   or 1 − a(z₀ + z) ≤ 0, the percentile interval is returned instead, flagged `bca_degenerate`.

use super::normal;
use super::quantile::type7;
use serde::{Deserialize, Serialize};

/// Which bootstrap interval to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CiMethod {
    #[default]
    Bca,
    Percentile,
}

impl CiMethod {
    pub fn name(self) -> &'static str {
        match self {
            Self::Bca => "bca",
            Self::Percentile => "percentile",
        }
    }
}

/// A confidence interval and how it was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    /// The method that produced `low`/`high` (percentile when BCa was degenerate).
    pub method: CiMethod,
    /// BCa bias correction z₀ (when BCa was asked for and p₀ was inside (0, 1)).
    pub z0: Option<f64>,
    /// BCa acceleration a (when BCa was asked for).
    pub acceleration: Option<f64>,
    /// BCa was asked for but could not be computed; the percentile interval is given instead.
    pub bca_degenerate: bool,
}

/// Sorts replicates ascending (total order: values that compare equal are the same bits, so an unstable
/// sort gives the same slice as a stable one, faster).
pub fn sort(replicates: &mut [f64]) {
    replicates.sort_unstable_by(f64::total_cmp);
}

/// The percentile interval of sorted replicates.
pub fn percentile(sorted: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let alpha = 1.0 - confidence;
    Some((
        type7(sorted, alpha / 2.0)?,
        type7(sorted, 1.0 - alpha / 2.0)?,
    ))
}

/// The acceleration of one sample's jackknife values: Σd³ / (6·(Σd²)^{3/2}), d = θ̄ − θ₍ᵢ₎; 0 when Σd² = 0.
pub fn acceleration(jackknife: &[f64]) -> f64 {
    if jackknife.is_empty() {
        return 0.0;
    }
    let mean = jackknife.iter().sum::<f64>() / jackknife.len() as f64;
    let (mut s2, mut s3) = (0.0, 0.0);
    for &t in jackknife {
        let d = mean - t;
        s2 += d * d;
        s3 += d * d * d;
    }
    if s2 > 0.0 {
        s3 / (6.0 * libm::pow(s2, 1.5))
    } else {
        0.0
    }
}

/// The acceleration for several independent samples, each jackknifed with the others held fixed
/// (as `scipy.stats.bootstrap` does): U = (n_j − 1)(θ̄_j − θ₍ᵢ₎),
/// a = Σ_j ΣU³/n_j³ / (6·(Σ_j ΣU²/n_j²)^{3/2}).
pub fn acceleration_multi(jackknifes: &[&[f64]]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for jk in jackknifes {
        if jk.is_empty() {
            continue;
        }
        let n = jk.len() as f64;
        let mean = jk.iter().sum::<f64>() / n;
        let (mut s2, mut s3) = (0.0, 0.0);
        for &t in *jk {
            let u = (n - 1.0) * (mean - t);
            s2 += u * u;
            s3 += u * u * u;
        }
        num += s3 / (n * n * n);
        den += s2 / (n * n);
    }
    if den > 0.0 {
        num / (6.0 * libm::pow(den, 1.5))
    } else {
        0.0
    }
}

/// The interval of `method` from sorted replicates, the full-sample estimate and the acceleration.
pub fn interval(
    sorted: &[f64],
    estimate: f64,
    acceleration: f64,
    method: CiMethod,
    confidence: f64,
) -> Option<Interval> {
    let (p_low, p_high) = percentile(sorted, confidence)?;
    let plain = Interval {
        low: p_low,
        high: p_high,
        method: CiMethod::Percentile,
        z0: None,
        acceleration: None,
        bca_degenerate: false,
    };
    if method == CiMethod::Percentile {
        return Some(plain);
    }
    let degenerate = Interval {
        bca_degenerate: true,
        acceleration: Some(acceleration),
        ..plain
    };
    let b = sorted.len() as f64;
    let below = sorted.partition_point(|&x| x < estimate) as f64;
    let at_most = sorted.partition_point(|&x| x <= estimate) as f64;
    let p0 = (below + at_most) / (2.0 * b);
    if p0 <= 0.0 || p0 >= 1.0 {
        return Some(degenerate);
    }
    let z0 = normal::inverse_cdf(p0);
    let alpha = 1.0 - confidence;
    let adjusted = |z: f64| -> Option<f64> {
        let denominator = 1.0 - acceleration * (z0 + z);
        if denominator <= 0.0 {
            return None;
        }
        let q = normal::cdf(z0 + (z0 + z) / denominator);
        q.is_finite().then_some(q)
    };
    let q_low = adjusted(normal::inverse_cdf(alpha / 2.0));
    let q_high = adjusted(normal::inverse_cdf(1.0 - alpha / 2.0));
    let (Some(q_low), Some(q_high)) = (q_low, q_high) else {
        return Some(degenerate);
    };
    Some(Interval {
        low: type7(sorted, q_low)?,
        high: type7(sorted, q_high)?,
        method: CiMethod::Bca,
        z0: Some(z0),
        acceleration: Some(acceleration),
        bca_degenerate: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_interval_interpolates() {
        let sorted: Vec<f64> = (0..=100).map(f64::from).collect();
        let (low, high) = percentile(&sorted, 0.9).unwrap();
        assert!((low - 5.0).abs() < 1e-12 && (high - 95.0).abs() < 1e-12);
        // The seed's pinned example: replicates [0, 5, 5, 10] at 50 % → Q(0.25), Q(0.75).
        assert_eq!(percentile(&[0.0, 5.0, 5.0, 10.0], 0.5), Some((3.75, 6.25)));
    }

    #[test]
    fn bca_without_bias_or_acceleration_is_the_percentile_interval() {
        let sorted: Vec<f64> = (0..=100).map(f64::from).collect();
        let ci = interval(&sorted, 50.0, 0.0, CiMethod::Bca, 0.9).unwrap();
        assert_eq!(ci.method, CiMethod::Bca);
        assert_eq!(ci.z0, Some(0.0));
        assert!((ci.low - 5.0).abs() < 1e-9 && (ci.high - 95.0).abs() < 1e-9);
    }

    #[test]
    fn bca_shifts_with_bias() {
        let sorted: Vec<f64> = (0..=100).map(f64::from).collect();
        let ci = interval(&sorted, 60.0, 0.0, CiMethod::Bca, 0.9).unwrap();
        assert!(ci.z0.unwrap() > 0.0 && ci.low > 5.0 && ci.high > 95.0);
    }

    #[test]
    fn estimate_outside_the_replicates_is_degenerate() {
        let sorted = [1.0, 2.0, 3.0];
        let ci = interval(&sorted, 0.5, 0.0, CiMethod::Bca, 0.95).unwrap();
        assert!(ci.bca_degenerate);
        assert_eq!(ci.method, CiMethod::Percentile);
        let ci = interval(&sorted, 2.0, 10.0, CiMethod::Bca, 0.95).unwrap();
        assert!(ci.bca_degenerate);
    }

    #[test]
    fn identical_replicates_give_a_point_interval() {
        let ci = interval(&[2.0; 50], 2.0, 0.0, CiMethod::Bca, 0.95).unwrap();
        assert_eq!((ci.low, ci.high, ci.bca_degenerate), (2.0, 2.0, false));
    }

    #[test]
    fn acceleration_of_a_skewed_jackknife() {
        assert_eq!(acceleration(&[1.0, 1.0, 1.0]), 0.0);
        let jk = [0.0, 0.0, 0.0, 3.0];
        // mean 0.75; d = 0.75 ×3, −2.25: Σd² = 6.75, Σd³ = 3·0.421875 − 11.390625 = −10.125.
        let want = -10.125 / (6.0 * libm::pow(6.75, 1.5));
        assert!((acceleration(&jk) - want).abs() < 1e-15);
        assert!((acceleration_multi(&[&jk]) - want).abs() < 1e-12);
    }
}
