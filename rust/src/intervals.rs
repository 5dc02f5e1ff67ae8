//! Interval arithmetic on integer timestamps (ns): union, gaps, intersection, clipping and concurrency.
//!
//! Intervals are half-open `[start, end)`; an interval with `end <= start` covers no time. Every engine
//! that reasons about busy/idle time (nsys timelines, PyTorch traces) uses these functions so that
//! "busy" means the same thing everywhere.

/// A half-open time interval `[start, end)` in integer nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    pub start: i64,
    pub end: i64,
}

impl Span {
    pub const fn new(start: i64, end: i64) -> Self {
        Self { start, end }
    }

    /// Covered time; zero for empty or inverted intervals.
    pub const fn len(&self) -> i64 {
        if self.end > self.start {
            self.end - self.start
        } else {
            0
        }
    }

    pub const fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// The part of `self` inside `window`, if any time remains.
    pub fn clip(&self, window: Span) -> Option<Span> {
        let s = Span::new(self.start.max(window.start), self.end.min(window.end));
        (!s.is_empty()).then_some(s)
    }
}

/// Merges intervals into disjoint, sorted, non-touching spans (the union). Empty intervals vanish;
/// intervals that touch (`a.end == b.start`) merge, since no idle time lies between them.
pub fn union(mut spans: Vec<Span>) -> Vec<Span> {
    spans.retain(|s| !s.is_empty());
    spans.sort_unstable();
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len().min(1 << 16));
    for s in spans {
        match merged.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => merged.push(s),
        }
    }
    merged
}

/// Total time covered by disjoint spans (as returned by [`union`]).
pub fn total(merged: &[Span]) -> i64 {
    merged.iter().map(Span::len).sum()
}

/// The idle spans between consecutive disjoint spans (the complement inside their hull).
pub fn gaps(merged: &[Span]) -> Vec<Span> {
    merged
        .windows(2)
        .filter_map(|w| match w {
            [a, b] if b.start > a.end => Some(Span::new(a.end, b.start)),
            _ => None,
        })
        .collect()
}

/// Time covered by both of two disjoint, sorted span lists (a two-pointer sweep).
pub fn intersection_len(a: &[Span], b: &[Span]) -> i64 {
    let (mut i, mut j, mut sum) = (0usize, 0usize, 0i64);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        let lo = x.start.max(y.start);
        let hi = x.end.min(y.end);
        if hi > lo {
            sum += hi - lo;
        }
        if x.end < y.end {
            i += 1;
        } else {
            j += 1;
        }
    }
    sum
}

