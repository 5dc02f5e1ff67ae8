//! A sample resampled: bootstrap replicates counted as multiplicities, and the jackknife.

use super::{Estimator, Sample, Scratch};
use crate::stats::lanes::{self, LANES};
use crate::stats::rng::Stream;

impl Sample {
    /// One bootstrap replicate: redraw n_c pairs with replacement within every stratum (in plan order),
    /// then estimate. Draws come from `stream` in that order, one `below(n_c)` per drawn pair.
    pub fn replicate(
        &self,
        estimator: Estimator,
        stream: &mut Stream,
        scratch: &mut Scratch,
    ) -> f64 {
        match estimator {
            Estimator::Mean => self.replicate_mean(stream),
            Estimator::Median => self.replicate_median(stream, scratch),
        }
    }

    /// Replicates of consecutive streams: `out[i]` is [`Self::replicate`] on `streams[i]`, bit for bit.
    /// The unit-weight median of one stratum runs eight streams at a time where the machine allows
    /// ([`lanes`]); every other case runs one stream at a time.
    pub fn replicates_into(
        &self,
        estimator: Estimator,
        streams: &mut [Stream],
        scratch: &mut Scratch,
        out: &mut [f64],
    ) {
        let mut start = 0;
        if let (Estimator::Median, Some(lane_median)) = (estimator, &self.lanes) {
            if lanes::available() {
                for (group, values) in streams.chunks_exact(LANES).zip(out.chunks_exact_mut(LANES))
                {
                    let (Ok(group), Ok(values)) = (
                        <&[Stream; LANES]>::try_from(group),
                        <&mut [f64; LANES]>::try_from(values),
                    ) else {
                        break;
                    };
                    // A flagged lane (about n draws in 2^32) reruns one stream at a time.
                    let mut one = None;
                    let one_at_a_time = |stream: &mut Stream| {
                        self.replicate_median(stream, one.get_or_insert_with(|| self.scratch()))
                    };
                    if !lanes::medians(
                        lane_median,
                        &self.sorted_values,
                        group,
                        &mut scratch.lanes,
                        values,
                        one_at_a_time,
                    ) {
                        break;
                    }
                    start += LANES;
                }
            }
        }
        for (stream, value) in streams.iter_mut().zip(out.iter_mut()).skip(start) {
            *value = self.replicate(estimator, stream, scratch);
        }
    }

    fn replicate_mean(&self, stream: &mut Stream) -> f64 {
        let mut total = 0.0;
        for (members, f) in self.strata.iter().zip(&self.mean_factors) {
            let n_c = members.len() as u64;
            let mut sum = 0.0;
            for _ in 0..n_c {
                let j = stream.below(n_c) as usize;
                let pos = members.get(j).copied().unwrap_or(0);
                sum += self.values.get(pos).copied().unwrap_or(0.0);
            }
            total += f * sum;
        }
        total / self.mean_denominator
    }

    pub(crate) fn replicate_median(&self, stream: &mut Stream, scratch: &mut Scratch) -> f64 {
        let counts = &mut scratch.counts;
        counts.clear();
        counts.resize(self.len(), 0);
        if let [_] = self.strata.as_slice() {
            // One stratum holds every pair in plan order: its j-th member is position j.
            let n = self.len() as u64;
            for _ in 0..n {
                let pos = stream.below(n) as usize;
                if let Some(c) = self.rank.get(pos).and_then(|&r| counts.get_mut(r as usize)) {
                    *c += 1;
                }
            }
        } else {
            for members in &self.strata {
                let n_c = members.len() as u64;
                for _ in 0..n_c {
                    let j = stream.below(n_c) as usize;
                    let pos = members.get(j).copied().unwrap_or(0);
                    if let Some(c) = self.rank.get(pos).and_then(|&r| counts.get_mut(r as usize)) {
                        *c += 1;
                    }
                }
            }
        }
        match &self.weights {
            None => self.unit_median_of_counts(counts),
            Some(_) => self.weighted_median(|r| {
                let pos = self.sorted.get(r).copied().unwrap_or(0);
                let c = counts.get(r).copied().unwrap_or(0);
                if c == 0 {
                    0.0
                } else {
                    f64::from(c) * self.pair_weight(pos, None)
                }
            }),
        }
    }

    /// The median of the multiset given by `counts` (per sorted rank) with unit weights, exactly. The
    /// counts sum to n; the scan skips whole blocks whose running total stays below half.
    fn unit_median_of_counts(&self, counts: &[u32]) -> f64 {
        const BLOCK: usize = 64;
        let total = self.len() as u64;
        let mut cum: u64 = 0;
        let mut start = 0;
        for block in counts.chunks(BLOCK) {
            let sum: u64 = block.iter().map(|&c| u64::from(c)).sum();
            if 2 * (cum + sum) >= total {
                break;
            }
            cum += sum;
            start += block.len();
        }
        let mut ranked = counts.iter().zip(&self.sorted_values).skip(start);
        while let Some((&c, &v)) = ranked.next() {
            if c == 0 {
                continue;
            }
            cum += u64::from(c);
            if 2 * cum > total {
                return v;
            }
            if 2 * cum == total {
                return match ranked.find(|(&c2, _)| c2 > 0) {
                    Some((_, &next)) => 0.5 * (v + next),
                    None => v,
                };
            }
        }
        f64::NAN
    }

