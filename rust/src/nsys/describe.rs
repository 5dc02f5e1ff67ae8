//! Summary statistics with the definitions `nsys stats` uses, and compact storage for the millions of
//! values they summarize.
//!
//! Definitions (pinned against nsys 2025.3.2 output, see `references/formats/nsys-sqlite.md`):
//! mean = total / n in f64 (SQLite `avg`); median = the middle value, or the mean of the two middle
//! values when n is even; standard deviation = the *sample* deviation (n − 1 denominator), 0 for a
//! single value. Totals and squared sums are exact (i128) before the one final division.

/// Summary of a group of integer values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub total: i128,
    pub mean: f64,
    pub median: f64,
    pub min: i64,
    pub max: i64,
    pub stddev: f64,
}

/// Summarizes `values` (reordered in place by the median selection); None when empty.
pub fn describe<T: Copy + Ord + Into<i64>>(values: &mut [T]) -> Option<Summary> {
    let n = values.len();
    let first: i64 = (*values.first()?).into();
    // Σx² is exact in i128 for real durations; values near 2^63 overflow it (None), and the
    // deviation is then computed in f64 instead (checked, never wrapped).
    let (mut total, mut squares, mut min, mut max) = (0i128, Some(0i128), first, first);
    for &v in values.iter() {
        let v: i64 = v.into();
        let w = i128::from(v);
        total += w;
        squares = squares.and_then(|s| s.checked_add(w.checked_mul(w)?));
        min = min.min(v);
        max = max.max(v);
    }
    let count = u64::try_from(n).unwrap_or(u64::MAX);
    let nn = i128::from(count);
    let mean = total as f64 / n as f64;
    let exact = squares.and_then(|sq| nn.checked_mul(sq)?.checked_sub(total.checked_mul(total)?));
    let stddev = match exact {
        _ if n < 2 => 0.0,
        // n·Σx² − (Σx)² is exact in i128; the sample variance divides it by n(n − 1).
        Some(numerator) => (numerator as f64 / (nn * (nn - 1)) as f64).max(0.0).sqrt(),
        None => {
            let dev: f64 = values
                .iter()
                .map(|&v| (Into::<i64>::into(v) as f64 - mean).powi(2))
                .sum();
            (dev / (n as f64 - 1.0)).sqrt()
        }
    };
    Some(Summary {
        count,
        total,
        mean,
        median: median(values),
        min,
        max,
        stddev,
    })
}

/// The median: the middle value, or the mean of the two middle values for an even count.
fn median<T: Copy + Ord + Into<i64>>(values: &mut [T]) -> f64 {
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    let mid = n / 2;
    let (lower, upper, _) = values.select_nth_unstable(mid);
    let upper: i64 = (*upper).into();
    if n % 2 == 1 {
        return upper as f64;
    }
    let below: i64 = lower.iter().map(|&v| v.into()).max().unwrap_or(upper);
    (i128::from(below) + i128::from(upper)) as f64 / 2.0
}

/// The nearest-rank percentile (`p` in 0..=100) of sorted values: the smallest value with at least
/// p% of the values at or below it.
pub fn percentile_sorted(sorted: &[i64], p: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len() as f64;
    let rank = ((p / 100.0) * n).ceil().max(1.0) as usize;
    sorted.get(rank.min(sorted.len()) - 1).copied()
}

const FIRST_CHUNK: usize = 16;
const MAX_CHUNK: usize = 1 << 16;

/// An append-only store of non-negative durations (or sizes): 4 bytes per value while values fit
/// in `u32`, in chunks that grow geometrically up to 64 Ki values, so that memory stays close to the
/// data (no doubling reallocation) and merging two stores moves chunks instead of copying values.
#[derive(Debug, Default)]
pub struct Durations {
    /// Full chunks.
    narrow: Vec<Vec<u32>>,
    /// The chunk being filled.
    current: Vec<u32>,
    wide: Vec<i64>,
    len: usize,
}

/// The values of a [`Durations`], contiguous.
pub enum Values {
    Narrow(Vec<u32>),
    Wide(Vec<i64>),
}

