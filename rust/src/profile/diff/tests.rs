//! The per-key comparison on simulated and timer-grid captures: flags, intervals, pairs and bad input.

use super::*;
use crate::stats::rng::{Part, Stream};

fn options(paired: bool) -> DiffOptions {
    DiffOptions {
        paired,
        fdr: 0.05,
        min_effect_pct: 0.0,
        family: Family::Keys,
    }
}

fn matrix(keys: &[&str], b: Vec<f64>, kb: usize, c: Vec<f64>, kc: usize) -> KeyMatrix {
    KeyMatrix {
        keys: keys.iter().map(|k| (*k).to_string()).collect(),
        baseline: b,
        k_baseline: kb,
        candidate: c,
        k_candidate: kc,
        baseline_rounding: Vec::new(),
        candidate_rounding: Vec::new(),
    }
}

/// `keys` keys × k captures a side of N(1000, 50²), the first `changed` keys 20 % lower on the
/// candidate side.
fn simulated(stream: &mut Stream, keys: usize, changed: usize, k: usize) -> KeyMatrix {
    let names: Vec<String> = (0..keys).map(|j| format!("k{j}")).collect();
    let baseline = (0..keys * k)
        .map(|_| 1000.0 + 50.0 * stream.normal())
        .collect();
    let candidate = (0..keys * k)
        .map(|i| {
            let shift = if i / k < changed { 800.0 } else { 1000.0 };
            shift + 50.0 * stream.normal()
        })
        .collect();
    KeyMatrix {
        keys: names,
        baseline,
        k_baseline: k,
        candidate,
        k_candidate: k,
        baseline_rounding: Vec::new(),
        candidate_rounding: Vec::new(),
    }
}

fn excludes_zero(d: &KeyDiff) -> bool {
    d.ci_low.is_some_and(|l| l > 0.0) || d.ci_high.is_some_and(|h| h < 0.0)
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
    assert!(fast.ci_high_pct.unwrap_or(0.0) < 0.0);
    assert!(same.ci_low.unwrap_or(1.0) < 0.0 && same.ci_high.unwrap_or(-1.0) > 0.0);
    assert!(!same.flagged);
    // BH with m = 2: the larger p keeps its value, the smaller is doubled unless that exceeds it.
    let (p0, p1) = (fast.p_value.unwrap_or(1.0), same.p_value.unwrap_or(0.0));
    assert!((same.q_value.unwrap_or(0.0) - p1).abs() < 1e-15);
    assert!((fast.q_value.unwrap_or(1.0) - (2.0 * p0).min(p1)).abs() < 1e-15);
    // One discovery among two tested keys: both intervals at 1 − 1·0.05/2.
    assert_eq!(fast.ci_level, Some(0.975));
    assert_eq!(same.ci_level, Some(0.975));
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
fn a_flag_and_its_interval_always_tell_the_same_story() {
    let mut stream = Stream::new("test_agree", &[Part::Int(5)]);
    for (run, k) in (0..60).zip([2, 3, 4, 5, 8].iter().cycle()) {
        let m = simulated(&mut stream, 40, run % 7, *k);
        for paired in [false, true] {
            let out = diff(&m, &options(paired)).unwrap_or_default();
            for d in &out {
                assert_eq!(d.flagged, excludes_zero(d), "{d:?}");
                if let (Some(lo), Some(hi)) = (d.ci_low_pct, d.ci_high_pct) {
                    assert_eq!(lo > 0.0 || hi < 0.0, d.flagged, "{d:?}");
                }
            }
        }
    }
}

#[test]
fn single_intervals_cover_at_their_level_even_at_two_captures() {
    // 4,000 null rows (no change) at k = 2 and k = 3 a side, each its own test at 95 %: the paired
    // interval excludes 0 in 5 % of them (exact under normality; binomial sd 0.34 %), Welch's in at
    // most 5 % (conservative at small k: 2.3 % at k = 2). A percentile bootstrap over two values
    // excludes 0 about half the time.
    let mut stream = Stream::new("test_cover", &[Part::Int(2)]);
    for k in [2, 3] {
        for paired in [false, true] {
            let m = simulated(&mut stream, 4000, 0, k);
            let o = DiffOptions {
                family: Family::Each,
                ..options(paired)
            };
            let out = diff(&m, &o).unwrap_or_default();
            let misses = out.iter().filter(|d| excludes_zero(d)).count();
            let low = if paired { 140 } else { 40 };
            assert!(
                (low..=260).contains(&misses),
                "k {k} paired {paired}: {misses}"
            );
            assert!(out
                .iter()
                .all(|d| d.q_value.is_none() && d.ci_level == Some(0.95)));
        }
    }
}

#[test]
fn a_key_keeps_its_change_whatever_else_is_in_the_diff() {
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
        assert_eq!((a[0].change, a[0].p_value), (b[1].change, b[1].p_value));
    }
}

