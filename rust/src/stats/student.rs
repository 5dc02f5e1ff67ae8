//! Student t tests for small samples (captures per side): Welch's unequal-variance test and the paired
//! t test, two-sided p-values from the regularized incomplete beta function (Lentz's continued fraction,
//! `libm::lgamma`, so the numbers do not depend on the platform's C library).

/// Two-sided p-value of Welch's t test for mean(b) − mean(a); None with fewer than two values a side.
/// Both sides without spread: 1 when the means are equal, else 0.
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (ma, va, na) = moments(a)?;
    let (mb, vb, nb) = moments(b)?;
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    if se2 <= 0.0 {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    Some(t_two_sided(((mb - ma) / se2.sqrt()).abs(), df))
}

/// Two-sided p-value of the paired t test of the differences b[i] − a[i]; None with fewer than two pairs.
pub fn paired_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    let (m, v, n) = moments(&d)?;
    if v <= 0.0 {
        return Some(if m == 0.0 { 1.0 } else { 0.0 });
    }
    Some(t_two_sided((m / (v / n).sqrt()).abs(), n - 1.0))
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