    /// Jackknife estimates θ₍ᵢ₎, leaving out each pair in plan order (case weights recomputed).
    pub fn jackknife(&self, estimator: Estimator) -> Vec<f64> {
        use rayon::prelude::*;
        let n = self.len();
        if n < 2 {
            return Vec::new();
        }
        match (estimator, &self.weights) {
            (Estimator::Median, None) => {
                (0..n).map(|i| self.unit_median_without(Some(i))).collect()
            }
            (Estimator::Median, Some(_)) => (0..n)
                .into_par_iter()
                .with_min_len(64)
                .map(|i| {
                    self.weighted_median(|r| {
                        let pos = self.sorted.get(r).copied().unwrap_or(0);
                        self.pair_weight(pos, Some(i))
                    })
                })
                .collect(),
            (Estimator::Mean, _) => self.jackknife_mean(),
        }
    }

    fn jackknife_mean(&self) -> Vec<f64> {
        let sums: Vec<f64> = self.strata.iter().map(|m| self.sum_of(m)).collect();
        (0..self.len())
            .map(|i| {
                let s_i = self.stratum_of.get(i).copied().unwrap_or(0);
                let v_i = self.values.get(i).copied().unwrap_or(0.0);
                let mut total = 0.0;
                let mut denominator = 0.0;
                for (s, (members, &sum)) in self.strata.iter().zip(&sums).enumerate() {
                    let (n_c, sum) = if s == s_i {
                        (members.len() - 1, sum - v_i)
                    } else {
                        (members.len(), sum)
                    };
                    if n_c == 0 {
                        continue;
                    }
                    let (f, d) = match &self.weights {
                        None => (1.0, n_c as f64),
                        Some(w) => {
                            let wc = w.get(s).copied().unwrap_or(0.0);
                            (wc / n_c as f64, wc)
                        }
                    };
                    total += f * sum;
                    denominator += d;
                }
                total / denominator
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_median(v: &[f64]) -> f64 {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        if n % 2 == 1 {
            s[n / 2]
        } else {
            0.5 * (s[n / 2 - 1] + s[n / 2])
        }
    }

    #[test]
    fn replicate_median_equals_the_median_of_the_drawn_values() {
        let values: Vec<f64> = (0..37).map(|i| ((i * 7919) % 101) as f64 / 10.0).collect();
        let s = Sample::new(values.clone());
        let mut scratch = s.scratch();
        for b in 0..200u64 {
            let mut a = Stream::from_key(b);
            let mut twin = Stream::from_key(b);
            let got = s.replicate(Estimator::Median, &mut a, &mut scratch);
            let drawn: Vec<f64> = (0..37).map(|_| values[twin.below(37) as usize]).collect();
            assert_eq!(got, naive_median(&drawn));
        }
        // Even n.
        let s = Sample::new(values[..36].to_vec());
        for b in 0..200u64 {
            let mut a = Stream::from_key(b);
            let mut twin = Stream::from_key(b);
            let got = s.replicate(Estimator::Median, &mut a, &mut scratch);
            let drawn: Vec<f64> = (0..36).map(|_| values[twin.below(36) as usize]).collect();
            assert_eq!(got, naive_median(&drawn));
        }
    }

    #[test]
    fn stratified_replicates_keep_case_counts() {
        // Case 0 holds small values, case 1 large ones; every replicate's mean has exactly the mix.
        let values = vec![1.0, 1.0, 1.0, 100.0, 100.0];
        let s = Sample::stratified(values, vec![0, 0, 0, 1, 1], 2, None).unwrap();
        for b in 0..50u64 {
            let mut st = Stream::from_key(b);
            assert_eq!(
                s.replicate(Estimator::Mean, &mut st, &mut s.scratch()),
                40.6
            );
        }
    }

    #[test]
    fn jackknife_leaves_out_each_pair() {
        let values = vec![4.0, 1.0, 3.0, 2.0, 10.0];
        let s = Sample::new(values.clone());
        let jk = s.jackknife(Estimator::Median);
        for (i, got) in jk.iter().enumerate() {
            let mut rest = values.clone();
            rest.remove(i);
            assert_eq!(*got, naive_median(&rest));
        }
        let jk = s.jackknife(Estimator::Mean);
        assert_eq!(jk[4], 2.5);
        // Weighted: leaving out the lone pair of case 1 drops that case.
        let w = Sample::stratified(vec![1.0, 2.0, 9.0], vec![0, 0, 1], 2, Some(vec![1.0, 1.0]))
            .unwrap();
        assert_eq!(w.jackknife(Estimator::Mean), vec![5.5, 5.0, 1.5]);
        assert_eq!(w.jackknife(Estimator::Median)[2], 1.5);
    }
}