#[test]
fn the_numbers_do_not_depend_on_the_thread_count() {
    let mut stream = Stream::new("test_threads", &[Part::Int(3)]);
    let m = simulated(&mut stream, 64, 5, 4);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map(|pool| pool.install(|| diff(&m, &options(true)).unwrap_or_default()))
            .unwrap_or_default()
    };
    let (one, four) = (run(1), run(4));
    assert_eq!(one.len(), 64);
    assert_eq!(one, four);
}

#[test]
fn paired_tests_keep_pairs_together() {
    // Captures drift together and each pair differs by about +1: paired, a clear change; unpaired,
    // the drift hides it.
    let m = matrix(
        &["k"],
        vec![10.0, 20.0, 30.0, 40.0],
        4,
        vec![11.0, 21.2, 30.9, 41.1],
        4,
    );
    let out = diff(&m, &options(true)).unwrap_or_default();
    assert!(out[0].ci_low.unwrap_or(0.0) > 0.5 && out[0].flagged);
    let unpaired = diff(&m, &options(false)).unwrap_or_default();
    assert!(unpaired[0].ci_low.unwrap_or(0.0) < 0.0 && !unpaired[0].flagged);
}

#[test]
fn aa_diffs_flag_anything_at_most_at_the_declared_rate() {
    // The complete null: 100 keys whose per-capture totals are all N(1000, 50²) on both sides,
    // k = 5 a side, 200 simulated diffs. BH at 5 % bounds P(any flag) by 5 %; the binomial(200,
    // 0.05) count exceeds 19 with probability < 0.5 %.
    let mut stream = Stream::new("test_aa", &[Part::Int(1)]);
    let mut any = 0;
    for _ in 0..200 {
        let m = simulated(&mut stream, 100, 0, 5);
        let out = diff(&m, &options(false)).unwrap_or_default();
        any += usize::from(out.iter().any(|d| d.flagged || excludes_zero(d)));
    }
    assert!(any <= 19, "{any} of 200 A/A diffs flagged a key");
}

/// k captures a side of one key run once per capture, on a 32 ns timer grid: `b` and `c` its
/// durations, the rounding variance of one instance (q²/6) on every value.
fn on_grid(b: Vec<f64>, c: Vec<f64>) -> KeyMatrix {
    let one = crate::profile::timer::rounding_variance(1.0, 32.0, 1.0);
    let (kb, kc) = (b.len(), c.len());
    KeyMatrix {
        baseline_rounding: vec![one; kb],
        candidate_rounding: vec![one; kc],
        ..matrix(&["gather"], b, kb, c, kc)
    }
}

#[test]
fn equal_paired_differences_on_the_timer_grid_are_not_significant() {
    // vectorized_gather_kernel of the H100 decode captures: 3136 → 3168 and 3104 → 3136 ns, both
    // pairs +32 ns (one tick). Without the floor the spread of the differences is 0 and p = 0.
    let (b, c) = (vec![3136.0, 3104.0], vec![3168.0, 3136.0]);
    let bare = diff(
        &matrix(&["gather"], b.clone(), 2, c.clone(), 2),
        &options(true),
    )
    .unwrap_or_default();
    assert_eq!((bare[0].p_value, bare[0].flagged), (Some(0.0), true));
    for paired in [true, false] {
        let out = diff(&on_grid(b.clone(), c.clone()), &options(paired)).unwrap_or_default();
        let d = &out[0];
        assert!(!d.flagged && !excludes_zero(d), "paired {paired}: {d:?}");
        assert!(d.p_value.unwrap_or(0.0) > 0.2, "{d:?}");
        // The floor: Var(difference) ≥ 2·32²/6, se = √(that / 2) = 32/√6.
        if paired {
            let half = d.ci_high.unwrap_or(0.0) - d.change;
            let t = crate::stats::student::t_critical(0.05, 1.0);
            assert!((half - t * 32.0 / 6f64.sqrt()).abs() < 1e-9, "{half}");
        }
    }
    // Three pairs, each +32 ns: still one tick, still not significant at 5 %.
    let out = diff(
        &on_grid(vec![3136.0, 3104.0, 3136.0], vec![3168.0, 3136.0, 3168.0]),
        &options(true),
    )
    .unwrap_or_default();
    assert!(!out[0].flagged, "{:?}", out[0]);
}

