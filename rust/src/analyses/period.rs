//! The repeating unit of a sequence of names (one id per GPU operation, in launch order).
//!
//! 1. **Candidate periods.** For every name that occurs at least twice, the most common distance
//!    between an occurrence and the `m`-th next one (`m` = 1..=4: names that occur up to four times
//!    per unit still vote for the unit). Each name votes for that distance with the number of times it
//!    occurred; the [`CANDIDATES`] distances with the most votes are tried.
//! 2. **The period** is the candidate `p` with the longest stretch where the sequence repeats
//!    exactly (`s[i] == s[i + p]` for every `i` of the stretch): a stretch of `r` positions covers
//!    `r + p` names. Ties go to the shorter period. Exact runs keep an inner repeat from winning: the
//!    layers of a model repeat within a step, but the embedding and the head break that repeat at
//!    every step, so its exact runs stay within one step, while the step's run spans them all.
//! 3. **Regions.** With the period fixed, the sequence is cut into stretches where every window of
//!    `p` positions holds at most `p / 32` mismatches (a kernel chosen differently now and then does
//!    not end the repetition); stretches that cover at least two units are the regions.
//!
//! What repeats is found; which of the unit's rotations is an iteration is decided by timing
//! (`iterations.rs`).

use std::collections::HashMap;

/// How many candidate periods are scored.
pub const CANDIDATES: usize = 16;
/// Each name votes for the modal distance to its `m`-th next occurrence, `m` = 1..=`MAX_PER_UNIT`.
const MAX_PER_UNIT: usize = 4;

/// A stretch of the sequence covered by repeats of the unit: positions `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub start: usize,
    pub end: usize,
}

/// The period found and the regions where the sequence repeats with it, in order, disjoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    pub period: usize,
    /// Names covered by the longest exact run (run + period).
    pub exact_cover: usize,
    pub regions: Vec<Region>,
}

/// The repeat of `seq`, or None when no unit occurs twice in a row: the unit whose longest exact run
/// covers the most names (ties: the shorter unit).
pub fn find(seq: &[u32]) -> Option<Repeat> {
    find_weighted(seq, &|_| 1)
}

/// [`find`] with each name weighted (its GPU time): the unit whose longest exact run covers the most
/// weight wins (ties: more names, then the shorter unit). A short unit repeated over much GPU time (decode
/// steps that each launch a CUDA graph) then beats a longer stretch of brief operations (a prefill's
/// layers), as a step is what takes the time. `weight(i)` is the weight of `seq[i]` (negative counts 0);
/// it is summed over each candidate's run rather than held for every name.
pub fn find_weighted(seq: &[u32], weight: &dyn Fn(usize) -> i64) -> Option<Repeat> {
    let mut best: Option<(i64, usize, usize)> = None; // (weight covered, names covered, period)
    for p in candidates(seq) {
        let (run, end) = longest_exact_run_at(seq, p);
        let cover = run + p;
        if run == 0 || cover < 2 * p {
            continue;
        }
        let covered = (end - run..(end + p).min(seq.len()))
            .map(|i| weight(i).max(0))
            .fold(0_i64, i64::saturating_add);
        let better = match best {
            None => true,
            Some((w, c, q)) => (covered, cover, usize::MAX - p) > (w, c, usize::MAX - q),
        };
        if better {
            best = Some((covered, cover, p));
        }
    }
    let (_, exact_cover, period) = best?;
    Some(Repeat {
        period,
        exact_cover,
        regions: regions(seq, period),
    })
}