/// The intersection of two unions, as a union (two-pointer sweep, linear time).
pub fn intersect(a: &[Span], b: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        let s = Span::new(x.start.max(y.start), x.end.min(y.end));
        if !s.is_empty() {
            out.push(s);
        }
        if x.end <= y.end {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The parts of union `a` not covered by union `b`, as a union.
pub fn subtract(a: &[Span], b: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    let mut j = 0;
    for x in a {
        let mut cursor = x.start;
        while let Some(y) = b.get(j) {
            if y.end <= cursor {
                j += 1;
                continue;
            }
            if y.start >= x.end {
                break;
            }
            if y.start > cursor {
                out.push(Span::new(cursor, y.start));
            }
            cursor = cursor.max(y.end);
            if y.end >= x.end {
                break;
            }
            j += 1;
        }
        if cursor < x.end {
            out.push(Span::new(cursor, x.end));
        }
    }
    out
}

/// Time covered by disjoint `merged` spans inside `window`.
pub fn covered_within(merged: &[Span], window: Span) -> i64 {
    // Skip spans ending before the window with a binary search; they are sorted by start and end.
    let first = merged.partition_point(|s| s.end <= window.start);
    merged
        .get(first..)
        .unwrap_or_default()
        .iter()
        .take_while(|s| s.start < window.end)
        .filter_map(|s| s.clip(window))
        .map(|s| s.len())
        .sum()
}

/// How many intervals run at once, over time.
#[derive(Debug, Clone, PartialEq)]
pub struct Concurrency {
    /// The largest number of intervals running at the same instant.
    pub max: u32,
    /// Time during which at least one interval runs (the union's length).
    pub busy: i64,
    /// ∫ (number running) dt: the sum of the interval lengths.
    pub weighted: i64,
    /// `time_at[k]` = time during which exactly `k` intervals run (`time_at[0]` is idle time inside
    /// the hull of the intervals).
    pub time_at: Vec<i64>,
}

impl Concurrency {
    /// Mean number running while at least one runs (`weighted / busy`); 0 when nothing ran.
    pub fn mean_when_busy(&self) -> f64 {
        if self.busy > 0 {
            self.weighted as f64 / self.busy as f64
        } else {
            0.0
        }
    }
}

/// Sweeps interval boundaries (+1 at a start, −1 at an end; at equal times ends come first, so
/// back-to-back intervals do not count as concurrent).
pub fn concurrency(spans: &[Span]) -> Concurrency {
    let mut events: Vec<(i64, i32)> = Vec::with_capacity(spans.len() * 2);
    for s in spans.iter().filter(|s| !s.is_empty()) {
        events.push((s.start, 1));
        events.push((s.end, -1));
    }
    events.sort_unstable();
    let mut out = Concurrency {
        max: 0,
        busy: 0,
        weighted: 0,
        time_at: Vec::new(),
    };
    let mut level: i64 = 0;
    let mut prev: Option<i64> = None;
    for (t, delta) in events {
        if let Some(p) = prev {
            let width = t - p;
            if width > 0 && level >= 0 {
                let k = usize::try_from(level).unwrap_or(0);
                if out.time_at.len() <= k {
                    out.time_at.resize(k + 1, 0);
                }
                if let Some(slot) = out.time_at.get_mut(k) {
                    *slot += width;
                }
                if level > 0 {
                    out.busy += width;
                    out.weighted += width * level;
                }
            }
        }
        level += i64::from(delta);
        out.max = out.max.max(u32::try_from(level).unwrap_or(0));
        prev = Some(t);
    }
    out
}

/// Time accounting of labelled intervals from one boundary sweep (see [`labelled_sweep`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelledSweep {
    /// Time with at least one interval active.
    pub union: i64,
    /// Σ interval lengths (= `union + overlap_excess`).
    pub serial: i64,
    /// Σ (active − 1)·width over segments where more than one interval is active.
    pub overlap_excess: i64,
    /// The most intervals active on a segment of positive width.
    pub max_concurrency: u64,
    /// Per label: time with at least one interval of that label active.
    pub label_union: Vec<i64>,
    /// Per label: time with intervals of that label, and of no other label, active.
    pub label_exclusive: Vec<i64>,
}

/// Why a [`labelled_sweep`] could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepError {
    /// The interval at this index carries a label `>= labels`.
    LabelOutOfRange(usize),
    /// A sum does not fit in an `i64`.
    Overflow,
}

