//! Multiple comparisons: Benjamini–Hochberg adjusted p-values (q-values). Rejecting every hypothesis with
//! q ≤ α controls the false-discovery rate at α for independent or positively dependent tests; under the
//! complete null (an A/A comparison) that is also the chance of flagging anything at all.

/// BH q-values of `p` (None: not tested, kept None and not counted in m). q₍ᵢ₎ = min_{j ≥ i} m·p₍ⱼ₎/j,
/// capped at 1, in the input order.
pub fn benjamini_hochberg(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<(usize, f64)> = p
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let m = order.len() as f64;
    let mut out = vec![None; p.len()];
    let mut running = 1.0_f64;
    for (rank, &(index, value)) in order.iter().enumerate().rev() {
        let scaled = (value * m / (rank as f64 + 1.0)).min(1.0);
        running = running.min(scaled);
        if let Some(slot) = out.get_mut(index) {
            *slot = Some(running);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_values_by_hand() {
        // m = 4: sorted p 0.01, 0.02, 0.03, 0.5 → 0.04, 0.04, 0.04, 0.5 (monotone from the top).
        let q = benjamini_hochberg(&[Some(0.03), Some(0.5), None, Some(0.01), Some(0.02)]);
        let want = [Some(0.04), Some(0.5), None, Some(0.04), Some(0.04)];
        for (got, want) in q.iter().zip(want) {
            match (got, want) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-15, "{g} vs {w}"),
                (None, None) => {}
                _ => panic!("{q:?}"),
            }
        }
    }

    #[test]
    fn q_values_are_capped_at_one() {
        assert_eq!(
            benjamini_hochberg(&[Some(0.9), Some(0.95)]),
            vec![Some(0.95), Some(0.95)]
        );
        assert_eq!(benjamini_hochberg(&[]), Vec::<Option<f64>>::new());
    }
}
