//! Replicate generation: replicate b draws from its own stream, keyed by (tag, key parts…, b), so the
//! replicates are the same whether they run on one thread or many and however rayon splits the work.

use super::rng::{KeyPrefix, Stream};
use rayon::prelude::*;

/// Whether replicates run on the rayon pool or on the calling thread (same numbers either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parallelism {
    Rayon,
    Sequential,
}

/// `count` replicates: replicate b is `statistic(stream_b, scratch)` with stream_b keyed by
/// `prefix` + b. The result is in replicate order.
pub fn replicates<S, F>(
    prefix: &KeyPrefix,
    count: usize,
    parallelism: Parallelism,
    make_scratch: impl Fn() -> S + Sync + Send,
    statistic: F,
) -> Vec<f64>
where
    F: Fn(&mut Stream, &mut S) -> f64 + Sync + Send,
{
    let one = |scratch: &mut S, b: usize| {
        let mut stream = Stream::from_key(prefix.key_with(b as u64));
        statistic(&mut stream, scratch)
    };
    match parallelism {
        Parallelism::Sequential => {
            let mut scratch = make_scratch();
            (0..count).map(|b| one(&mut scratch, b)).collect()
        }
        Parallelism::Rayon => (0..count)
            .into_par_iter()
            .with_min_len(32)
            .map_init(&make_scratch, one)
            .collect(),
    }
}

/// Replicates per batch of [`replicates_batched`]: one eight-lane group ([`super::lanes`]).
pub const BATCH: usize = super::lanes::LANES;

/// The same numbers as [`replicates`], computed a batch of consecutive replicates at a time:
/// `statistics(streams, scratch, out)` fills `out[i]` with the statistic of `streams[i]`, the stream of
/// replicate `first + i` (at most [`BATCH`] of them).
pub fn replicates_batched<S, F>(
    prefix: &KeyPrefix,
    count: usize,
    parallelism: Parallelism,
    make_scratch: impl Fn() -> S + Sync + Send,
    statistics: F,
) -> Vec<f64>
where
    F: Fn(&mut [Stream], &mut S, &mut [f64]) + Sync + Send,
{
    let mut out = vec![0.0; count];
    let batch = |scratch: &mut S, (g, values): (usize, &mut [f64])| {
        let first = g * BATCH;
        let mut streams: [Stream; BATCH] = std::array::from_fn(|i| {
            if i < values.len() {
                Stream::from_key(prefix.key_with((first + i) as u64))
            } else {
                Stream::from_state([0; 4])
            }
        });
        if let Some(streams) = streams.get_mut(..values.len()) {
            statistics(streams, scratch, values);
        }
    };
    match parallelism {
        Parallelism::Sequential => {
            let mut scratch = make_scratch();
            for chunk in out.chunks_mut(BATCH).enumerate() {
                batch(&mut scratch, chunk);
            }
        }
        Parallelism::Rayon => out
            .par_chunks_mut(BATCH)
            .enumerate()
            .with_min_len(4)
            .for_each_init(&make_scratch, batch),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::estimators::{Estimator, Sample};
    use crate::stats::rng::Part;

    #[test]
    fn replicates_are_bit_identical_on_1_2_and_16_threads() {
        let values: Vec<f64> = (0..301)
            .map(|i| ((i * 37) % 97) as f64 * 0.013 - 0.4)
            .collect();
        let sample = Sample::new(values);
        let prefix = KeyPrefix::new("bootstrap", &[Part::Int(9), Part::Str(""), Part::Str("m")]);
        let run = |threads: usize, est: Estimator| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                replicates(
                    &prefix,
                    2000,
                    Parallelism::Rayon,
                    || sample.scratch(),
                    |st, sc| sample.replicate(est, st, sc),
                )
            })
        };
        for est in [Estimator::Median, Estimator::Mean] {
            let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
            let one = bits(run(1, est));
            assert_eq!(one, bits(run(2, est)));
            assert_eq!(one, bits(run(16, est)));
            let seq = replicates(
                &prefix,
                2000,
                Parallelism::Sequential,
                || sample.scratch(),
                |st, sc| sample.replicate(est, st, sc),
            );
            assert_eq!(one, bits(seq));
        }
    }

    #[test]
    fn batched_replicates_equal_one_at_a_time_on_any_thread_count() {
        let values: Vec<f64> = (0..301)
            .map(|i| ((i * 37) % 97) as f64 * 0.013 - 0.4)
            .collect();
        let sample = Sample::new(values);
        let prefix = KeyPrefix::new("bootstrap", &[Part::Int(9), Part::Str(""), Part::Str("m")]);
        let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
        // 2001 is not a multiple of the batch, so the last batch is partial.
        for est in [Estimator::Median, Estimator::Mean] {
            let one = bits(replicates(
                &prefix,
                2001,
                Parallelism::Sequential,
                || sample.scratch(),
                |st, sc| sample.replicate(est, st, sc),
            ));
            let batched = |threads: usize, parallelism: Parallelism| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                bits(pool.install(|| {
                    replicates_batched(
                        &prefix,
                        2001,
                        parallelism,
                        || sample.scratch(),
                        |st, sc, out| sample.replicates_into(est, st, sc, out),
                    )
                }))
            };
            assert_eq!(batched(1, Parallelism::Sequential), one);
            for threads in [1, 2, 16] {
                assert_eq!(
                    batched(threads, Parallelism::Rayon),
                    one,
                    "{threads} threads"
                );
            }
        }
    }
}