impl Durations {
    #[inline]
    pub fn push(&mut self, value: i64) {
        self.len += 1;
        let Ok(v) = u32::try_from(value) else {
            self.wide.push(value);
            return;
        };
        if self.current.len() == self.current.capacity() {
            self.rotate();
        }
        self.current.push(v);
    }

    #[cold]
    fn rotate(&mut self) {
        let cap = if self.current.capacity() == 0 {
            FIRST_CHUNK
        } else {
            (self.current.capacity() * 2).min(MAX_CHUNK)
        };
        let full = std::mem::replace(&mut self.current, Vec::with_capacity(cap));
        if !full.is_empty() {
            self.narrow.push(full);
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Moves `other`'s values in (their order does not matter to any statistic).
    pub fn append(&mut self, mut other: Durations) {
        self.len += other.len;
        self.narrow.append(&mut other.narrow);
        if !other.current.is_empty() {
            self.narrow.push(other.current);
        }
        self.wide.append(&mut other.wide);
    }

    /// The values in one exact-size buffer, freeing each chunk as it is copied.
    pub fn into_values(self) -> Values {
        let chunks = self.narrow.into_iter().chain([self.current]);
        if self.wide.is_empty() {
            let mut out = Vec::with_capacity(self.len);
            for chunk in chunks {
                out.extend_from_slice(&chunk);
            }
            Values::Narrow(out)
        } else {
            let mut out = self.wide;
            out.reserve_exact(self.len - out.len());
            for chunk in chunks {
                out.extend(chunk.iter().map(|&v| i64::from(v)));
            }
            Values::Wide(out)
        }
    }

    /// Summarizes and consumes the store.
    pub fn describe(self) -> Option<Summary> {
        match self.into_values() {
            Values::Narrow(mut v) => describe(&mut v),
            Values::Wide(mut v) => describe(&mut v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_count_median_is_the_mean_of_the_middle_pair() {
        let s = describe(&mut [14803i64, 20256]).unwrap();
        assert_eq!(s.median, 17529.5);
        assert_eq!(s.mean, 17529.5);
        // Sample standard deviation: |a − b| / √2, as nsys prints 3855.9 for this pair.
        assert_eq!(format!("{:.1}", s.stddev), "3855.9");
    }

    #[test]
    fn single_value_has_zero_deviation() {
        let s = describe(&mut [7i64]).unwrap();
        assert_eq!(
            (s.count, s.median, s.stddev, s.min, s.max),
            (1, 7.0, 0.0, 7, 7)
        );
        assert!(describe::<i64>(&mut []).is_none());
    }

    #[test]
    fn odd_median_and_extremes() {
        let s = describe(&mut [5u32, 1, 9, 3, 7]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.total), (5.0, 1, 9, 25));
        assert_eq!(s.stddev, 10f64.sqrt());
    }

    #[test]
    fn durations_store_narrow_and_wide_values() {
        let mut a = Durations::default();
        for v in 0..1000 {
            a.push(v);
        }
        let mut b = Durations::default();
        b.push(5_000_000_000);
        b.push(3);
        a.append(b);
        assert_eq!(a.len(), 1002);
        let s = a.describe().unwrap();
        assert_eq!(s.max, 5_000_000_000);
        assert_eq!(s.total, 499_500 + 5_000_000_003);
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let v = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
        assert_eq!(percentile_sorted(&v, 50.0), Some(5));
        assert_eq!(percentile_sorted(&v, 90.0), Some(9));
        assert_eq!(percentile_sorted(&v, 100.0), Some(10));
        assert_eq!(percentile_sorted(&[], 50.0), None);
    }

    #[test]
    fn squares_past_i128_fall_back_to_f64_instead_of_wrapping() {
        // Σx² of four values near 2^62.5 overflows i128; the exact path would panic or wrap.
        let big = (1i64 << 62) + (1 << 61);
        let s = describe(&mut [big, big, big, 0]).unwrap();
        assert_eq!(s.total, 3 * i128::from(big));
        let mean = 3.0 * big as f64 / 4.0;
        let expected = ((3.0 * (big as f64 - mean).powi(2) + mean.powi(2)) / 3.0).sqrt();
        assert!(
            (s.stddev - expected).abs() / expected < 1e-12,
            "{}",
            s.stddev
        );
    }
}
