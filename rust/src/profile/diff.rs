//! The per-key comparison over captures.
//!
//! For key j, side s holds one value per capture (its total time in that capture; 0 when the key is
//! absent). The effect is mean(candidate) − mean(baseline) in ns, and 100·(mean(c)/mean(b) − 1) in
//! percent. With k ≥ 2 captures per side:
//! - **CI**: percentile bootstrap over captures. Unpaired: each side's captures are resampled on their
//!   own; paired (captures interleaved in pairs, equal counts): pair indices are resampled. Key j draws
//!   its replicates in order from one `gpuopt.rng/v1` stream ("profile_diff", seed, key name), so a key's
//!   CI does not depend on which other keys are in the diff, nor on the thread count (one key's replicates
//!   run on one thread; one stream per key, not per replicate: a replicate of k captures is ~k draws,
//!   far cheaper than deriving a key).
//! - **p-value**: Welch's t test (unpaired) or the paired t test of the per-capture totals.
//! - **q-value**: Benjamini–Hochberg over every tested key; a key is flagged when q ≤ the declared
//!   false-discovery rate and its change reaches the minimum effect.

use super::codes;
use crate::error::{Error, Result};
use crate::stats::bootstrap;
use crate::stats::fdr::benjamini_hochberg;
use crate::stats::rng::{Part, Stream};
use crate::stats::student::{paired_p, welch_p};
use rayon::prelude::*;
use serde::Deserialize;

/// Per-key values: `baseline[j * k_baseline + i]` is key j in baseline capture i (row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyMatrix {
    pub keys: Vec<String>,
    pub baseline: Vec<f64>,
    pub k_baseline: usize,
    pub candidate: Vec<f64>,
    pub k_candidate: usize,
}

/// How to compare.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffOptions {
    pub paired: bool,
    pub confidence: f64,
    pub resamples: usize,
    pub seed: u64,
    /// The declared false-discovery rate (BH level).
    pub fdr: f64,
    /// |change %| below this is never flagged.
    pub min_effect_pct: f64,
}

/// The comparison of one key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeyDiff {
    pub baseline_mean: f64,
    pub candidate_mean: f64,
    pub change: f64,
    pub change_pct: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    pub p_value: Option<f64>,
    pub q_value: Option<f64>,
    pub flagged: bool,
}

fn invalid(message: String) -> Error {
    Error::input(codes::PROFILE_DIFF_INVALID, message)
}

impl DiffOptions {
    fn validate(&self) -> Result<()> {
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(invalid(format!(
                "confidence {} is not in (0, 1)",
                self.confidence
            )));
        }
        if !(self.fdr > 0.0 && self.fdr < 1.0) {
            return Err(invalid(format!("fdr {} is not in (0, 1)", self.fdr)));
        }
        if self.resamples < 100 {
            return Err(invalid(format!(
                "resamples {} is below 100",
                self.resamples
            )));
        }
        if !(self.min_effect_pct >= 0.0 && self.min_effect_pct.is_finite()) {
            return Err(invalid(format!(
                "min_effect_pct {} is not ≥ 0",
                self.min_effect_pct
            )));
        }
        Ok(())
    }
}

impl KeyMatrix {
    fn validate(&self, paired: bool) -> Result<()> {
        let n = self.keys.len();
        if self.k_baseline == 0 || self.k_candidate == 0 {
            return Err(invalid("each side needs at least one capture".to_string()));
        }
        for (side, values, k) in [
            ("baseline", &self.baseline, self.k_baseline),
            ("candidate", &self.candidate, self.k_candidate),
        ] {
            if values.len() != n * k {
                return Err(invalid(format!(
                    "{side} holds {} values for {n} keys × {k} captures",
                    values.len()
                )));
            }
            if let Some(bad) = values.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
                return Err(invalid(format!(
                    "{side} holds {bad}: values are finite and ≥ 0"
                )));
            }
        }
        if paired && self.k_baseline != self.k_candidate {
            return Err(Error::input(
                codes::PROFILE_PAIRS_UNEQUAL,
                "paired captures need as many candidate captures as baseline captures",
            )
            .with_expected(format!("{} candidate captures", self.k_baseline))
            .with_observed(format!("{} candidate captures", self.k_candidate)));
        }
        Ok(())
    }
}

fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x.iter().sum::<f64>() / x.len() as f64
    }
}

/// (change, change %) replicates of one key.
fn replicates(name: &str, b: &[f64], c: &[f64], options: &DiffOptions) -> (Vec<f64>, Vec<f64>) {
    let mut stream = Stream::new("profile_diff", &[Part::Int(options.seed), Part::Str(name)]);
    let (kb, kc) = (b.len() as u64, c.len() as u64);
    let mut change = Vec::with_capacity(options.resamples);
    let mut pct = Vec::with_capacity(options.resamples);
    for _ in 0..options.resamples {
        let (mut sb, mut sc) = (0.0, 0.0);
        if options.paired {
            for _ in 0..kb {
                let i = stream.below(kb) as usize;
                sb += b.get(i).copied().unwrap_or(0.0);
                sc += c.get(i).copied().unwrap_or(0.0);
            }
        } else {
            for _ in 0..kb {
                sb += b.get(stream.below(kb) as usize).copied().unwrap_or(0.0);
            }
            for _ in 0..kc {
                sc += c.get(stream.below(kc) as usize).copied().unwrap_or(0.0);
            }
        }
        let (mb, mc) = (sb / kb as f64, sc / kc as f64);
        change.push(mc - mb);
        if mb > 0.0 {
            pct.push(100.0 * (mc / mb - 1.0));
        }
    }
    (change, pct)
}

