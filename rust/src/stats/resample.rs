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
}
