//! Timing harness for the paired bootstrap (run by hand; no timing assertions):
//! `cargo bench --bench stats_timing` (both parts) or `cargo bench --bench stats_timing -- once` (one
//! sequential comparison, a profiling target for `valgrind --tool=callgrind`).
//! The data mimic `benchmarks/stats_bench.py`: 1 000 log ratios, 10 000 BCa replicates of the median.

use _native::stats::compare::{bootstrap_prefix, compare_with, PairedInput};
use _native::stats::estimators::{Estimator, Sample};
use _native::stats::options::CompareOptions;
use _native::stats::resample::{replicates, replicates_batched, Parallelism};
use _native::stats::rng::{Part, Stream};
use std::time::{Duration, Instant};

fn bench_input(n: usize) -> PairedInput {
    let mut s = Stream::new("timing", &[Part::Int(12345)]);
    let base: Vec<f64> = (0..n).map(|_| 10.0 * (0.05 * s.normal()).exp()).collect();
    let cand: Vec<f64> = base
        .iter()
        .map(|b| b / (0.01 + 0.02 * s.exponential() * 0.5 + 0.01 * s.exponential() * 0.5).exp())
        .collect();
    PairedInput::from_values(base, cand)
}

fn best(rounds: usize, mut f: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn pool(threads: usize) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build()
}

fn paired_bootstrap_phases() -> Result<(), Box<dyn std::error::Error>> {
    let input = bench_input(1000);
    let effects: Vec<f64> = input
        .baseline
        .samples()
        .iter()
        .zip(input.candidate.samples())
        .map(|(b, c)| (b / c).ln())
        .collect();
    let sample = Sample::new(effects);
    let options = CompareOptions {
        resamples: 10_000,
        seed: 1,
        ..CompareOptions::default()
    };
    let prefix = bootstrap_prefix(&options, &[]);
    let rounds = std::env::var("TIMING_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    let keys = best(rounds, || {
        let mut acc = 0u64;
        for b in 0..10_000u64 {
            acc ^= prefix.key_with(b);
        }
        std::hint::black_box(acc);
    });
    println!(
        "10 000 stream keys:            {:8.3} ms",
        keys.as_secs_f64() * 1e3
    );
    let seq = best(rounds, || {
        std::hint::black_box(replicates(
            &prefix,
            10_000,
            Parallelism::Sequential,
            || sample.scratch(),
            |st, sc| sample.replicate(Estimator::Median, st, sc),
        ));
    });
    println!(
        "replicates, sequential:        {:8.3} ms",
        seq.as_secs_f64() * 1e3
    );
    let batched = best(rounds, || {
        std::hint::black_box(replicates_batched(
            &prefix,
            10_000,
            Parallelism::Sequential,
            || sample.scratch(),
            |st, sc, out| sample.replicates_into(Estimator::Median, st, sc, out),
        ));
    });
    println!(
        "batched, sequential:           {:8.3} ms",
        batched.as_secs_f64() * 1e3
    );
    for threads in [1, 2] {
        let p = pool(threads)?;
        let t = p.install(|| {
            best(rounds, || {
                std::hint::black_box(replicates(
                    &prefix,
                    10_000,
                    Parallelism::Rayon,
                    || sample.scratch(),
                    |st, sc| sample.replicate(Estimator::Median, st, sc),
                ));
            })
        });
        println!(
            "replicates, {threads} thread(s):       {:8.3} ms",
            t.as_secs_f64() * 1e3
        );
        let t = p.install(|| {
            best(rounds, || {
                std::hint::black_box(replicates_batched(
                    &prefix,
                    10_000,
                    Parallelism::Rayon,
                    || sample.scratch(),
                    |st, sc, out| sample.replicates_into(Estimator::Median, st, sc, out),
                ));
            })
        });
        println!(
            "batched, {threads} thread(s):          {:8.3} ms",
            t.as_secs_f64() * 1e3
        );
        let c = p.install(|| {
            best(rounds, || {
                std::hint::black_box(compare_with(&input, &options, Parallelism::Rayon).ok());
            })
        });
        println!(
            "compare, {threads} thread(s):          {:8.3} ms",
            c.as_secs_f64() * 1e3
        );
        let few = CompareOptions {
            resamples: 10,
            ..options.clone()
        };
        let c = p.install(|| {
            best(rounds, || {
                std::hint::black_box(compare_with(&input, &few, Parallelism::Rayon).ok());
            })
        });
        println!(
            "compare (10 resamples), {threads} thr: {:8.3} ms",
            c.as_secs_f64() * 1e3
        );
    }
    let reps = replicates_batched(
        &prefix,
        10_000,
        Parallelism::Sequential,
        || sample.scratch(),
        |st, sc, out| sample.replicates_into(Estimator::Median, st, sc, out),
    );
    let sorting = best(rounds, || {
        let mut copy = reps.clone();
        _native::stats::bootstrap::sort(&mut copy);
        std::hint::black_box(copy);
    });
    println!(
        "sort 10 000 replicates:        {:8.3} ms",
        sorting.as_secs_f64() * 1e3
    );
    let jk = best(rounds, || {
        std::hint::black_box(sample.jackknife(Estimator::Median));
    });
    println!(
        "jackknife:                     {:8.3} ms",
        jk.as_secs_f64() * 1e3
    );
    Ok(())
}

/// One sequential paired comparison of the benchmark's size, for `valgrind --tool=callgrind`.
fn paired_compare_once() {
    let input = bench_input(1000);
    let options = CompareOptions {
        resamples: 10_000,
        seed: 1,
        ..CompareOptions::default()
    };
    std::hint::black_box(compare_with(&input, &options, Parallelism::Sequential).ok());
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "once") {
        paired_compare_once();
        return Ok(());
    }
    paired_bootstrap_phases()
}
