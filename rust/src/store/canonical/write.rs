//! The canonical writer (RFC 8785): keys in UTF-16 order, no whitespace, ECMAScript numbers.

use super::parse::parse_strict;
use super::value::Json;
use crate::error::{Error, Result};
use crate::store::codes;

/// The canonical (RFC 8785) text of a value.
pub fn to_canonical(value: &Json) -> Result<String> {
    let mut out = String::new();
    write_value(value, &mut out)?;
    Ok(out)
}

/// Strict parse followed by canonical serialization.
pub fn canonicalize(bytes: &[u8]) -> Result<String> {
    to_canonical(&parse_strict(bytes)?)
}

fn write_value(value: &Json, out: &mut String) -> Result<()> {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(true) => out.push_str("true"),
        Json::Bool(false) => out.push_str("false"),
        Json::Number(n) => out.push_str(&format_number(*n)?),
        Json::String(s) => write_string(s, out),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out)?;
            }
            out.push(']');
        }
        Json::Object(members) => {
            let mut sorted: Vec<(Vec<u16>, &String, &Json)> = members
                .iter()
                .map(|(k, v)| (k.encode_utf16().collect(), k, v))
                .collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            out.push('{');
            for (i, (_, key, item)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_value(item, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// ECMAScript `Number.prototype.toString` for a finite double (RFC 8785 §3.2.2.3).
pub fn format_number(value: f64) -> Result<String> {
    if !value.is_finite() {
        return Err(Error::input(
            codes::JSON_INVALID,
            "NaN and Infinity have no JSON representation",
        ));
    }
    if value == 0.0 {
        return Ok("0".to_string());
    }
    // Rust's `{:e}` prints the shortest digit count that round-trips, e.g. "1.2345e-7". Among digit strings
    // of that length ECMAScript wants the one closest to the exact value, ties to even, which is what the
    // exact (correctly rounded, half-even) formatting at that precision gives.
    let shortest = format!("{:e}", value.abs());
    let k_digits = shortest
        .split_once('e')
        .map_or(shortest.as_str(), |(m, _)| m)
        .chars()
        .filter(char::is_ascii_digit)
        .count();
    let exact = format!("{:.*e}", k_digits.saturating_sub(1), value.abs());
    let sci = if exact.parse::<f64>().ok() == Some(value.abs()) {
        exact
    } else {
        shortest
    };
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exponent.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let n = exp + 1; // the decimal point sits after n digits
    let mut out = String::new();
    if value < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (head, tail) = digits.split_at(n as usize);
        out.push_str(head);
        out.push('.');
        out.push_str(tail);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        let (head, tail) = digits.split_at(1);
        out.push_str(head);
        if !tail.is_empty() {
            out.push('.');
            out.push_str(tail);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        canonicalize(s.as_bytes()).unwrap()
    }

    #[test]
    fn rfc8785_number_vectors() {
        let vectors: [(u64, &str); 24] = [
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for (bits, expected) in vectors {
            assert_eq!(
                format_number(f64::from_bits(bits)).unwrap(),
                expected,
                "{bits:#x}"
            );
        }
        assert!(format_number(f64::NAN).is_err());
        assert!(format_number(f64::INFINITY).is_err());
    }

    #[test]
    fn rfc8785_example_document() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        assert_eq!(
            canon(input),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn rfc8785_key_order_is_utf16() {
        let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
        let out = canon(input);
        let order: Vec<&str> = [
            "\\r",
            "\"1\"",
            "\u{80}",
            "\u{f6}",
            "\u{20ac}",
            "\u{1F600}",
            "\u{fb33}",
        ]
        .to_vec();
        let mut last = 0;
        for key in order {
            let at = out.find(key).unwrap();
            assert!(at >= last, "{key} out of order in {out}");
            last = at;
        }
    }

    #[test]
    fn integers_and_floats_share_one_form() {
        assert_eq!(
            canon("[1, 1.0, 1e0, -0, 0.5, 100, 1e21, 1e-7]"),
            "[1,1,1,0,0.5,100,1e+21,1e-7]"
        );
    }
}
