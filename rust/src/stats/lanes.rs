//! Eight bootstrap replicates of the median at once, bit-identical to one at a time.
//!
//! Each of the eight replicates keeps its own `gpuopt.rng/v1` stream (xoshiro256++ seeded from its own
//! key), exactly as [`super::resample`] prescribes; only the order in which the machine evaluates the
//! eight independent streams changes. The eight states live in AVX2 vectors (one vector per state word),
//! so one pass of the loop advances all eight streams and computes all eight drawn indices with Lemire's
//! multiply-shift; the increments of the per-lane multiplicities stay scalar.
//!
//! **Lemire's rejection.** For a bound n ≤ 65 535, write the 64-bit output x = x_h·2^32 + x_l and
//! a = x_h·n (one 32×16-bit product per lane). The exact index ⌊x·n / 2^64⌋ = ⌊(a·2^32 + x_l·n) / 2^64⌋
//! differs from ⌊a / 2^32⌋ only when x_l·n / 2^32 (below n) carries a mod 2^32 past 2^32, which needs
//! a mod 2^32 > 2^32 − n; and the low 64 bits of x·n fall below the rejection threshold
//! (2^64 − n) mod n < n only when a mod 2^32 is 0 or carries the same way. So a lane whose
//! (a + n − 1) mod 2^32 stayed at or above n on every draw drew exactly the indices of
//! [`Stream::below`]; the kernel keeps that probe's minimum per lane, and flagged lanes (about n draws
//! in 2^32) have their replicates recomputed one stream at a time.
//!
//! **Counting and the median.** Lane multiplicities are counted per pair position in a table of
//! `[u16; LANES]` rows indexed by a `u16` position (so the index is in bounds by its type); the median
//! then walks the positions in sorted order, skipping 64-rank blocks that keep every lane below half,
//! and takes for each lane the first rank whose running count reaches half the draws (averaged with the
//! next drawn rank when it is exactly half), which is the unit-weight median of the drawn multiset.
//!
//! The lanes know only the sorted positions and values, never the sample they speed up: a flagged
//! lane is recomputed by the caller's one-stream-at-a-time median, handed in as a function.

use super::rng::Stream;

/// Replicates computed together.
pub const LANES: usize = 8;

/// Rows of the multiplicity table: every `u16` position.
const TABLE: usize = 1 << 16;

/// A lane's multiplicity per pair position.
type Counts = [[u16; LANES]; TABLE];

/// Per-thread working memory of the eight-lane median: 1 MiB of address space, of which a replicate
/// touches the first n rows (16 bytes each).
#[derive(Debug, Default)]
pub struct LaneScratch {
    counts: Option<Box<Counts>>,
}

impl LaneScratch {
    fn counts(&mut self) -> Option<&mut Counts> {
        if self.counts.is_none() {
            let rows: Box<[[u16; LANES]]> = vec![[0u16; LANES]; TABLE].into_boxed_slice();
            self.counts = rows.try_into().ok();
        }
        self.counts.as_deref_mut()
    }
}

/// The sample facts the eight-lane median needs: the pair positions in sorted order (as `u16`) and the
/// sorted values. `None` when the lanes do not apply: more than 65 535 pairs or fewer than 2.
#[derive(Debug, Clone)]
pub struct LaneMedian {
    sorted_positions: Vec<u16>,
}

impl LaneMedian {
    pub fn new(sorted_positions: &[usize]) -> Option<Self> {
        if sorted_positions.len() < 2 {
            return None;
        }
        let sorted_positions = sorted_positions
            .iter()
            .map(|&p| u16::try_from(p).ok())
            .collect::<Option<Vec<u16>>>()?;
        Some(Self { sorted_positions })
    }

    fn n(&self) -> u16 {
        u16::try_from(self.sorted_positions.len()).unwrap_or(0)
    }
}

/// Whether this machine runs the eight-lane kernel (AVX2); elsewhere replicates run one at a time.
pub fn available() -> bool {
    simd::available()
}

