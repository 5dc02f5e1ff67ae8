use super::*;
use crate::stats::bootstrap::CiMethod;
use crate::stats::codes;
use crate::stats::options::CompareOptions;
use crate::stats::quantile::Calls;
use crate::stats::schedule::Order;
use crate::stats::verdict::{Verdict, VerdictReason};

fn options() -> CompareOptions {
    CompareOptions {
        resamples: 2000,
        minimum_pairs: 5,
        seed: 7,
        ..CompareOptions::default()
    }
}

#[test]
fn a_clear_speedup_is_improved() {
    let base: Vec<f64> = (0..40).map(|i| 10.0 + (i % 7) as f64 * 0.05).collect();
    let cand: Vec<f64> = base
        .iter()
        .enumerate()
        .map(|(i, b)| b * (0.8 + (i % 3) as f64 * 0.004))
        .collect();
    let out = compare(&PairedInput::from_values(base, cand), &options()).unwrap();
    let c = &out.comparison;
    assert_eq!(c.verdict, Verdict::Improved);
    assert_eq!(c.effect.n, 40);
    let est = c.effect.estimate_pct.unwrap();
    assert!(est > 24.0 && est < 25.1, "{est}");
    assert!(c.effect.ci_low_pct.unwrap() <= est && est <= c.effect.ci_high_pct.unwrap());
    assert_eq!(c.rng, "gpuopt.rng/v1");
    assert_eq!(out.rows.len(), 40);
}

#[test]
fn identical_pairs_give_a_point_ci_and_inconclusive_at_m_zero() {
    let v = vec![5.0; 12];
    let out = compare(&PairedInput::from_values(v.clone(), v), &options()).unwrap();
    let c = &out.comparison;
    assert_eq!(
        (c.effect.ci_low_log, c.effect.ci_high_log),
        (Some(0.0), Some(0.0))
    );
    assert_eq!(c.verdict, Verdict::Inconclusive);
    assert_eq!(c.pairs_needed_estimate, None);
    // With m > 0 a point CI at 0 is equivalent.
    let m = CompareOptions {
        minimum_effect_pct: 1.0,
        ..options()
    };
    let v = vec![5.0; 12];
    let out = compare(&PairedInput::from_values(v.clone(), v), &m).unwrap();
    assert_eq!(out.comparison.verdict, Verdict::Equivalent);
}

#[test]
fn too_few_pairs_never_reject() {
    let out = compare(
        &PairedInput::from_values(vec![1.0, 1.0, 1.0], vec![2.0, 2.1, 2.2]),
        &options(),
    )
    .unwrap();
    assert_eq!(out.comparison.verdict, Verdict::Inconclusive);
    assert_eq!(out.comparison.verdict_reason, VerdictReason::TooFewPairs);
    assert_eq!(out.comparison.pairs_needed_estimate, Some(5));
}