#[test]
fn a_large_change_on_the_timer_grid_is_still_flagged() {
    // The same kernel 40 % faster in both pairs (−1248 ns, 39 ticks): flagged, its interval and
    // its percent interval below 0.
    for paired in [true, false] {
        let m = on_grid(vec![3136.0, 3104.0], vec![1888.0, 1856.0]);
        let out = diff(&m, &options(paired)).unwrap_or_default();
        let d = &out[0];
        assert!(d.flagged && d.ci_high.unwrap_or(0.0) < 0.0, "{d:?}");
        assert!(d.ci_high_pct.unwrap_or(0.0) < 0.0, "{d:?}");
    }
}

#[test]
fn the_floor_leaves_a_spread_larger_than_it_alone() {
    // Spread of thousands of ns against a rounding sd of 13 ns: the floor does not bind and the
    // numbers are those of the bare test.
    let (b, c) = (
        vec![100_000.0, 104_000.0, 98_000.0],
        vec![101_000.0, 99_000.0, 103_500.0],
    );
    for paired in [true, false] {
        let bare = diff(
            &matrix(&["k"], b.clone(), 3, c.clone(), 3),
            &options(paired),
        );
        let floored = diff(&on_grid(b.clone(), c.clone()), &options(paired));
        assert_eq!(bare.ok(), floored.ok());
    }
}

#[test]
fn a_flag_and_its_interval_agree_with_the_floor_binding() {
    // Values on a 32 ns grid, many with zero spread: flags, ns and percent intervals agree.
    let mut stream = Stream::new("test_floor_agree", &[Part::Int(1)]);
    for k in [2, 3, 4] {
        for paired in [false, true] {
            let grid = |x: f64| 32.0 * (x / 32.0).round();
            let base: Vec<f64> = (0..40_u32).map(|j| 3000.0 + 500.0 * f64::from(j)).collect();
            let keys = base.len();
            let b: Vec<f64> = (0..keys * k)
                .map(|i| grid(base[i / k] + 20.0 * stream.normal()))
                .collect();
            let c: Vec<f64> = (0..keys * k)
                .map(|i| {
                    let shift = if i / k < 5 { 0.7 } else { 1.0 };
                    grid(shift * base[i / k] + 20.0 * stream.normal())
                })
                .collect();
            let one = crate::profile::timer::rounding_variance(1.0, 32.0, 1.0);
            let m = KeyMatrix {
                keys: (0..keys).map(|j| format!("k{j}")).collect(),
                baseline: b,
                k_baseline: k,
                candidate: c,
                k_candidate: k,
                baseline_rounding: vec![one; keys * k],
                candidate_rounding: vec![one; keys * k],
            };
            let out = diff(&m, &options(paired)).unwrap_or_default();
            for d in &out {
                assert_eq!(d.flagged, excludes_zero(d), "{d:?}");
                if let (Some(lo), Some(hi)) = (d.ci_low_pct, d.ci_high_pct) {
                    assert_eq!(lo > 0.0 || hi < 0.0, d.flagged, "{d:?}");
                }
            }
        }
    }
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
    let short = KeyMatrix {
        baseline_rounding: vec![1.0],
        ..matrix(&["k"], vec![1.0, 2.0], 2, vec![1.0, 2.0], 2)
    };
    assert!(diff(&short, &options(false)).is_err());
    let mut o = options(false);
    o.fdr = 1.5;
    assert!(diff(&m, &o).is_err());
}
