//! Kineto timestamps: JSON numbers in microseconds, converted once to integer nanoseconds, exactly.
//!
//! The rule: the number's decimal text is read digit by digit (never through a binary float), scaled
//! by 1000, and digits below one nanosecond, if any, are rounded half away from zero. So
//! `1.023` becomes `1023` ns, where truncating `1.023_f64 * 1000.0` gives 1022 (the H200 fixture has
//! seven such values); rounding the float product instead fails for large timestamps, whose `f64`
//! spacing exceeds a nanosecond. Exponents (`1.5e3`) are accepted; anything else that is not a JSON number,
//! or a value outside the `i64` nanosecond range, is rejected (`None`).

/// More significant digits than this cannot come from a profiler; rejecting them keeps `i128` exact.
const MAX_DIGITS: u32 = 36;

/// `text` (a JSON number, µs) as integer nanoseconds; `None` if it is not a number or out of range.
pub fn micros_to_ns(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if let Some(ns) = plain_micros_to_ns(bytes) {
        return Some(ns);
    }
    let (negative, rest) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let mut mantissa: i128 = 0;
    let mut digits: u32 = 0;
    let mut fraction_digits: i32 = 0;
    let mut int_digits = 0;
    let mut iter = rest.iter().peekable();
    while let Some(&&b) = iter.peek() {
        if !b.is_ascii_digit() {
            break;
        }
        push_digit(&mut mantissa, &mut digits, b)?;
        int_digits += 1;
        iter.next();
    }
    if int_digits == 0 {
        return None;
    }
    if iter.peek() == Some(&&b'.') {
        iter.next();
        let mut frac = 0;
        while let Some(&&b) = iter.peek() {
            if !b.is_ascii_digit() {
                break;
            }
            push_digit(&mut mantissa, &mut digits, b)?;
            fraction_digits += 1;
            frac += 1;
            iter.next();
        }
        if frac == 0 {
            return None;
        }
    }
    let mut exponent: i32 = 0;
    if matches!(iter.peek(), Some(&&b'e') | Some(&&b'E')) {
        iter.next();
        let exp_negative = match iter.peek() {
            Some(&&b'-') => {
                iter.next();
                true
            }
            Some(&&b'+') => {
                iter.next();
                false
            }
            _ => false,
        };
        let mut exp_digits = 0;
        while let Some(&&b) = iter.peek() {
            if !b.is_ascii_digit() {
                break;
            }
            exponent = exponent.checked_mul(10)?.checked_add(i32::from(b - b'0'))?;
            if exponent > 1000 {
                return None;
            }
            exp_digits += 1;
            iter.next();
        }
        if exp_digits == 0 {
            return None;
        }
        if exp_negative {
            exponent = -exponent;
        }
    }
    if iter.next().is_some() {
        return None;
    }
    // value_ns = mantissa * 10^(exponent - fraction_digits + 3)
    let scale = exponent - fraction_digits + 3;
    let magnitude = if mantissa == 0 {
        0
    } else if scale >= 0 {
        mantissa.checked_mul(10_i128.checked_pow(u32::try_from(scale).ok()?)?)?
    } else {
        let divisor = u32::try_from(-scale)
            .ok()
            .and_then(|s| 10_i128.checked_pow(s));
        match divisor {
            // Fewer than 10^38: a correct quotient and half-away-from-zero rounding.
            Some(divisor) => {
                let quotient = mantissa / divisor;
                let remainder = mantissa % divisor;
                if remainder.checked_mul(2)? >= divisor {
                    quotient + 1
                } else {
                    quotient
                }
            }
            // The mantissa has at most 36 digits, so dividing by ≥ 10^39 leaves less than half.
            None => 0,
        }
    };
    let signed = if negative { -magnitude } else { magnitude };
    i64::try_from(signed).ok()
}

