//! Student t tests for small samples (captures per side): Welch's unequal-variance test and the paired
//! t test, two-sided p-values from the regularized incomplete beta function (Lentz's continued fraction,
//! `libm::lgamma`, so the numbers do not depend on the platform's C library), and the critical values
//! that turn them into confidence intervals (so an interval and its test always agree).

/// The t statistic's parts for mean(b) − mean(a): the estimate, its standard error and degrees of
/// freedom, and the moments of the two means that a ratio interval (Fieller) needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    pub mean_a: f64,
    pub mean_b: f64,
    /// mean(b) − mean(a).
    pub estimate: f64,
    /// Var(mean(a)), Var(mean(b)) and Cov(mean(a), mean(b)) (0 unless paired).
    pub var_a: f64,
    pub var_b: f64,
    pub cov_ab: f64,
    /// √(var_a + var_b − 2·cov_ab).
    pub se: f64,
    /// Welch–Satterthwaite (unpaired) or n − 1 (paired).
    pub df: f64,
}

impl TTest {
    /// Welch's test; None with fewer than two values a side.
    pub fn welch(a: &[f64], b: &[f64]) -> Option<Self> {
        Self::welch_floored(a, b, 0.0, 0.0)
    }

    /// Welch's test with a floor under each side's sample variance: `floor_a` and `floor_b` are the
    /// variances (of one value) that the measurement alone puts into a side's values (the timer's
    /// rounding, [`crate::profile::timer`]); an observed spread below that is no evidence of precision.
    pub fn welch_floored(a: &[f64], b: &[f64], floor_a: f64, floor_b: f64) -> Option<Self> {
        let (ma, va, na) = moments(a)?;
        let (mb, vb, nb) = moments(b)?;
        let (sa, sb) = (va.max(floor_a) / na, vb.max(floor_b) / nb);
        let se2 = sa + sb;
        let df = if se2 > 0.0 {
            se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0))
        } else {
            na + nb - 2.0
        };
        Some(Self {
            mean_a: ma,
            mean_b: mb,
            estimate: mb - ma,
            var_a: sa,
            var_b: sb,
            cov_ab: 0.0,
            se: se2.sqrt(),
            df,
        })
    }

    /// The paired test of b[i] − a[i]; None with fewer than two pairs or unequal lengths.
    pub fn paired(a: &[f64], b: &[f64]) -> Option<Self> {
        Self::paired_floored(a, b, 0.0, 0.0)
    }

    /// The paired test with a floor under the sample variance of the differences: `floor_a + floor_b`,
    /// the measurement's variance (of one value) on each side, which adds in a difference of two
    /// independent measurements. When the floor binds, its excess over the observed variance is added to
    /// Var(mean(a)) and Var(mean(b)) in the ratio floor_a : floor_b, so Fieller's ratio interval keeps
    /// holding 1 exactly when the difference's interval holds 0.
    pub fn paired_floored(a: &[f64], b: &[f64], floor_a: f64, floor_b: f64) -> Option<Self> {
        if a.len() != b.len() {
            return None;
        }
        let (ma, va, n) = moments(a)?;
        let (mb, vb, _) = moments(b)?;
        let cov = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - ma) * (y - mb))
            .sum::<f64>()
            / (n - 1.0);
        let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
        let (md, vd, _) = moments(&d)?;
        let floor = floor_a.max(0.0) + floor_b.max(0.0);
        let excess = (floor - vd).max(0.0);
        let (ea, eb) = if excess > 0.0 {
            (
                excess * floor_a.max(0.0) / floor,
                excess * floor_b.max(0.0) / floor,
            )
        } else {
            (0.0, 0.0)
        };
        Some(Self {
            mean_a: ma,
            mean_b: mb,
            estimate: md,
            var_a: (va + ea) / n,
            var_b: (vb + eb) / n,
            cov_ab: cov / n,
            se: (vd.max(floor) / n).max(0.0).sqrt(),
            df: n - 1.0,
        })
    }

    /// Two-sided p-value. Without spread: 1 when the estimate is 0, else 0.
    pub fn p_value(&self) -> f64 {
        if self.se <= 0.0 {
            return if self.estimate == 0.0 { 1.0 } else { 0.0 };
        }
        t_two_sided((self.estimate / self.se).abs(), self.df)
    }

    /// The interval of the difference at two-sided level `alpha`: estimate ± t(α)·se. It excludes 0
    /// exactly when `p_value() < alpha` (the same t distribution).
    pub fn interval(&self, alpha: f64) -> (f64, f64) {
        let half = t_critical(alpha, self.df) * self.se;
        (self.estimate - half, self.estimate + half)
    }

    /// Fieller's interval of the ratio mean(b)/mean(a) at two-sided level `alpha`, with the same t
    /// critical value and standard errors as [`TTest::interval`]: the set of ρ with
    /// (m_b − ρ·m_a)² ≤ t²·Var(m_b − ρ·m_a). It holds 1 exactly when the difference's interval holds 0.
    /// None when the set is unbounded (mean(a) is not distinguishable from 0 at this level).
    pub fn ratio_interval(&self, alpha: f64) -> Option<(f64, f64)> {
        let t2 = {
            let t = t_critical(alpha, self.df);
            t * t
        };
        let (ma, mb) = (self.mean_a, self.mean_b);
        let qa = ma * ma - t2 * self.var_a;
        if qa.is_nan() || qa <= 0.0 {
            return None;
        }
        let qb = ma * mb - t2 * self.cov_ab;
        let qc = mb * mb - t2 * self.var_b;
        let root = (qb * qb - qa * qc).max(0.0).sqrt();
        Some(((qb - root) / qa, (qb + root) / qa))
    }
}