/// The candidate periods, most votes first (ties: shorter first).
pub fn candidates(seq: &[u32]) -> Vec<usize> {
    let n = seq.len();
    let symbols = seq.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
    // Positions of each name, grouped by name (a counting sort).
    // Positions as u32 (a device's sequence is at most u32::MAX long: the builder refuses more).
    let mut starts = vec![0usize; symbols + 1];
    for &s in seq {
        if let Some(c) = starts.get_mut(s as usize + 1) {
            *c += 1;
        }
    }
    for i in 1..starts.len() {
        let before = starts.get(i - 1).copied().unwrap_or(0);
        if let Some(c) = starts.get_mut(i) {
            *c += before;
        }
    }
    let mut fill = starts.clone();
    let mut positions = vec![0u32; n];
    for (i, &s) in seq.iter().enumerate() {
        if let Some(at) = fill.get_mut(s as usize) {
            if let Some(slot) = positions.get_mut(*at) {
                *slot = crate::analyses::activity::index(i);
            }
            *at += 1;
        }
    }
    let mut votes: HashMap<usize, u64> = HashMap::new();
    let mut gaps: Vec<u32> = Vec::new();
    for s in 0..symbols {
        let (a, b) = (
            starts.get(s).copied().unwrap_or(0),
            starts.get(s + 1).copied().unwrap_or(0),
        );
        let pos = positions.get(a..b).unwrap_or_default();
        for m in 1..=MAX_PER_UNIT.min(pos.len().saturating_sub(1)) {
            gaps.clear();
            gaps.extend(pos.iter().zip(pos.iter().skip(m)).map(|(x, y)| y - x));
            if let Some((gap, count)) = mode(&mut gaps) {
                let gap = gap as usize;
                if gap <= n / 2 {
                    *votes.entry(gap).or_default() += count as u64;
                }
            }
        }
    }
    let mut ranked: Vec<(u64, usize)> = votes.into_iter().map(|(p, v)| (v, p)).collect();
    ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked
        .into_iter()
        .take(CANDIDATES)
        .map(|(_, p)| p)
        .collect()
}

/// The most common value and how often it occurs (ties: the smallest value).
fn mode(values: &mut [u32]) -> Option<(u32, usize)> {
    values.sort_unstable();
    let mut best: Option<(u32, usize)> = None;
    let mut i = 0;
    while let Some(&v) = values.get(i) {
        let run = values
            .get(i..)
            .unwrap_or_default()
            .iter()
            .take_while(|&&x| x == v)
            .count();
        if best.is_none_or(|(_, c)| run > c) {
            best = Some((v, run));
        }
        i += run.max(1);
    }
    best
}

/// The longest stretch of positions `i` with `seq[i] == seq[i + p]`.
pub fn longest_exact_run(seq: &[u32], p: usize) -> usize {
    longest_exact_run_at(seq, p).0
}

/// [`longest_exact_run`] and where it ends: the compared positions `end - run .. end` (names
/// `end - run .. end + p`); the first of equal runs.
pub fn longest_exact_run_at(seq: &[u32], p: usize) -> (usize, usize) {
    if p == 0 || p >= seq.len() {
        return (0, 0);
    }
    let (mut best, mut best_end, mut run) = (0, 0, 0);
    for (i, (a, b)) in seq.iter().zip(seq.iter().skip(p)).enumerate() {
        if a == b {
            run += 1;
            if run > best {
                best = run;
                best_end = i + 1;
            }
        } else {
            run = 0;
        }
    }
    (best, best_end)
}

/// Mismatches a window of `p` positions may hold inside a region.
pub fn tolerance(p: usize) -> usize {
    p / 32
}

