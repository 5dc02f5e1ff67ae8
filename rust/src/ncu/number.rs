//! One ncu cell as text → a number, a missing value or text.
//!
//! ncu prints numbers with thousands separators (`14,648.51`, `4,199,424`), `n/a` or an empty cell for a
//! metric undefined for a launch, `nan` for a failed division and `no data` when nothing was sampled.
//! Commas must form proper thousands groups; anything else that is not a number stays text.

/// A cell after parsing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Parsed {
    Number(f64),
    Missing,
    Text,
}

/// The exact spellings ncu uses for "no value".
const MISSING: &[&[u8]] = &[b"", b"n/a", b"N/A", b"nan", b"-nan", b"NaN", b"no data"];

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Parses one cell (already unquoted). Never panics; allocation only on the slow path.
pub fn parse(cell: &[u8]) -> Parsed {
    // Fast path: most cells are plain numbers and need neither trimming nor the marker list.
    if cell.first().is_some_and(|b| b.is_ascii_digit()) {
        if let Some(v) = scan(cell) {
            return Parsed::Number(v);
        }
    }
    let cell = trim(cell);
    if MISSING.contains(&cell) {
        return Parsed::Missing;
    }
    match scan(cell) {
        Some(scanned) => Parsed::Number(scanned),
        None => Parsed::Text,
    }
}

/// [`parse`], the number in its base unit (`value × factor`). A value that overflows there (`1e308`
/// ms as ns) is text, as one that overflows as written (`1e309`): reading it where a number belongs
/// is `ncu_value_invalid`, never an infinite total.
pub fn parse_in(cell: &[u8], factor: f64) -> Parsed {
    match parse(cell) {
        Parsed::Number(v) => in_base(v, factor).map_or(Parsed::Text, Parsed::Number),
        other => other,
    }
}

/// `value × factor` when it is finite.
pub fn in_base(value: f64, factor: f64) -> Option<f64> {
    Some(value * factor).filter(|v| v.is_finite())
}

fn trim(cell: &[u8]) -> &[u8] {
    let start = cell.iter().position(|b| *b != b' ').unwrap_or(cell.len());
    let end = cell
        .iter()
        .rposition(|b| *b != b' ')
        .map_or(start, |e| e + 1);
    cell.get(start..end).unwrap_or_default()
}

/// Validates the grammar `[+-]? int(,ddd)* (.d+)? ([eE][+-]?d+)?` and returns the value.
fn scan(s: &[u8]) -> Option<f64> {
    let (negative, body) = match s.first() {
        Some(b'-') => (true, s.get(1..)?),
        Some(b'+') => (false, s.get(1..)?),
        _ => (false, s),
    };
    let mut i = 0;
    let mut mantissa: u64 = 0;
    let mut digits = 0usize; // significant digits accumulated in `mantissa`
    let mut int_digits = 0usize;
    let mut group = 0usize; // digits since the last comma
    let mut saw_comma = false;
    while let Some(&b) = body.get(i) {
        match b {
            b'0'..=b'9' => {
                push_digit(&mut mantissa, &mut digits, b);
                int_digits += 1;
                group += 1;
                if saw_comma && group > 3 {
                    return None;
                }
            }
            b',' => {
                let first_group_ok = saw_comma || (1..=3).contains(&group);
                if !first_group_ok || (saw_comma && group != 3) {
                    return None;
                }
                saw_comma = true;
                group = 0;
            }
            _ => break,
        }
        i += 1;
    }
    if int_digits == 0 || (saw_comma && group != 3) {
        return None;
    }
    let mut decimals = 0usize;
    if body.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&b) = body.get(i) {
            if !b.is_ascii_digit() {
                break;
            }
            push_digit(&mut mantissa, &mut digits, b);
            decimals += 1;
            i += 1;
        }
        if decimals == 0 {
            return None;
        }
    }
    let mut has_exponent = false;
    if matches!(body.get(i), Some(b'e' | b'E')) {
        has_exponent = true;
        i += 1;
        if matches!(body.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        while body.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    if i != body.len() {
        return None;
    }
    let value = if !has_exponent && digits <= 15 && decimals < POW10.len() {
        // Clinger's fast path: both operands are exact, so one division is correctly rounded.
        let scale = POW10.get(decimals).copied().unwrap_or(1.0);
        mantissa as f64 / scale
    } else {
        slow_parse(body)?
    };
    Some(if negative { -value } else { value })
}

fn push_digit(mantissa: &mut u64, digits: &mut usize, b: u8) {
    if *digits == 0 && b == b'0' {
        return; // leading zeros carry no precision
    }
    if *digits < 19 {
        *mantissa = *mantissa * 10 + u64::from(b - b'0');
    }
    *digits += 1;
}

fn slow_parse(body: &[u8]) -> Option<f64> {
    let cleaned: String = body
        .iter()
        .filter(|b| **b != b',')
        .map(|b| char::from(*b))
        .collect();
    cleaned.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Parsed {
        parse(s.as_bytes())
    }

    #[test]
    fn a_value_overflowing_in_its_base_unit_is_text() {
        assert_eq!(parse_in(b"2.5", 1e6), Parsed::Number(2.5e6));
        assert_eq!(parse_in(b"1e308", 1e6), Parsed::Text);
        assert_eq!(parse_in(b"1e309", 1.0), Parsed::Text);
        assert_eq!(parse_in(b"n/a", 1e6), Parsed::Missing);
        assert_eq!(in_base(-1e308, 1e3), None);
    }

    #[test]
    fn thousands_separators_and_decimals() {
        assert_eq!(n("14,648.51"), Parsed::Number(14648.51));
        assert_eq!(n("4,199,424"), Parsed::Number(4_199_424.0));
        assert_eq!(
            n("16,712,501,505,981,702"),
            Parsed::Number(16_712_501_505_981_702.0)
        );
        assert_eq!(n("0.000000"), Parsed::Number(0.0));
        assert_eq!(n("83850.689394"), Parsed::Number(83850.689394));
        assert_eq!(n("-3.5"), Parsed::Number(-3.5));
        assert_eq!(n("1.5e3"), Parsed::Number(1500.0));
        assert_eq!(
            n("0.08695652173913043"),
            Parsed::Number(0.086_956_521_739_130_43)
        );
    }

    #[test]
    fn fast_path_matches_std() {
        for s in [
            "0.1",
            "2.3",
            "45472",
            "61.38",
            "1,504",
            "0.30",
            "190.98",
            "123456789012345",
        ] {
            let std: f64 = s.replace(',', "").parse().unwrap();
            assert_eq!(n(s), Parsed::Number(std), "{s}");
        }
    }

    #[test]
    fn missing_markers() {
        for s in ["", "n/a", "nan", "no data", "  "] {
            assert_eq!(n(s), Parsed::Missing, "{s:?}");
        }
    }

    #[test]
    fn text_is_not_guessed_as_a_number() {
        for s in [
            "NVIDIA H200",
            "1,2",
            "12,3456",
            ",123",
            "1.",
            ".5",
            "1e",
            "(256, 1, 1)",
            "inf",
            "1,234,5",
        ] {
            assert_eq!(n(s), Parsed::Text, "{s:?}");
        }
    }
}