/// Two-sided p-value of Welch's t test for mean(b) − mean(a); None with fewer than two values a side.
/// Both sides without spread: 1 when the means are equal, else 0.
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    TTest::welch(a, b).map(|t| t.p_value())
}

/// Two-sided p-value of the paired t test of the differences b[i] − a[i]; None with fewer than two pairs.
pub fn paired_p(a: &[f64], b: &[f64]) -> Option<f64> {
    TTest::paired(a, b).map(|t| t.p_value())
}

/// The t value whose two-sided tail probability is `alpha` (0 < alpha < 1) at `df` degrees of freedom:
/// `t_two_sided(t_critical(alpha, df), df) == alpha` to about 1e-13 relative. Bisection on the tail,
/// which is monotone in t.
pub fn t_critical(alpha: f64, df: f64) -> f64 {
    if !(alpha > 0.0 && alpha < 1.0 && df > 0.0) {
        return f64::INFINITY;
    }
    let mut high = 1.0;
    while t_two_sided(high, df) > alpha {
        high *= 2.0;
        if high > 1e300 {
            return f64::INFINITY;
        }
    }
    let mut low = 0.0;
    for _ in 0..2000 {
        let mid = 0.5 * (low + high);
        if mid <= low || mid >= high {
            break;
        }
        if t_two_sided(mid, df) > alpha {
            low = mid;
        } else {
            high = mid;
        }
    }
    high
}

