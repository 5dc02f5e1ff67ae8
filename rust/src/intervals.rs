//! Interval arithmetic on half-open integer spans `[start, end)` (nanoseconds): union, gaps, overlap.
//!
//! A "union" here is always sorted, disjoint and non-touching (what [`union`] returns); the other
//! functions take unions and return unions, so every total they feed is exact integer arithmetic.

/// A half-open span `[start, end)`.
pub type Span = (i64, i64);

/// Sorts and merges spans; spans that touch or overlap merge, empty spans (`end <= start`) vanish.
pub fn union(mut spans: Vec<Span>) -> Vec<Span> {
    spans.retain(|(start, end)| end > start);
    spans.sort_unstable();
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

/// Total length covered by a union.
pub fn total(union: &[Span]) -> i64 {
    union.iter().map(|(start, end)| end - start).sum()
}

/// The uncovered spans between consecutive spans of a union (inside its hull).
pub fn gaps(union: &[Span]) -> Vec<Span> {
    union
        .windows(2)
        .filter_map(|pair| match pair {
            [a, b] => Some((a.1, b.0)),
            _ => None,
        })
        .collect()
}

/// The intersection of two unions, as a union (two-pointer sweep, linear time).
pub fn intersect(a: &[Span], b: &[Span]) -> Vec<Span> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        let start = x.0.max(y.0);
        let end = x.1.min(y.1);
        if start < end {
            out.push((start, end));
        }
        if x.1 <= y.1 {
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
    for &(start, end) in a {
        let mut cursor = start;
        while let Some(&(b_start, b_end)) = b.get(j) {
            if b_end <= cursor {
                j += 1;
                continue;
            }
            if b_start >= end {
                break;
            }
            if b_start > cursor {
                out.push((cursor, b_start));
            }
            cursor = cursor.max(b_end);
            if b_end >= end {
                break;
            }
            j += 1;
        }
        if cursor < end {
            out.push((cursor, end));
        }
    }
    out
}

/// Length of the intersection of two unions.
pub fn overlap(a: &[Span], b: &[Span]) -> i64 {
    total(&intersect(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn union_merges_touching_and_overlapping_and_drops_empty() {
        let u = union(vec![(5, 7), (0, 2), (2, 3), (6, 9), (10, 10), (12, 11)]);
        assert_eq!(u, vec![(0, 3), (5, 9)]);
        assert_eq!(total(&u), 7);
        assert_eq!(gaps(&u), vec![(3, 5)]);
    }

    #[test]
    fn intersect_and_subtract_by_hand() {
        let a = vec![(0, 10), (20, 30)];
        let b = vec![(5, 25), (28, 40)];
        assert_eq!(intersect(&a, &b), vec![(5, 10), (20, 25), (28, 30)]);
        assert_eq!(subtract(&a, &b), vec![(0, 5), (25, 28)]);
        assert_eq!(overlap(&a, &b), 12);
    }

    /// Brute force over unit cells: the reference the sweeps must match.
    fn cells(spans: &[Span]) -> Vec<bool> {
        let mut out = vec![false; 64];
        for &(s, e) in spans {
            for t in s.max(0)..e.min(64) {
                out[t as usize] = true;
            }
        }
        out
    }

    fn spans() -> impl Strategy<Value = Vec<Span>> {
        proptest::collection::vec(
            (0i64..64, 0i64..16).prop_map(|(s, d)| (s, (s + d).min(64))),
            0..12,
        )
    }

    proptest! {
        #[test]
        fn sweeps_match_brute_force(a in spans(), b in spans()) {
            let ua = union(a.clone());
            let ub = union(b.clone());
            let (ca, cb) = (cells(&a), cells(&b));
            prop_assert_eq!(total(&ua), ca.iter().filter(|x| **x).count() as i64);
            prop_assert!(ua.windows(2).all(|w| w[0].1 < w[1].0));
            let both: Vec<bool> = ca.iter().zip(&cb).map(|(x, y)| *x && *y).collect();
            prop_assert_eq!(cells(&intersect(&ua, &ub)), both);
            let only_a: Vec<bool> = ca.iter().zip(&cb).map(|(x, y)| *x && !*y).collect();
            prop_assert_eq!(cells(&subtract(&ua, &ub)), only_a);
            // union = covered; hull = covered + gaps
            if let (Some(first), Some(last)) = (ua.first(), ua.last()) {
                prop_assert_eq!(total(&ua) + total(&gaps(&ua)), last.1 - first.0);
            }
        }
    }
}
