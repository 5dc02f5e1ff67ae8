//! The GPU timer's resolution as a capture shows it, and the rounding error it puts into a per-capture
//! total.
//!
//! GPU timestamps come from a timer that ticks in whole steps of q ns (32 ns on an H100). Both stamps of
//! an activity record are ticks, so every duration end − start is a whole number of ticks; the exporter's
//! conversion to session time (nsys) or to µs with three decimals (Kineto) rounds each stamp once more,
//! so a duration shows up as a multiple of q give or take 1 ns (measured: 3104, 3136, 4095, 18175 ns on
//! an H100, nsys and Kineto alike). The start stamps themselves are not on one grid after that
//! conversion, so q is read from the durations: the largest q that the distinct durations of the capture
//! fit, within 1 ns, all but one in twenty (a long graph execution of an H100 export sits 2 ns off:
//! 203838 ns).
//!
//! The rounding error of one duration: the true start and end fall anywhere between two ticks, and the
//! duration is rounded to a whole number of ticks through both. For a true duration m·q + r it reads
//! m·q with probability 1 − r/q and (m + 1)·q with probability r/q: unbiased, variance q²·(r/q)(1 − r/q),
//! at most q²/4 and on average over r q²/6 (the difference of two independent uniform errors on ±q/2,
//! not the q²/12 of a single rounding). A key's value in a capture sums n such durations, whose phases
//! against the timer are independent: its rounding error has variance n·q²/6.

/// Durations (ns) of the distinct kinds a capture must show before its grid is trusted: with fewer, any
/// q that happens to divide them all would pass, and the resolution is reported as 1 ns.
pub const MIN_DISTINCT: usize = 16;
/// The coarsest grid looked for (ns).
pub const MAX_RESOLUTION_NS: i64 = 4096;
/// How far a duration may sit from the grid (ns): the exporter's conversion rounds each stamp once.
pub const TOLERANCE_NS: i64 = 1;

/// The timer resolution (ns) the durations show: the largest q in 2..=[`MAX_RESOLUTION_NS`] such that
/// all but at most one in twenty of the distinct positive durations are within [`TOLERANCE_NS`] of a
/// multiple of q (exactly a multiple for q < 8, where 1 ns of slack would let any duration fit), among at
/// least [`MIN_DISTINCT`] distinct positive durations; 1 otherwise (no grid seen, or too few durations to
/// see one). Twice the true grid fits about half the durations, so it is never taken for it.
pub fn resolution(durations: impl IntoIterator<Item = i64>) -> i64 {
    let mut distinct: Vec<i64> = durations.into_iter().filter(|d| *d > 0).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < MIN_DISTINCT {
        return 1;
    }
    let allowed = distinct.len() / 20;
    // Largest grid first; most candidates fail on the first few durations.
    (2..=MAX_RESOLUTION_NS)
        .rev()
        .find(|&q| {
            let slack = if q >= 8 { TOLERANCE_NS } else { 0 };
            let mut misfits = 0;
            distinct.iter().all(|d| {
                let r = d % q;
                misfits += usize::from(r.min(q - r) > slack);
                misfits <= allowed
            })
        })
        .unwrap_or(1)
}

/// Variance (ns²) of the rounding error of a value that sums `instances` durations on a `q_ns` grid,
/// then is multiplied by `scale` (1 / steps when values are per step): instances · q² / 6 · scale².
pub fn rounding_variance(instances: f64, q_ns: f64, scale: f64) -> f64 {
    instances.max(0.0) * q_ns * q_ns / 6.0 * scale * scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_of_h100_durations_is_32_ns_despite_the_one_ns_conversion() {
        // Durations as an H100 nsys export shows them: multiples of 32, some 1 ns short.
        let durations: Vec<i64> = (1..40)
            .map(|i| 32 * (50 + 7 * i) - i64::from(i % 5 == 0))
            .collect();
        assert_eq!(resolution(durations.iter().copied()), 32);
        // One long graph execution 2 ns off the grid among them does not hide it.
        let mut with_graph = durations.clone();
        with_graph.push(203_838);
        assert_eq!(resolution(with_graph), 32);
        // Exact multiples of 1000 (a trace in whole µs).
        assert_eq!(resolution((1..30).map(|i| 1000 * (3 * i + 1))), 1000);
        // No grid: consecutive integers.
        assert_eq!(resolution(1000..1100), 1);
        // Too few distinct durations to tell a grid from a coincidence.
        assert_eq!(resolution([3136, 3104, 3136, 3168]), 1);
        assert_eq!(resolution(std::iter::empty()), 1);
    }

    #[test]
    fn rounding_variance_is_n_q_squared_over_six() {
        assert!((rounding_variance(1.0, 32.0, 1.0) - 1024.0 / 6.0).abs() < 1e-12);
        assert!((rounding_variance(6.0, 32.0, 1.0 / 6.0) - 1024.0 / 36.0).abs() < 1e-12);
        assert_eq!(rounding_variance(0.0, 32.0, 1.0), 0.0);
    }

    #[test]
    fn a_duration_rounded_through_both_stamps_has_variance_q_squared_over_six() {
        // True duration D = r (0 ≤ r < q) at a uniform phase φ of the start: the reading is
        // q·(⌊(φ + r)/q⌋ − ⌊φ/q⌋). Averaged over r and φ on a fine lattice: q²/6.
        let q = 32.0_f64;
        let steps = 256;
        let mut sum = 0.0;
        for i in 0..steps {
            for j in 0..steps {
                let r = q * (f64::from(i) + 0.5) / f64::from(steps);
                let phi = q * (f64::from(j) + 0.5) / f64::from(steps);
                let read = q * (((phi + r) / q).floor() - (phi / q).floor());
                sum += (read - r) * (read - r);
            }
        }
        let var = sum / f64::from(steps * steps);
        assert!((var - q * q / 6.0).abs() < 0.01 * q * q / 6.0, "{var}");
    }
}