/// The medians of eight replicates drawn from `streams` (n draws each from [0, n), unit weights, one
/// stratum), written to `out`; `sorted_values` are the sample's values in sorted order. Returns
/// `false`, leaving `out` untouched, where the kernel is not available; a lane the kernel flagged is
/// recomputed with `one_at_a_time` (the scalar median of one replicate, given a copy of its stream).
pub fn medians(
    lanes: &LaneMedian,
    sorted_values: &[f64],
    streams: &[Stream; LANES],
    scratch: &mut LaneScratch,
    out: &mut [f64; LANES],
    mut one_at_a_time: impl FnMut(&mut Stream) -> f64,
) -> bool {
    let n = lanes.n();
    if usize::from(n) != sorted_values.len() {
        return false;
    }
    let Some(counts) = scratch.counts() else {
        return false;
    };
    if let Some(rows) = counts.get_mut(..usize::from(n)) {
        rows.fill([0; LANES]);
    }
    let mut states = [[0u64; LANES]; 4];
    for (lane, stream) in streams.iter().enumerate() {
        for (word, value) in states.iter_mut().zip(stream.state()) {
            if let Some(slot) = word.get_mut(lane) {
                *slot = value;
            }
        }
    }
    let Some(flagged) = simd::draw_counts(n, &states, counts) else {
        return false;
    };
    median_of_lanes(&lanes.sorted_positions, sorted_values, counts, out);
    for (lane, (stream, value)) in streams.iter().zip(out.iter_mut()).enumerate() {
        if flagged >> lane & 1 == 1 {
            *value = one_at_a_time(&mut stream.clone());
        }
    }
    true
}

/// For each lane, the median of the positions drawn as `counts` says, walking positions in sorted
/// order (see the module documentation).
fn median_of_lanes(
    sorted_positions: &[u16],
    sorted_values: &[f64],
    counts: &Counts,
    out: &mut [f64; LANES],
) {
    const BLOCK: usize = 64;
    const ALL: u32 = (1 << LANES) - 1;
    let total = u32::try_from(sorted_positions.len()).unwrap_or(u32::MAX);
    let row = |p: u16| counts.get(usize::from(p)).copied().unwrap_or([0; LANES]);
    let mut cum = [0u32; LANES];
    let mut start = 0;
    for block in sorted_positions.chunks(BLOCK) {
        let mut sum = [0u16; LANES];
        for &p in block {
            for (s, c) in sum.iter_mut().zip(row(p)) {
                *s = s.wrapping_add(c);
            }
        }
        if cum
            .iter()
            .zip(&sum)
            .any(|(&c, &s)| 2 * (c + u32::from(s)) >= total)
        {
            break;
        }
        for (c, &s) in cum.iter_mut().zip(&sum) {
            *c += u32::from(s);
        }
        start += block.len();
    }
    // First rank whose running count reaches half (`lo`) and first that passes half (`hi`).
    let mut lo = [usize::MAX; LANES];
    let mut hi = [usize::MAX; LANES];
    let (mut ge_seen, mut gt_seen) = (0u32, 0u32);
    for (r, &p) in sorted_positions.iter().enumerate().skip(start) {
        let (mut ge, mut gt) = (0u32, 0u32);
        for (lane, (c, add)) in cum.iter_mut().zip(row(p)).enumerate() {
            *c += u32::from(add);
            ge |= u32::from(2 * *c >= total) << lane;
            gt |= u32::from(2 * *c > total) << lane;
        }
        if ge != ge_seen {
            mark(&mut lo, ge & !ge_seen, r);
            ge_seen = ge;
        }
        if gt != gt_seen {
            mark(&mut hi, gt & !gt_seen, r);
            gt_seen = gt;
            if gt == ALL {
                break;
            }
        }
    }
    for ((value, &lo), &hi) in out.iter_mut().zip(&lo).zip(&hi) {
        let a = sorted_values.get(lo).copied().unwrap_or(f64::NAN);
        *value = if lo == hi {
            a
        } else {
            0.5 * (a + sorted_values.get(hi).copied().unwrap_or(f64::NAN))
        };
    }
}