#[test]
fn bad_values_name_the_pair() {
    let mut input = PairedInput::from_values(vec![1.0, 2.0, 3.0], vec![1.0, -2.0, 3.0]);
    input.keys = Some(vec!["a".into(), "b".into(), "c".into()]);
    let err = compare(&input, &options()).unwrap_err();
    assert_eq!(err.code, codes::NONPOSITIVE_METRIC_VALUE);
    assert_eq!(err.path.as_deref(), Some("pairs[1].candidate"));
    assert!(
        err.message.contains("pair 1 (key \"b\")"),
        "{}",
        err.message
    );
    let nan = PairedInput::from_values(vec![1.0, f64::NAN], vec![1.0, 1.0]);
    assert_eq!(
        compare(&nan, &options()).unwrap_err().code,
        codes::NONFINITE_METRIC_VALUE
    );
    let short = PairedInput::from_values(vec![1.0, 2.0], vec![1.0]);
    assert_eq!(
        compare(&short, &options()).unwrap_err().code,
        codes::PAIR_COUNT_MISMATCH
    );
    // Issue 13.4: a subnormal sample overflowed every percentage to null (ValidationError, exit 1).
    let tiny = PairedInput::from_values(vec![1.0, 2.0, 3.0], vec![1.0, 4.9e-324, 3.0]);
    let err = compare(&tiny, &options()).unwrap_err();
    assert_eq!(err.code, codes::METRIC_RATIO_OUT_OF_RANGE);
    assert_eq!(err.path.as_deref(), Some("pairs[1]"));
    let wide = UnpairedInput {
        baseline: Calls::from_values(vec![1e-300, 1.0]),
        candidate: Calls::from_values(vec![1.0, 2.0]),
        blocks: None,
    };
    assert_eq!(
        compare_unpaired(&wide, &options()).unwrap_err().code,
        codes::METRIC_RATIO_OUT_OF_RANGE
    );
    // Right at the limit still compares, with finite percentages.
    let edge = PairedInput::from_values(vec![1.0, 1.0, 1.0], vec![1.0, 1e-9, 1e9]);
    let out = compare(&edge, &options()).unwrap();
    let spread = out.comparison.spread.unwrap();
    assert!(spread.mde_pct.is_finite() && spread.half_width_pct.is_finite());
    // An invalid pair is excluded, not checked.
    let mut skip = PairedInput::from_values(vec![1.0, 0.0, 3.0], vec![1.0, 2.0, 3.0]);
    skip.valid = Some(vec![true, false, true]);
    let out = compare(&skip, &options()).unwrap();
    assert_eq!((out.comparison.effect.n, out.comparison.n_invalid), (2, 1));
}

#[test]
fn orders_cases_and_tails() {
    let n = 20;
    let base: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..200)
                .map(|k| 10.0 + ((i * 31 + k * 17) % 23) as f64 * 0.01)
                .collect()
        })
        .collect();
    let cand: Vec<Vec<f64>> = base
        .iter()
        .map(|c| c.iter().map(|v| v * 0.9).collect())
        .collect();
    let mut input = PairedInput {
        baseline: Calls::from_nested(base).unwrap(),
        candidate: Calls::from_nested(cand).unwrap(),
        ..PairedInput::default()
    };
    input.orders = Some(
        (0..n)
            .map(|i| if i % 2 == 0 { Order::Ab } else { Order::Ba })
            .collect(),
    );
    input.cases = Some(Cases {
        case_of: (0..n).map(|i| i % 2).collect(),
        names: vec!["small".into(), "large".into()],
        weights: None,
    });
    let opts = CompareOptions {
        tails: true,
        ..options()
    };
    let c = compare(&input, &opts).unwrap().comparison;
    assert_eq!(c.per_case.len(), 2);
    assert_eq!(c.per_case[0].effect.n, 10);
    let orders = c.orders.unwrap();
    assert_eq!((orders.ab_pairs, orders.ba_pairs), (10, 10));
    assert!(orders.order_effect_pct.unwrap().abs() < 1e-9);
    assert_eq!(c.tails.len(), 2, "p50 and p95 computed");
    assert_eq!(c.tails_unavailable.len(), 1, "p99 needs 1000 samples");
    for t in &c.tails {
        assert!((t.effect.estimate_pct.unwrap() - 11.111_111).abs() < 1e-3);
    }
}

#[test]
fn unpaired_comparison_uses_the_same_ci_machinery() {
    let base: Vec<f64> = (0..60).map(|i| 10.0 + (i % 11) as f64 * 0.1).collect();
    let cand: Vec<f64> = (0..50).map(|i| 8.0 + (i % 13) as f64 * 0.1).collect();
    let input = UnpairedInput {
        baseline: Calls::from_values(base),
        candidate: Calls::from_values(cand),
        blocks: None,
    };
    let out = compare_unpaired(&input, &options()).unwrap();
    let c = &out.comparison;
    assert_eq!(c.pairing, "unpaired");
    assert_eq!(
        (c.n_baseline, c.n_candidate, c.effect.n),
        (Some(60), Some(50), 50)
    );
    assert_eq!(c.verdict, Verdict::Improved);
    assert!(c.effect.bca.unwrap().acceleration.is_some());
}