fn one_key(name: &str, b: &[f64], c: &[f64], options: &DiffOptions) -> KeyDiff {
    let (mb, mc) = (mean(b), mean(c));
    let mut out = KeyDiff {
        baseline_mean: mb,
        candidate_mean: mc,
        change: mc - mb,
        change_pct: (mb > 0.0).then(|| 100.0 * (mc / mb - 1.0)),
        ..KeyDiff::default()
    };
    if b.len() < 2 || c.len() < 2 {
        return out;
    }
    out.p_value = if options.paired {
        paired_p(b, c)
    } else {
        welch_p(b, c)
    };
    let (mut change, mut pct) = replicates(name, b, c, options);
    bootstrap::sort(&mut change);
    if let Some((low, high)) = bootstrap::percentile(&change, options.confidence) {
        out.ci_low = Some(low);
        out.ci_high = Some(high);
    }
    // A percent CI only when every baseline capture holds the key (else some replicates divide by 0).
    if b.iter().all(|v| *v > 0.0) && pct.len() == options.resamples {
        bootstrap::sort(&mut pct);
        if let Some((low, high)) = bootstrap::percentile(&pct, options.confidence) {
            out.ci_low_pct = Some(low);
            out.ci_high_pct = Some(high);
        }
    }
    out
}

/// Compares every key (keys in parallel; the numbers do not depend on the thread count).
pub fn diff(matrix: &KeyMatrix, options: &DiffOptions) -> Result<Vec<KeyDiff>> {
    options.validate()?;
    matrix.validate(options.paired)?;
    let (kb, kc) = (matrix.k_baseline, matrix.k_candidate);
    let mut out: Vec<KeyDiff> = matrix
        .keys
        .par_iter()
        .zip(matrix.baseline.par_chunks(kb))
        .zip(matrix.candidate.par_chunks(kc))
        .map(|((name, b), c)| one_key(name, b, c, options))
        .collect();
    let p: Vec<Option<f64>> = out.iter().map(|d| d.p_value).collect();
    for (d, q) in out.iter_mut().zip(benjamini_hochberg(&p)) {
        d.q_value = q;
        let large_enough = d
            .change_pct
            .is_none_or(|pct| pct.abs() >= options.min_effect_pct);
        d.flagged = q.is_some_and(|q| q <= options.fdr) && large_enough;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(paired: bool) -> DiffOptions {
        DiffOptions {
            paired,
            confidence: 0.95,
            resamples: 2000,
            seed: 7,
            fdr: 0.05,
            min_effect_pct: 0.0,
        }
    }

    fn matrix(keys: &[&str], b: Vec<f64>, kb: usize, c: Vec<f64>, kc: usize) -> KeyMatrix {
        KeyMatrix {
            keys: keys.iter().map(|k| (*k).to_string()).collect(),
            baseline: b,
            k_baseline: kb,
            candidate: c,
            k_candidate: kc,
        }
    }

    #[test]
    fn a_changed_key_is_flagged_and_an_unchanged_one_is_not() {
        let m = matrix(
            &["fast", "same"],
            vec![
                100.0, 102.0, 98.0, 101.0, 99.0, 50.0, 51.0, 49.0, 50.5, 49.5,
            ],
            5,
            vec![60.0, 61.0, 59.0, 60.5, 59.5, 50.2, 49.8, 50.9, 49.1, 50.0],
            5,
        );
        let out = diff(&m, &options(false)).unwrap_or_default();
        let (fast, same) = (&out[0], &out[1]);
        assert!((fast.change - (-40.0)).abs() < 1e-12);
        assert!((fast.change_pct.unwrap_or(0.0) - (-40.0)).abs() < 1e-12);
        assert!(fast.ci_high.unwrap_or(0.0) < 0.0 && fast.flagged);
        assert!(same.ci_low.unwrap_or(1.0) < 0.0 && same.ci_high.unwrap_or(-1.0) > 0.0);
        assert!(!same.flagged);
        // BH with m = 2: the larger p keeps its value, the smaller is doubled unless that exceeds it.
        let (p0, p1) = (fast.p_value.unwrap_or(1.0), same.p_value.unwrap_or(0.0));
        assert!((same.q_value.unwrap_or(0.0) - p1).abs() < 1e-15);
        assert!((fast.q_value.unwrap_or(1.0) - (2.0 * p0).min(p1)).abs() < 1e-15);
    }

    #[test]
    fn one_capture_per_side_has_no_uncertainty() {
        let m = matrix(&["k"], vec![10.0], 1, vec![5.0], 1);
        let out = diff(&m, &options(false)).unwrap_or_default();
        assert_eq!(out[0].change, -5.0);
        assert_eq!(
            (out[0].ci_low, out[0].p_value, out[0].flagged),
            (None, None, false)
        );
    }

    #[test]
    fn a_key_keeps_its_ci_whatever_else_is_in_the_diff() {
        let one = matrix(&["k"], vec![1.0, 2.0, 3.0], 3, vec![2.0, 3.0, 5.0], 3);
        let two = matrix(
            &["other", "k"],
            vec![9.0, 9.0, 9.5, 1.0, 2.0, 3.0],
            3,
            vec![9.0, 8.0, 9.5, 2.0, 3.0, 5.0],
            3,
        );
        for paired in [false, true] {
            let a = diff(&one, &options(paired)).unwrap_or_default();
            let b = diff(&two, &options(paired)).unwrap_or_default();
            assert_eq!(a[0].ci_low, b[1].ci_low);
            assert_eq!(a[0].ci_high_pct, b[1].ci_high_pct);
        }
    }

    #[test]
    fn the_numbers_do_not_depend_on_the_thread_count() {
        let names: Vec<String> = (0..64).map(|j| format!("k{j}")).collect();
        let mut stream = Stream::new("test_threads", &[Part::Int(3)]);
        let mut draw = || {
            (0..64 * 4)
                .map(|_| 1000.0 + 50.0 * stream.normal())
                .collect::<Vec<_>>()
        };
        let m = KeyMatrix {
            keys: names,
            baseline: draw(),
            k_baseline: 4,
            candidate: draw(),
            k_candidate: 4,
        };
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map(|pool| pool.install(|| diff(&m, &options(true)).unwrap_or_default()))
                .unwrap_or_default()
        };
        let (one, four) = (run(1), run(4));
        assert_eq!(one.len(), 64);
        for (a, b) in one.iter().zip(&four) {
            assert_eq!(
                (a.ci_low, a.ci_high, a.q_value),
                (b.ci_low, b.ci_high, b.q_value)
            );
        }
    }

    #[test]
    fn paired_resampling_keeps_pairs_together() {
        // Captures drift together: pairs differ by exactly +1 each, so every paired replicate is +1.
        let m = matrix(
            &["k"],
            vec![10.0, 20.0, 30.0, 40.0],
            4,
            vec![11.0, 21.0, 31.0, 41.0],
            4,
        );
        let out = diff(&m, &options(true)).unwrap_or_default();
        assert_eq!((out[0].ci_low, out[0].ci_high), (Some(1.0), Some(1.0)));
        assert_eq!(out[0].p_value, Some(0.0));
        let unpaired = diff(&m, &options(false)).unwrap_or_default();
        assert!(unpaired[0].ci_low.unwrap_or(0.0) < 0.0);
    }

    #[test]
    fn aa_diffs_flag_anything_at_most_at_the_declared_rate() {
        // The complete null: 100 keys whose per-capture totals are all N(1000, 50²) on both sides,
        // k = 5 a side, 100 simulated diffs. BH at 5 % bounds P(any flag) by 5 %; the binomial(100,
        // 0.05) count exceeds 11 with probability < 0.5 %.
        let keys: Vec<String> = (0..100).map(|j| format!("k{j}")).collect();
        let mut stream = Stream::new("test_aa", &[Part::Int(1)]);
        let mut any = 0;
        for run in 0..200u64 {
            let mut draw = || {
                (0..200 * 5)
                    .map(|_| 1000.0 + 50.0 * stream.normal())
                    .collect::<Vec<_>>()
            };
            let m = KeyMatrix {
                keys: keys.clone(),
                baseline: draw(),
                k_baseline: 5,
                candidate: draw(),
                k_candidate: 5,
            };
            let o = DiffOptions {
                resamples: 100,
                seed: run,
                ..options(false)
            };
            let out = diff(&m, &o).unwrap_or_default();
            any += usize::from(out.iter().any(|d| d.flagged));
        }
        assert!(any <= 11, "{any} of 100 A/A diffs flagged a key");
    }

    #[test]
    fn bad_shapes_and_options_are_typed_errors() {
        let m = matrix(&["k"], vec![1.0, 2.0], 2, vec![1.0, 2.0, 3.0], 3);
        let err = diff(&m, &options(true)).err();
        assert_eq!(err.map(|e| e.code), Some(codes::PROFILE_PAIRS_UNEQUAL));
        let bad = matrix(&["k"], vec![1.0], 2, vec![1.0, 2.0], 2);
        assert_eq!(
            diff(&bad, &options(false)).err().map(|e| e.code),
            Some(codes::PROFILE_DIFF_INVALID)
        );
        let mut o = options(false);
        o.fdr = 1.5;
        assert!(diff(&m, &o).is_err());
    }
}