fn mark(ranks: &mut [usize; LANES], lanes: u32, r: usize) {
    for (lane, slot) in ranks.iter_mut().enumerate() {
        if lanes >> lane & 1 == 1 {
            *slot = r;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use super::{Counts, LANES};
    use fearless_simd::{u32x16, u64x8, Bytes, Level, Simd, SimdBase, SimdFrom};

    pub fn available() -> bool {
        Level::new().as_avx2().is_some()
    }

    /// Draws n indices in [0, n) from each lane's xoshiro256++ state (`states[word][lane]`) and adds one
    /// to `counts[index][lane]` per draw; returns the lanes flagged for a possible rejection (bit per
    /// lane), or `None` without AVX2.
    pub fn draw_counts(n: u16, states: &[[u64; LANES]; 4], counts: &mut Counts) -> Option<u32> {
        let avx2 = Level::new().as_avx2()?;
        Some(avx2.vectorize(
            #[inline(always)]
            || kernel(avx2, n, states, counts),
        ))
    }

    #[inline(always)]
    fn kernel<S: Simd>(simd: S, n: u16, states: &[[u64; LANES]; 4], counts: &mut Counts) -> u32 {
        let [w0, w1, w2, w3] = states;
        let mut s0 = u64x8::simd_from(simd, *w0);
        let mut s1 = u64x8::simd_from(simd, *w1);
        let mut s2 = u64x8::simd_from(simd, *w2);
        let mut s3 = u64x8::simd_from(simd, *w3);
        let bound = u64x8::splat(simd, u64::from(n));
        let below = u32x16::splat(simd, u32::from(n) - 1);
        let mut probe = u32x16::splat(simd, u32::MAX);
        for _ in 0..n {
            // xoshiro256++ (rng.rs), eight streams at once.
            let sum = s0 + s3;
            let x = ((sum << 23) | (sum >> 41)) + s0;
            let t = s1 << 17;
            s2 ^= s0;
            s3 ^= s1;
            s1 ^= s2;
            s0 ^= s3;
            s2 ^= t;
            s3 = (s3 << 45) | (s3 >> 19);
            // Lemire from the high half: a = x_h·n; index a >> 32 unless a mod 2^32 is 0 or above
            // 2^32 − n (probe: (a + n − 1) mod 2^32 < n).
            let a = (x >> 32) * bound;
            probe = probe.min(a.bitcast::<u32x16<S>>() + below);
            let index: [u64; LANES] = (a >> 32).into();
            for (lane, &i) in index.iter().enumerate() {
                // i < n ≤ 65 535, so the u16 is the index itself.
                if let Some(c) = counts
                    .get_mut(usize::from(i as u16))
                    .and_then(|row| row.get_mut(lane))
                {
                    *c += 1;
                }
            }
        }
        let probe: [u32; 2 * LANES] = probe.into();
        probe
            .chunks_exact(2)
            .enumerate()
            .fold(0, |bits, (lane, words)| {
                let low_word = words.first().copied().unwrap_or(0);
                bits | (u32::from(low_word < u32::from(n)) << lane)
            })
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod simd {
    use super::{Counts, LANES};

    pub fn available() -> bool {
        false
    }

    pub fn draw_counts(_n: u16, _states: &[[u64; LANES]; 4], _counts: &mut Counts) -> Option<u32> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::estimators::{Estimator, Sample};

    fn one_at_a_time(sample: &Sample, streams: &[Stream]) -> Vec<u64> {
        let mut scratch = sample.scratch();
        streams
            .iter()
            .map(|s| {
                sample
                    .replicate(Estimator::Median, &mut s.clone(), &mut scratch)
                    .to_bits()
            })
            .collect()
    }

    fn batched(sample: &Sample, streams: &[Stream]) -> Vec<u64> {
        let mut scratch = sample.scratch();
        let mut out = vec![0.0; streams.len()];
        sample.replicates_into(
            Estimator::Median,
            &mut streams.to_vec(),
            &mut scratch,
            &mut out,
        );
        out.into_iter().map(f64::to_bits).collect()
    }

    #[test]
    fn eight_lanes_equal_one_stream_at_a_time() {
        for n in [2usize, 3, 7, 8, 63, 64, 65, 128, 129, 1000, 1001, 4097] {
            // Few distinct values, so ties and exact halves (even n) are common.
            let values: Vec<f64> = (0..n).map(|i| ((i * 7919) % 13) as f64 * 0.25).collect();
            let sample = Sample::new(values);
            let streams: Vec<Stream> = (0..37u64)
                .map(|b| Stream::from_key(b * 1_000_003 + n as u64))
                .collect();
            assert_eq!(
                batched(&sample, &streams),
                one_at_a_time(&sample, &streams),
                "n = {n}"
            );
        }
    }

    #[test]
    fn the_kernel_runs_where_avx2_is_available() {
        let sample = Sample::new((0..100).map(f64::from).collect());
        let lanes = LaneMedian::new(&(0..100).collect::<Vec<_>>()).unwrap();
        let streams: [Stream; LANES] = std::array::from_fn(|i| Stream::from_key(i as u64));
        let mut out = [f64::NAN; LANES];
        let mut one = sample.scratch();
        let ran = medians(
            &lanes,
            sample.sorted_values(),
            &streams,
            &mut LaneScratch::default(),
            &mut out,
            |stream| sample.replicate_median(stream, &mut one),
        );
        assert_eq!(ran, available());
        if ran {
            let want = one_at_a_time(&sample, &streams);
            assert_eq!(out.map(f64::to_bits).to_vec(), want);
        }
        // The lanes never apply to weights, strata or a sample too large for u16 positions.
        assert!(LaneMedian::new(&(0..70_000).collect::<Vec<_>>()).is_none());
        assert!(LaneMedian::new(&[0]).is_none());
    }

    #[test]
    fn flagged_draws_fall_back_to_the_scalar_stream() {
        // A stream whose first output is x: xoshiro256++ outputs rotl(s0 + s3, 23) + s0, so s0 = 0 and
        // s3 = rotr(x, 23).
        let first_output =
            |x: u64, s1: u64| Stream::from_state([0, s1, s1 ^ 77, x.rotate_right(23)]);
        for n in [5u64, 1000] {
            let threshold = n.wrapping_neg() % n;
            let above = (1u128 << 64).div_ceil(u128::from(n)) as u64;
            // x_h·n ≡ −2^z (mod 2^32), n = 2^z·odd, and x_l = 2^32 − 1: the low product x_l·n adds
            // n − 1 ≥ 2^z, which carries into the index.
            let z = n.trailing_zeros();
            let odd = n >> z;
            let mut inverse = odd; // Newton: odd·inverse ≡ 1 (mod 2^64)
            for _ in 0..6 {
                inverse = inverse.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inverse)));
            }
            let x_h = u64::MAX.wrapping_mul(inverse) & ((1 << (32 - z)) - 1);
            let carry = (x_h << 32) | 0xFFFF_FFFF;
            // The same high half with x_l = 0 adds nothing: flagged, yet neither rejected nor carried.
            let flag_only = x_h << 32;
            let mut kinds = [0; 3];
            for x in [0, above, above + 1, carry, flag_only] {
                let exact = ((u128::from(x) * u128::from(n)) >> 64) as u64;
                let rejected = ((u128::from(x) * u128::from(n)) as u64) < threshold;
                let a = (x >> 32) * n;
                assert!(
                    (a as u32).wrapping_add(n as u32 - 1) < n as u32,
                    "the kernel flags x = {x}"
                );
                kinds[if rejected {
                    0
                } else if exact != a >> 32 {
                    1
                } else {
                    2
                }] += 1;
            }
            assert!(
                kinds.iter().all(|&k| k > 0),
                "rejection, carry and mere flag, n = {n}: {kinds:?}"
            );
            let values: Vec<f64> = (0..n).map(|i| ((i * 31) % 1009) as f64).collect();
            let sample = Sample::new(values);
            let streams: Vec<Stream> = (0..36u64)
                .map(|b| match b % 6 {
                    0 => Stream::from_key(b),
                    1 => first_output(0, b + 1),
                    2 => first_output(above, b + 1),
                    3 => first_output(above + 1, b + 1),
                    4 => first_output(carry, b + 1),
                    _ => first_output(flag_only, b + 1),
                })
                .collect();
            assert_eq!(
                batched(&sample, &streams),
                one_at_a_time(&sample, &streams),
                "n = {n}"
            );
        }
    }
}