/// An A/A whose calls come from three processes per side, each process at its own level (1 % spread
/// inside a process, a few % between processes): rows are not independent.
fn processes_aa(resample: bool) -> UnpairedInput {
    let levels_b = [1.00, 1.06, 0.97];
    let levels_c = [1.04, 0.99, 1.08];
    let side = |levels: &[f64], first: usize| {
        let mut values = Vec::new();
        let mut block_of = Vec::new();
        for (b, level) in levels.iter().enumerate() {
            for i in 0..40 {
                values.push(1440.0 * level * (1.0 + 0.002 * (((i * 7) % 11) as f64 - 5.0)));
                block_of.push(b);
            }
        }
        let names = (first..first + levels.len())
            .map(|p| format!("p{p}"))
            .collect();
        let blocks = Blocks {
            block_of,
            names,
            column: "process".into(),
            resample,
        };
        (Calls::from_values(values), blocks)
    };
    let (baseline, b) = side(&levels_b, 0);
    let (candidate, c) = side(&levels_c, 3);
    UnpairedInput {
        baseline,
        candidate,
        blocks: Some(UnpairedBlocks {
            baseline: b,
            candidate: c,
        }),
    }
}

#[test]
fn unpaired_blocks_that_disagree_warn_and_their_bootstrap_widens_the_ci() {
    let rows = compare_unpaired(&processes_aa(false), &options())
        .unwrap()
        .comparison;
    assert_eq!(rows.verdict, Verdict::Regressed, "rows as if independent");
    assert!(rows
        .warnings
        .iter()
        .any(|w| w.code == codes::DEPENDENT_SAMPLES_SUSPECTED));
    let facts = rows.blocks.as_ref().unwrap();
    assert_eq!(
        (facts.blocks, facts.resampled, facts.disagree),
        (6, false, true)
    );
    let sides: Vec<_> = rows
        .per_block
        .iter()
        .map(|b| (b.side, b.effect.n))
        .collect();
    assert_eq!(sides.len(), 6);
    assert_eq!(sides[0], (Some("baseline"), 40));
    assert_eq!(sides[5], (Some("candidate"), 40));
    let blocked = compare_unpaired(&processes_aa(true), &options())
        .unwrap()
        .comparison;
    assert_eq!(blocked.effect.estimate_pct, rows.effect.estimate_pct);
    assert_eq!(blocked.effect.ci_method_run, Some(CiMethod::Percentile));
    let (low, high) = (
        blocked.effect.ci_low_pct.unwrap(),
        blocked.effect.ci_high_pct.unwrap(),
    );
    assert!(low < 0.0 && high > 0.0, "[{low}, {high}]");
    assert_eq!(blocked.verdict, Verdict::Inconclusive);
    assert!(!blocked
        .warnings
        .iter()
        .any(|w| w.code == codes::DEPENDENT_SAMPLES_SUSPECTED));
    // Seeded: the same input gives the same interval.
    let again = compare_unpaired(&processes_aa(true), &options()).unwrap();
    assert_eq!(again.comparison.effect, blocked.effect);
}

#[test]
fn an_unpaired_side_of_one_block_warns_and_its_block_bootstrap_gives_no_ci() {
    let mut input = processes_aa(true);
    if let Some(b) = input.blocks.as_mut() {
        b.baseline.block_of = vec![0; 120];
        b.baseline.names = vec!["p0".into()];
    }
    let c = compare_unpaired(&input, &options()).unwrap().comparison;
    assert_eq!(c.effect.ci_low_pct, None);
    assert_eq!(
        (c.verdict, c.verdict_reason),
        (Verdict::Inconclusive, VerdictReason::TooFewPairs)
    );
    let few: Vec<_> = c
        .warnings
        .iter()
        .filter(|w| w.code == codes::BLOCKS_TOO_FEW)
        .collect();
    assert_eq!(few.len(), 1);
    assert!(few[0]
        .message
        .starts_with("the baseline's calls come from 1 block"));
    // A block list that does not match the side's calls is refused.
    if let Some(b) = input.blocks.as_mut() {
        b.candidate.block_of.pop();
    }
    let err = compare_unpaired(&input, &options()).unwrap_err();
    assert_eq!(err.code, codes::PAIR_COUNT_MISMATCH);
    assert_eq!(err.path.as_deref(), Some("blocks.candidate"));
}