/// Sweeps the boundaries of labelled half-open intervals in one pass: boundaries are sorted by time,
/// ends before starts at equal times (back-to-back intervals are not concurrent), and each segment
/// between consecutive boundaries is charged to the totals by its active count. Empty intervals
/// (`end <= start`) occupy no time and are skipped. Per-label union time is accumulated lazily (from the
/// moment a label becomes active to the moment its last interval ends), so the sweep is
/// O(n log n) for the sort and O(n) after it, whatever the number of labels.
pub fn labelled_sweep(
    spans: &[(Span, u32)],
    labels: usize,
) -> std::result::Result<LabelledSweep, SweepError> {
    const START: u8 = 1;
    const END: u8 = 0;
    // One u128 per boundary: time (sign bit flipped, so unsigned order is time order), kind, label.
    // Sorting plain integers is much faster than sorting tuples.
    const SIGN: u64 = 1 << 63;
    let pack = |t: i64, kind: u8, label: u32| {
        (u128::from(t.cast_unsigned() ^ SIGN) << 64) | (u128::from(kind) << 32) | u128::from(label)
    };
    let mut points: Vec<u128> = Vec::with_capacity(spans.len() * 2);
    for (i, (span, label)) in spans.iter().enumerate() {
        if usize::try_from(*label).map_or(true, |l| l >= labels) {
            return Err(SweepError::LabelOutOfRange(i));
        }
        if !span.is_empty() {
            points.push(pack(span.start, START, *label));
            points.push(pack(span.end, END, *label));
        }
    }
    points.sort_unstable();
    let unpack = |p: u128| {
        let t = ((p >> 64) as u64 ^ SIGN).cast_signed();
        (t, ((p >> 32) & 1) as u8, p as u32)
    };
    let mut active_per_label = vec![0u64; labels];
    let mut since = vec![0i64; labels];
    let mut label_union = vec![0i128; labels];
    let mut label_exclusive = vec![0i128; labels];
    let (mut union, mut serial, mut overlap) = (0i128, 0i128, 0i128);
    let (mut level, mut max, mut labels_active, mut label_sum) = (0u64, 0u64, 0u64, 0u64);
    let mut prev = points.first().map_or(0, |p| unpack(*p).0);
    for (t, kind, label) in points.into_iter().map(unpack) {
        let width = i128::from(t) - i128::from(prev);
        if width > 0 && level > 0 {
            union += width;
            serial += width * i128::from(level);
            overlap += width * i128::from(level - 1);
            max = max.max(level);
            if labels_active == 1 {
                // With one label active, the sum of active labels is that label.
                if let Some(slot) = usize::try_from(label_sum)
                    .ok()
                    .and_then(|l| label_exclusive.get_mut(l))
                {
                    *slot += width;
                }
            }
        }
        prev = t;
        let l = label as usize;
        let (Some(count), Some(from), Some(total)) = (
            active_per_label.get_mut(l),
            since.get_mut(l),
            label_union.get_mut(l),
        ) else {
            return Err(SweepError::LabelOutOfRange(l));
        };
        if kind == START {
            if *count == 0 {
                *from = t;
                labels_active += 1;
                label_sum += u64::from(label);
            }
            *count += 1;
            level += 1;
        } else {
            *count = count.saturating_sub(1);
            level = level.saturating_sub(1);
            if *count == 0 {
                *total += i128::from(t) - i128::from(*from);
                labels_active = labels_active.saturating_sub(1);
                label_sum = label_sum.saturating_sub(u64::from(label));
            }
        }
    }
    let fit = |v: i128| i64::try_from(v).map_err(|_| SweepError::Overflow);
    let fit_all = |v: Vec<i128>| {
        v.into_iter()
            .map(fit)
            .collect::<std::result::Result<Vec<_>, _>>()
    };
    Ok(LabelledSweep {
        union: fit(union)?,
        serial: fit(serial)?,
        overlap_excess: fit(overlap)?,
        max_concurrency: max,
        label_union: fit_all(label_union)?,
        label_exclusive: fit_all(label_exclusive)?,
    })
}

#[cfg(test)]
mod set_tests {
    use super::*;

    fn spans(v: &[(i64, i64)]) -> Vec<Span> {
        v.iter().map(|&(s, e)| Span::new(s, e)).collect()
    }

    #[test]
    fn intersect_and_subtract_by_hand() {
        let a = spans(&[(0, 10), (20, 30)]);
        let b = spans(&[(5, 25), (28, 40)]);
        assert_eq!(intersect(&a, &b), spans(&[(5, 10), (20, 25), (28, 30)]));
        assert_eq!(subtract(&a, &b), spans(&[(0, 5), (25, 28)]));
        assert_eq!(intersection_len(&a, &b), 12);
        assert_eq!(total(&intersect(&a, &b)), intersection_len(&a, &b));
    }