/// The stretches covered by at least two units, where every window of `p` positions holds at most
/// [`tolerance`]`(p)` mismatches, cut greedily from the left.
pub fn regions(seq: &[u32], p: usize) -> Vec<Region> {
    let mut out = Vec::new();
    if p == 0 || p >= seq.len() {
        return out;
    }
    let tol = tolerance(p);
    let compares = seq.len() - p;
    let mut start = 0usize;
    let mut window: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    let close = |from: usize, to: usize, out: &mut Vec<Region>| {
        // Compare positions from..to: trimmed of mismatches at either end, they cover to + p names.
        let mut a = from;
        let mut b = to;
        while a < b && seq.get(a) != seq.get(a + p) {
            a += 1;
        }
        while b > a && seq.get(b - 1) != seq.get(b - 1 + p) {
            b -= 1;
        }
        if b - a >= p {
            out.push(Region {
                start: a,
                end: b + p,
            });
        }
    };
    for i in 0..compares {
        while window.front().is_some_and(|&m| m + p <= i) {
            window.pop_front();
        }
        if seq.get(i) != seq.get(i + p) {
            window.push_back(i);
            if window.len() > tol {
                // The window ending here holds one mismatch too many: the region ends before the
                // oldest of them, and the next one starts after it.
                let oldest = window.pop_front().unwrap_or(i);
                close(start, oldest, &mut out);
                start = oldest + 1;
            }
        }
    }
    close(start, compares, &mut out);
    // Covers may overlap where a region ends inside the next one's first unit: cut at its start.
    for k in 1..out.len() {
        let next = out.get(k).map_or(usize::MAX, |r| r.start);
        if let Some(r) = out.get_mut(k - 1) {
            r.end = r.end.min(next);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn repeat(prefix: &[u32], unit: &[u32], times: usize, suffix: &[u32]) -> Vec<u32> {
        let mut s = prefix.to_vec();
        for _ in 0..times {
            s.extend_from_slice(unit);
        }
        s.extend_from_slice(suffix);
        s
    }

    #[test]
    fn finds_the_unit_after_a_prefix() {
        let seq = repeat(&[9, 9, 8], &[1, 2, 3, 2, 4], 6, &[7]);
        let r = find(&seq);
        assert_eq!(r.as_ref().map(|r| r.period), Some(5));
        assert_eq!(
            r.map(|r| r.regions),
            Some(vec![Region { start: 3, end: 33 }])
        );
    }

    #[test]
    fn the_step_beats_the_layers_inside_it() {
        // A step: embedding 1, eight layers of [2 3 4 5], head 6; ten steps.
        let mut unit = vec![1];
        for _ in 0..8 {
            unit.extend([2, 3, 4, 5]);
        }
        unit.push(6);
        let seq = repeat(&[], &unit, 10, &[]);
        assert_eq!(find(&seq).map(|r| r.period), Some(34));
    }

    #[test]
    fn the_unit_covering_the_most_time_beats_the_one_covering_the_most_names() {
        // A prefill of four layers of 32 brief names, then twelve decode steps of 7 names whose first
        // (a CUDA graph execution) takes long: by names the layers cover more (128 > 84), by time the steps.
        let layer: Vec<u32> = (10..42).collect();
        let step: Vec<u32> = vec![1, 2, 3, 4, 5, 6, 7];
        let mut seq = repeat(&[], &layer, 4, &[]);
        let prefill = seq.len();
        seq.extend(repeat(&[], &step, 12, &[]));
        let weight: Vec<i64> = seq
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                if i >= prefill && n == 1 {
                    200_000
                } else {
                    4_000
                }
            })
            .collect();
        assert_eq!(find(&seq).map(|r| r.period), Some(32));
        let weight_of = |i: usize| weight.get(i).copied().unwrap_or(0);
        assert_eq!(find_weighted(&seq, &weight_of).map(|r| r.period), Some(7));
        // Equal weights choose as find does.
        assert_eq!(find_weighted(&seq, &|_| 1).map(|r| r.period), Some(32));
    }

    #[test]
    fn nothing_repeats_in_a_sequence_of_distinct_names() {
        let seq: Vec<u32> = (0..50).collect();
        assert_eq!(find(&seq), None);
    }

    #[test]
    fn a_substitution_does_not_end_a_long_region_but_an_insertion_does() {
        let unit: Vec<u32> = (0..64).collect();
        let mut seq = repeat(&[], &unit, 8, &[]);
        if let Some(x) = seq.get_mut(64 * 3 + 10) {
            *x = 99;
        }
        let r = find(&seq);
        assert_eq!(r.as_ref().map(|r| r.period), Some(64));
        assert_eq!(
            r.map(|r| r.regions),
            Some(vec![Region { start: 0, end: 512 }])
        );
        let mut inserted = repeat(&[], &unit, 4, &[]);
        inserted.push(99);
        inserted.extend(repeat(&[], &unit, 4, &[]));
        let r = find(&inserted);
        assert_eq!(
            r.map(|r| r.regions),
            Some(vec![
                Region { start: 0, end: 256 },
                Region {
                    start: 257,
                    end: 513
                }
            ])
        );
    }

    proptest! {
        #[test]
        fn an_exact_repeat_is_found_with_its_primitive_period(
            unit in proptest::collection::vec(0u32..6, 2..12),
            times in 3usize..8,
        ) {
            // The primitive period of the unit itself (a unit may repeat inside).
            let primitive = (1..=unit.len())
                .find(|&q| unit.len() % q == 0 && unit.iter().enumerate().all(|(i, x)| unit.get(i % q) == Some(x)))
                .unwrap_or(unit.len());
            let seq = repeat(&[], &unit, times, &[]);
            let found = find(&seq);
            if let Some(r) = &found {
                prop_assert!(r.exact_cover >= 2 * r.period);
            }
            if candidates(&seq).contains(&primitive) {
                // The primitive period covers the whole sequence: nothing beats it.
                let r = found.unwrap_or(Repeat { period: 0, exact_cover: 0, regions: Vec::new() });
                prop_assert_eq!(r.period, primitive);
                prop_assert_eq!(r.regions, vec![Region { start: 0, end: seq.len() }]);
            }
        }
    }
}
