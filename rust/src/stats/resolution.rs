//! The normal approximations that turn a spread of pair log ratios into what it can resolve: the CI
//! half-width and the minimum detectable effect at n pairs, and the pairs a minimum effect needs. With
//! z_c = Φ⁻¹(1 − α/2), z_p = Φ⁻¹(power), and k = 1 for the mean or √(π/2) for the median: h(n) =
//! z_c·k·s/√n, MDE(n) = (z_c + z_p)·k·s/√n, pairs for τ = ⌈((z_c + z_p)·k·s/τ)²⌉. `compare` (a comparison's
//! own spread and its resolution against a noise SD), `noise` (the A/A report) and `simulate` share it.

use super::estimators::Estimator;
use super::normal;

/// The label of every normal-approximation figure.
pub const METHOD: &str = "normal_approx";

/// Half-width and MDE as functions of n for one SD.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolving {
    pub sd: f64,
    pub k: f64,
    pub z_confidence: f64,
    pub z_power: f64,
}

impl Resolving {
    pub fn new(sd: f64, estimator: Estimator, confidence: f64, power: f64) -> Self {
        let k = match estimator {
            Estimator::Mean => 1.0,
            Estimator::Median => (std::f64::consts::PI / 2.0).sqrt(),
        };
        Self {
            sd,
            k,
            z_confidence: normal::inverse_cdf(1.0 - (1.0 - confidence) / 2.0),
            z_power: normal::inverse_cdf(power),
        }
    }

    /// The CI half-width (log scale) at n pairs.
    pub fn half_width(&self, n: usize) -> f64 {
        self.z_confidence * self.k * self.sd / (n.max(1) as f64).sqrt()
    }

    /// The minimum detectable effect (log scale) at n pairs.
    pub fn mde(&self, n: usize) -> f64 {
        (self.z_confidence + self.z_power) * self.k * self.sd / (n.max(1) as f64).sqrt()
    }

    /// Pairs needed to detect `tau` (> 0) with the power; `None` for τ = 0.
    pub fn pairs_for(&self, tau: f64) -> Option<u64> {
        if tau <= 0.0 {
            return None;
        }
        let x = (self.z_confidence + self.z_power) * self.k * self.sd / tau;
        let pairs = (x * x).ceil().max(1.0);
        (pairs.is_finite() && pairs < 1e15).then_some(pairs as u64)
    }
}