    #[test]
    fn subtract_then_intersect_partition_the_union() {
        let a = union(spans(&[(0, 7), (9, 15), (20, 21)]));
        let b = union(spans(&[(3, 10), (14, 30)]));
        assert_eq!(
            total(&subtract(&a, &b)) + total(&intersect(&a, &b)),
            total(&a)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(a: i64, b: i64) -> Span {
        Span::new(a, b)
    }

    #[test]
    fn union_merges_overlapping_and_touching() {
        let merged = union(vec![s(5, 7), s(0, 2), s(1, 3), s(3, 4), s(9, 9), s(8, 10)]);
        assert_eq!(merged, vec![s(0, 4), s(5, 7), s(8, 10)]);
        assert_eq!(total(&merged), 8);
        assert_eq!(gaps(&merged), vec![s(4, 5), s(7, 8)]);
    }

    #[test]
    fn intersection_of_two_lists() {
        let a = union(vec![s(0, 10), s(20, 30)]);
        let b = union(vec![s(5, 25), s(28, 40)]);
        // [5,10) + [20,25) + [28,30)
        assert_eq!(intersection_len(&a, &b), 12);
        assert_eq!(intersection_len(&a, &[]), 0);
    }

    #[test]
    fn covered_inside_a_window() {
        let m = union(vec![s(0, 10), s(20, 30), s(40, 50)]);
        assert_eq!(covered_within(&m, s(5, 45)), 5 + 10 + 5);
        assert_eq!(covered_within(&m, s(10, 20)), 0);
    }

    #[test]
    fn concurrency_counts_levels() {
        // [0,10) and [5,15) overlap on [5,10); [15,20) touches the second one.
        let c = concurrency(&[s(0, 10), s(5, 15), s(15, 20), s(30, 31)]);
        assert_eq!(c.max, 2);
        assert_eq!(c.busy, 21);
        assert_eq!(c.weighted, 10 + 10 + 5 + 1);
        assert_eq!(c.time_at, vec![10, 16, 5]);
        assert!((c.mean_when_busy() - 26.0 / 21.0).abs() < 1e-12);
    }

    #[test]
    fn labelled_sweep_orders_negative_times_and_checks_labels() {
        let spans = [(s(-20, -5), 0), (s(-10, 3), 1), (s(3, 9), 0), (s(4, 4), 1)];
        let out = labelled_sweep(&spans, 2).unwrap();
        let c = concurrency(&spans.iter().map(|p| p.0).collect::<Vec<_>>());
        assert_eq!(
            (out.union, out.serial, out.max_concurrency),
            (c.busy, c.weighted, 2)
        );
        assert_eq!((out.union, out.overlap_excess), (29, 5));
        assert_eq!(out.label_union, vec![21, 13]);
        assert_eq!(out.label_exclusive, vec![16, 8]);
        assert_eq!(
            labelled_sweep(&spans, 1),
            Err(SweepError::LabelOutOfRange(1))
        );
    }

    /// A brute-force check on many small random cases: the union and the sweep agree with a
    /// per-nanosecond count.
    #[test]
    fn agrees_with_brute_force() {
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m) as i64
        };
        for _ in 0..500 {
            let n = next(8) as usize;
            let spans: Vec<Span> = (0..n)
                .map(|_| {
                    let a = next(40);
                    s(a, a + next(12))
                })
                .collect();
            let mut count = [0i64; 60];
            for sp in &spans {
                for t in sp.start..sp.end {
                    count[t as usize] += 1;
                }
            }
            let busy = count.iter().filter(|&&c| c > 0).count() as i64;
            let weighted: i64 = count.iter().sum();
            let max = count.iter().copied().max().unwrap_or(0) as u32;
            let merged = union(spans.clone());
            assert_eq!(total(&merged), busy);
            let c = concurrency(&spans);
            assert_eq!((c.busy, c.weighted, c.max), (busy, weighted, max));
            let other = union(vec![s(10, 20), s(35, 45)]);
            let both = (10..20)
                .chain(35..45)
                .filter(|&t| count[t as usize] > 0)
                .count() as i64;
            assert_eq!(intersection_len(&merged, &other), both);
            assert_eq!(covered_within(&merged, s(7, 33)), {
                (7..33).filter(|&t| count[t as usize] > 0).count() as i64
            });
        }
    }
}

