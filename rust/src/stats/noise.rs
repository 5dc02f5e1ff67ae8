//! Noise from A/A pairs (the original against itself): the spread of the pair log ratios, the CI
//! half-width it predicts at n pairs and the minimum detectable effect at a given power. Normal
//! approximations (`method: normal_approx`): with z_c = Φ⁻¹(1 − α/2), z_p = Φ⁻¹(power), and k = 1 for the
//! mean or √(π/2) for the median, half-width h(n) = z_c·k·s/√n, MDE(n) = (z_c + z_p)·k·s/√n, and the pairs
//! for a minimum effect τ are ⌈((z_c + z_p)·k·s/τ)²⌉. Each figure is given twice: from the SD s (the
//! specification's basis) and from the robust SD 1.4826·MAD. With a few outlying pairs the SD
//! overstates what a median can resolve; the simulation harness shows which basis is calibrated.

use super::codes;
use super::compare::{self, Comparison, PairRow, PairedInput, Warning};
use super::estimators::{self, Estimator};
use super::options::CompareOptions;
use super::resample::Parallelism;
use super::resolution::{Resolving, METHOD};
use super::verdict::Verdict;
use crate::error::{Error, Result};
use serde::Serialize;

/// Resolution at one pair count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoiseAt {
    pub n_pairs: usize,
    pub half_width_log: f64,
    pub half_width_pct: f64,
    pub mde_log: f64,
    pub mde_pct: f64,
    /// The same from the robust SD.
    pub robust_half_width_pct: f64,
    pub robust_mde_pct: f64,
}

/// What A/A pairs say about the measurement's noise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoiseReport {
    pub metric: String,
    pub n: usize,
    pub estimator: Estimator,
    pub mean_log: f64,
    pub median_log: f64,
    /// SD of the A/A log ratios (n − 1).
    pub sd_log: f64,
    /// 1.4826·MAD of the A/A log ratios.
    pub robust_sd_log: f64,
    /// The SD as a percentage, 100·(e^sd − 1).
    pub sd_pct: f64,
    pub confidence: f64,
    pub power: f64,
    pub k_factor: f64,
    pub z_confidence: f64,
    pub z_power: f64,
    pub method: &'static str,
    /// Half-width and MDE at each pair count asked for.
    pub at: Vec<NoiseAt>,
    pub minimum_effect_pct: f64,
    /// Pairs needed to detect the minimum effect (m > 0) with the power.
    pub pairs_for_minimum_effect: Option<u64>,
    /// The same from the robust SD (the better basis for a median when outliers inflate the SD).
    pub robust_pairs_for_minimum_effect: Option<u64>,
    /// The A/A comparison itself (m = 0): a CI excluding 0 means the two copies differ.
    pub aa: Comparison,
    pub warnings: Vec<Warning>,
}

/// A noise report and the A/A pairs' rows.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseOutcome {
    pub report: NoiseReport,
    pub rows: Vec<PairRow>,
}