/// Mean, sample variance (n − 1) and n, for n ≥ 2.
fn moments(x: &[f64]) -> Option<(f64, f64, f64)> {
    if x.len() < 2 {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    Some((mean, var, n))
}

/// P(|T| ≥ t) for T ~ Student t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
pub fn t_two_sided(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    incomplete_beta(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

/// The regularized incomplete beta function I_x(a, b).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b)
        + a * libm::log(x)
        + b * libm::log1p(-x);
    let front = libm::exp(ln_front);
    if x < (a + 1.0) / (a + b + 2.0) {
        front * continued_fraction(a, b, x) / a
    } else {
        1.0 - front * continued_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of I_x(a, b) (modified Lentz).
fn continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..400 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_give_their_tail_probabilities() {
        // scipy.stats.t.ppf(0.975, df) for df 10 and 4, and ppf(0.995, 2).
        assert!((t_two_sided(2.228_138_851_986_274, 10.0) - 0.05).abs() < 1e-12);
        assert!((t_two_sided(2.776_445_105_197_793_4, 4.0) - 0.05).abs() < 1e-12);
        assert!((t_two_sided(9.924_843_200_918_287, 2.0) - 0.01).abs() < 1e-12);
        assert_eq!(t_two_sided(0.0, 5.0), 1.0);
    }

    #[test]
    fn critical_values_invert_the_tail() {
        // scipy.stats.t.ppf(0.975, 10), t.ppf(1 - 0.05/58, 1) and ppf(0.975, 3.7).
        assert!((t_critical(0.05, 10.0) - 2.228_138_851_986_274).abs() < 1e-11);
        let far = t_critical(0.05 / 29.0, 1.0);
        assert!((far - 369.238_565_216_257_26).abs() / far < 1e-10, "{far}");
        for (alpha, df) in [(0.05, 3.7), (1e-4, 2.0), (0.3, 40.0)] {
            let t = t_critical(alpha, df);
            assert!((t_two_sided(t, df) - alpha).abs() < 1e-12 * alpha.max(1e-3));
        }
    }

    #[test]
    fn interval_and_test_agree_and_fieller_holds_one_exactly_then() {
        let (a, b) = ([100.0, 103.0, 98.0, 101.0], [104.0, 108.0, 101.0, 103.0]);
        for t in [TTest::welch(&a, &b), TTest::paired(&a, &b)]
            .into_iter()
            .flatten()
        {
            let p = t.p_value();
            for alpha in [p * 0.999, p * 1.001] {
                let (lo, hi) = t.interval(alpha);
                let (rlo, rhi) = t.ratio_interval(alpha).unwrap_or((f64::NAN, f64::NAN));
                let excludes = lo > 0.0 || hi < 0.0;
                assert_eq!(excludes, p < alpha, "{alpha} {lo} {hi}");
                assert_eq!(rlo > 1.0 || rhi < 1.0, excludes);
                assert!(rlo <= t.mean_b / t.mean_a && t.mean_b / t.mean_a <= rhi);
            }
        }
        // Welch by hand (scipy.stats.ttest_ind(b, a, equal_var=False)): t 1.94145..., df 5.4.
        let w = TTest::welch(&a, &b).unwrap_or_else(|| unreachable!());
        assert!((w.estimate - 3.5).abs() < 1e-12);
        assert!((w.estimate / w.se - 1.941_450_686_788_302).abs() < 1e-12);
        assert!(
            (w.df - 5.4).abs() < 1e-12 && (w.p_value() - 0.105_595_263_348_079_78).abs() < 1e-12
        );
    }

    #[test]
    fn a_ratio_whose_denominator_could_be_zero_has_no_interval() {
        let t = TTest::welch(&[0.0, 10.0], &[5.0, 6.0]).unwrap_or_else(|| unreachable!());
        assert_eq!(t.ratio_interval(0.05), None);
    }

    #[test]
    fn welch_and_paired_by_hand() {
        // scipy.stats.ttest_ind(a, b, equal_var=False) and ttest_rel(a, b) p-values.
        let (a, b) = ([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]);
        let p = welch_p(&a, &b).unwrap_or(f64::NAN);
        assert!((p - 0.220_880_840_494_095_93).abs() < 1e-12, "{p}");
        let p = paired_p(&a, &b).unwrap_or(f64::NAN);
        assert!((p - 0.074_179_900_227_448_54).abs() < 1e-12, "{p}");
        assert_eq!(welch_p(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(welch_p(&[1.0, 1.0], &[1.0, 1.0]), Some(1.0));
        assert_eq!(welch_p(&[1.0, 1.0], &[2.0, 2.0]), Some(0.0));
    }
}