#[cfg(test)]
mod properties {
    //! Every set operation against a brute-force bitmap of the integer instants in [0, 64).
    use super::*;
    use proptest::prelude::*;

    const N: i64 = 64;

    fn spans() -> impl Strategy<Value = Vec<Span>> {
        prop::collection::vec((-4i64..N + 4, -4i64..N + 4), 0..12)
            .prop_map(|v| v.into_iter().map(|(s, e)| Span::new(s, e)).collect())
    }

    /// How many of the spans cover each instant t in [-8, N + 8) (instant t covers [t, t + 1)).
    fn counts(spans: &[Span]) -> Vec<u32> {
        (-8..N + 8)
            .map(|t| spans.iter().filter(|s| s.start <= t && t < s.end).count() as u32)
            .collect()
    }

    fn covered(spans: &[Span]) -> Vec<bool> {
        counts(spans).into_iter().map(|c| c > 0).collect()
    }

    fn is_union(merged: &[Span]) -> bool {
        merged.iter().all(|s| !s.is_empty()) && merged.windows(2).all(|w| w[0].end < w[1].start)
    }

    proptest! {
        #[test]
        fn union_covers_exactly_the_inputs(a in spans()) {
            let u = union(a.clone());
            prop_assert!(is_union(&u));
            prop_assert_eq!(covered(&u), covered(&a));
            prop_assert_eq!(total(&u), covered(&a).iter().filter(|c| **c).count() as i64);
        }

        #[test]
        fn gaps_are_the_idle_instants_inside_the_hull(a in spans()) {
            let u = union(a);
            let g = gaps(&u);
            prop_assert!(is_union(&g));
            if let (Some(first), Some(last)) = (u.first(), u.last()) {
                let hull = total(&[Span::new(first.start, last.end)]);
                prop_assert_eq!(total(&g) + total(&u), hull);
                prop_assert_eq!(intersection_len(&g, &u), 0);
            } else {
                prop_assert!(g.is_empty());
            }
        }

        #[test]
        fn intersect_and_subtract_match_the_bitmaps(a in spans(), b in spans()) {
            let (ua, ub) = (union(a), union(b));
            let both = intersect(&ua, &ub);
            let only = subtract(&ua, &ub);
            prop_assert!(is_union(&only));
            let (ca, cb) = (covered(&ua), covered(&ub));
            let expect_both: Vec<bool> = ca.iter().zip(&cb).map(|(x, y)| *x && *y).collect();
            let expect_only: Vec<bool> = ca.iter().zip(&cb).map(|(x, y)| *x && !*y).collect();
            prop_assert_eq!(covered(&both), expect_both);
            prop_assert_eq!(covered(&only), expect_only);
            prop_assert_eq!(intersection_len(&ua, &ub), total(&both));
        }

        #[test]
        fn covered_within_counts_the_window(a in spans(), w in (-4i64..N + 4, -4i64..N + 4)) {
            let u = union(a);
            let window = Span::new(w.0, w.1);
            let expect = intersection_len(&u, &union(vec![window]));
            prop_assert_eq!(covered_within(&u, window), expect);
        }

        #[test]
        fn concurrency_matches_the_counts(a in spans()) {
            let c = concurrency(&a);
            let per_instant = counts(&a);
            prop_assert_eq!(c.max, per_instant.iter().copied().max().unwrap_or(0));
            prop_assert_eq!(c.busy, total(&union(a.clone())));
            prop_assert_eq!(c.weighted, a.iter().map(Span::len).sum::<i64>());
            for (k, time) in c.time_at.iter().enumerate().skip(1) {
                let expect = per_instant.iter().filter(|n| **n as usize == k).count() as i64;
                prop_assert_eq!(*time, expect);
            }
        }
    }
}