/// Noise facts from A/A pairs. `at` lists pair counts to report (default: n, the minimum, 2n).
pub fn noise(input: &PairedInput, options: &CompareOptions, at: &[usize]) -> Result<NoiseOutcome> {
    let aa_options = CompareOptions {
        minimum_effect_pct: 0.0,
        noise_sd_log: None,
        ..options.clone()
    };
    if !options.effect_scale.is_log() {
        return Err(Error::input(
            codes::STATISTICS_INVALID,
            "noise is measured on the log-ratio scale",
        )
        .with_path("effect_scale")
        .with_expected("log_ratio"));
    }
    options.validate()?;
    let outcome = compare::compare_with(input, &aa_options, Parallelism::Rayon)?;
    let effects: Vec<f64> = outcome
        .rows
        .iter()
        .filter(|r| r.valid)
        .filter_map(|r| r.effect)
        .collect();
    let n = effects.len();
    let (Some(sd), Some(robust)) = (
        estimators::std_dev(&effects),
        estimators::robust_sd(&effects),
    ) else {
        return Err(Error::input(
            codes::NOISE_TOO_FEW_PAIRS,
            format!("noise needs at least 2 valid A/A pairs, got {n}"),
        )
        .with_expected("≥ 2 valid pairs")
        .with_observed(format!("{n} valid pairs")));
    };
    let sample = estimators::Sample::new(effects.clone());
    let resolving = Resolving::new(sd, options.estimator, options.confidence, options.power);
    let robust_resolving = Resolving {
        sd: robust,
        ..resolving
    };
    let mut counts: Vec<usize> = if at.is_empty() {
        vec![n, options.minimum_pairs, 2 * n]
    } else {
        at.to_vec()
    };
    counts.sort_unstable();
    counts.dedup();
    let at = counts
        .into_iter()
        .filter(|&k| k > 0)
        .map(|k| {
            let h = resolving.half_width(k);
            let mde = resolving.mde(k);
            NoiseAt {
                n_pairs: k,
                half_width_log: h,
                half_width_pct: 100.0 * libm::expm1(h),
                mde_log: mde,
                mde_pct: 100.0 * libm::expm1(mde),
                robust_half_width_pct: 100.0 * libm::expm1(robust_resolving.half_width(k)),
                robust_mde_pct: 100.0 * libm::expm1(robust_resolving.mde(k)),
            }
        })
        .collect();
    let aa = outcome.comparison;
    let mut warnings = Vec::new();
    if matches!(aa.verdict, Verdict::Improved | Verdict::Regressed) {
        warnings.push(Warning {
            code: codes::AA_EFFECT_DETECTED,
            message: format!(
                "the A/A comparison's CI excludes 0 ({:?}% to {:?}%): the two copies measure differently \
                 (order, drift or a systematic difference)",
                aa.effect.ci_low_pct.unwrap_or(f64::NAN),
                aa.effect.ci_high_pct.unwrap_or(f64::NAN)
            ),
        });
    }
    let report = NoiseReport {
        metric: options.metric.clone(),
        n,
        estimator: options.estimator,
        mean_log: sample.estimate(Estimator::Mean).unwrap_or(f64::NAN),
        median_log: sample.estimate(Estimator::Median).unwrap_or(f64::NAN),
        sd_log: sd,
        robust_sd_log: robust,
        sd_pct: 100.0 * libm::expm1(sd),
        confidence: options.confidence,
        power: options.power,
        k_factor: resolving.k,
        z_confidence: resolving.z_confidence,
        z_power: resolving.z_power,
        method: METHOD,
        at,
        minimum_effect_pct: options.minimum_effect_pct,
        pairs_for_minimum_effect: resolving.pairs_for(options.threshold()),
        robust_pairs_for_minimum_effect: robust_resolving.pairs_for(options.threshold()),
        aa,
        warnings,
    };
    Ok(NoiseOutcome {
        report,
        rows: outcome.rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mde_follows_the_normal_approximation() {
        // s = 2 %, mean: MDE(10) ≈ 2.80·0.02/√10 and (2.80·0.02/0.01)² ≈ 32 pairs for m = 1 %.
        let r = Resolving::new(0.02, Estimator::Mean, 0.95, 0.8);
        let want = (1.959_963_984_540_054 + 0.841_621_233_572_914_3) * 0.02 / 10f64.sqrt();
        assert!((r.mde(10) - want).abs() < 1e-15);
        assert_eq!(r.pairs_for(0.01), Some(32));
        assert_eq!(r.pairs_for(0.0), None);
        let m = Resolving::new(0.02, Estimator::Median, 0.95, 0.8);
        assert!((m.half_width(4) / r.half_width(4) - 1.253_314_137_315_500_3).abs() < 1e-12);
    }

    #[test]
    fn noise_report_from_aa_pairs() {
        let a: Vec<f64> = (0..30)
            .map(|i| 10.0 * (1.0 + ((i * 7) % 5) as f64 * 0.002))
            .collect();
        let b: Vec<f64> = (0..30)
            .map(|i| 10.0 * (1.0 + ((i * 3) % 5) as f64 * 0.002))
            .collect();
        let opts = CompareOptions {
            resamples: 1000,
            minimum_effect_pct: 1.0,
            ..CompareOptions::default()
        };
        let report = noise(&PairedInput::from_values(a, b), &opts, &[])
            .unwrap()
            .report;
        assert_eq!(report.n, 30);
        assert_eq!(
            report.at.iter().map(|x| x.n_pairs).collect::<Vec<_>>(),
            vec![10, 30, 60]
        );
        assert!(report.sd_log > 0.0 && report.pairs_for_minimum_effect.is_some());
        assert_eq!(report.aa.minimum_effect_pct, 0.0);
        let one = PairedInput::from_values(vec![1.0], vec![1.0]);
        assert_eq!(
            noise(&one, &opts, &[]).unwrap_err().code,
            codes::NOISE_TOO_FEW_PAIRS
        );
    }
}