/// Kineto's own form, `digits` or `digits.ddd` (at most 15 integer and 3 fraction digits): no
/// rounding, and the result fits `i64`, so plain integer arithmetic gives the general rule's answer.
fn plain_micros_to_ns(bytes: &[u8]) -> Option<i64> {
    let mut int: i64 = 0;
    let mut i = 0;
    loop {
        match bytes.get(i) {
            Some(&b) if b.is_ascii_digit() => {
                if i == 15 {
                    return None;
                }
                int = int * 10 + i64::from(b - b'0');
                i += 1;
            }
            Some(b'.') if i > 0 => break,
            None if i > 0 => return Some(int * 1000),
            _ => return None,
        }
    }
    let fraction = bytes.get(i + 1..)?;
    let scale = match fraction.len() {
        1 => 100,
        2 => 10,
        3 => 1,
        _ => return None,
    };
    let mut frac: i64 = 0;
    for &b in fraction {
        if !b.is_ascii_digit() {
            return None;
        }
        frac = frac * 10 + i64::from(b - b'0');
    }
    Some(int * 1000 + frac * scale)
}

fn push_digit(mantissa: &mut i128, digits: &mut u32, byte: u8) -> Option<()> {
    if *mantissa != 0 || byte != b'0' {
        *digits += 1;
    }
    if *digits > MAX_DIGITS {
        return None;
    }
    *mantissa = *mantissa * 10 + i128::from(byte - b'0');
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn converts_exactly_where_a_float_would_not() {
        assert_eq!(
            micros_to_ns("5352965319261.292"),
            Some(5_352_965_319_261_292)
        );
        // A value from the H200 fixture where the float route truncates to 1022.
        assert_eq!((1.023_f64 * 1000.0) as i64, 1022);
        assert_eq!(micros_to_ns("1.023"), Some(1023));
        assert_eq!(micros_to_ns("2.016"), Some(2016));
        assert_eq!(micros_to_ns("0.768"), Some(768));
        assert_eq!(
            micros_to_ns("1610366662254362"),
            Some(1_610_366_662_254_362_000)
        );
        assert_eq!(
            micros_to_ns("1712195495519695.8"),
            Some(1_712_195_495_519_695_800)
        );
        assert_eq!(micros_to_ns("0"), Some(0));
        assert_eq!(micros_to_ns("-0.5"), Some(-500));
    }

    #[test]
    fn rounds_sub_nanosecond_digits_half_away_from_zero() {
        assert_eq!(micros_to_ns("1.0004"), Some(1000));
        assert_eq!(micros_to_ns("1.0005"), Some(1001));
        assert_eq!(micros_to_ns("-1.0005"), Some(-1001));
        assert_eq!(micros_to_ns("0.0000001"), Some(0));
    }

    #[test]
    fn accepts_exponents() {
        assert_eq!(micros_to_ns("1.5e3"), Some(1_500_000));
        assert_eq!(micros_to_ns("15E-1"), Some(1500));
        assert_eq!(micros_to_ns("1e-2000"), None);
        assert_eq!(micros_to_ns("1e-30"), Some(0));
    }

    #[test]
    fn rejects_what_is_not_a_number_or_out_of_range() {
        for bad in [
            "",
            "-",
            "NaN",
            "\"1\"",
            "1.",
            ".5",
            "1e",
            "1x",
            "null",
            "9223372036854775.808",
        ] {
            assert_eq!(micros_to_ns(bad), None, "{bad}");
        }
        assert_eq!(micros_to_ns("9223372036854775.807"), Some(i64::MAX));
    }

    proptest! {
        #[test]
        fn the_plain_form_agrees_with_the_general_rule(int in "[0-9]{1,16}", frac in "(\\.[0-9]{0,4})?") {
            let text = format!("{int}{frac}");
            if let Some(ns) = plain_micros_to_ns(text.as_bytes()) {
                // The general rule, on the same text (the plain form skipped by a prefix).
                prop_assert_eq!(micros_to_ns(&format!("{text}e0")), Some(ns));
            }
        }

        #[test]
        fn three_decimal_text_is_exact(us in 0i64..4_000_000_000_000_000, frac in 0i64..1000) {
            let text = format!("{us}.{frac:03}");
            let expected = us.checked_mul(1000).and_then(|v| v.checked_add(frac));
            prop_assert_eq!(micros_to_ns(&text), expected);
        }
    }
}
