//! The JSON pieces of `scan`, against serde_json and against each other.

use super::*;

/// The reference for [`Cursor::int_or_number`]: the value of an integer text (no `.` or exponent)
/// as serde_json gives it to a visitor that takes `i64`: up to 18 digits (larger ones it may turn
/// into floats), and not `-0` (a float to it).
fn small_int(text: &str) -> Quick<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if digits.is_empty() || digits.len() > 18 {
        return Err(GiveUp);
    }
    let mut value: i64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return Err(GiveUp);
        }
        value = value * 10 + i64::from(b - b'0');
    }
    match (negative, value) {
        (false, v) => Ok(v),
        (true, 0) => Err(GiveUp),
        (true, v) => Ok(-v),
    }
}

fn skipped(text: &str) -> Quick<usize> {
    let mut c = Cursor::new(text);
    c.skip_value(0)?;
    Ok(c.pos)
}

#[test]
fn finds_the_first_stop_byte_in_any_position() {
    for len in 0..20 {
        for stop in [b'"', b'\\', b'\n', 0x00, 0x1f] {
            let mut text = vec![b'a'; len + 3];
            text[len] = stop;
            text[len + 2] = b'"';
            assert_eq!(string_stop(&text, 0), len, "{len} {stop}");
        }
        assert_eq!(string_stop(&vec![0xc3; len], 0), len);
    }
    assert_eq!(string_stop(b"ab\"", 5), 3);
}

#[test]
fn skips_valid_values_and_gives_up_on_invalid_ones() {
    let good = [
        r#"[[8, 1024, 1024], [], [1.5e-3, -0, "x\"\u00e9"]] ,"#,
        r#"{"a": {"b": [true, false, null]}, "c\n": 1} ,"#,
        "-12.5E+3 ,",
        "0 ,",
    ];
    for text in good {
        let got = skipped(text).unwrap();
        assert_eq!(text.get(got..), Some(" ,"), "{text}");
    }
    let bad = [
        "01,",
        "1.,",
        "-,",
        "1e,",
        ".5,",
        "[1,]",
        "[1 2]",
        "{\"a\" 1}",
        "{1: 2}",
        "tru,",
        "nul",
        "\"a\u{1}\"",
        r#""\x""#,
        r#""\u12g4""#,
        "NaN",
        "[1",
        "12",
        "\"abc",
    ];
    for text in bad {
        assert_eq!(skipped(text), Err(GiveUp), "{text:?}");
    }
    for text in [
        "[[], [1, []], [[[]]], \"a\", {\"b\": [2]}, null] ,",
        "[ ] ,",
        "[[ ]] ,",
    ] {
        let got = skipped(text).unwrap();
        assert_eq!(text.get(got..), Some(" ,"), "{text}");
    }
    for text in [
        "[1,]",
        "[,1]",
        "[[]",
        "[]]",
        "[1 [2]]",
        "[[1],,[2]]",
        "[1]x",
        "[-]",
        "[01]",
    ] {
        let mut c = Cursor::new(text);
        let ok = c.skip_value(0).is_ok() && c.peek() == Err(GiveUp);
        assert!(
            !ok || serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok(),
            "{text}"
        );
    }
    let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
    assert_eq!(skipped(&deep), Err(GiveUp));
}

#[test]
fn digit_runs_end_at_the_first_other_byte() {
    let text = b"0123456789012345678901234";
    for start in 0..text.len() {
        for stop in start..text.len() {
            for other in [b'.', b'/', b':', b'e', b' ', 0x80, 0xb9, b'\0', b'\x3a'] {
                let mut t = text.to_vec();
                t[stop] = other;
                assert_eq!(digits_end(&t, start), stop);
            }
        }
        assert_eq!(digits_end(text, start), text.len());
    }
}

#[test]
fn digit_runs_read_by_words_agree_with_bytes() {
    let text = b"9876543210123456789012345";
    for start in 0..text.len() {
        for stop in start..=text.len() {
            let mut t = text.to_vec();
            if let Some(b) = t.get_mut(stop) {
                *b = b'.';
            }
            for max in 0..=18 {
                let words = digit_run(&t, start, max);
                let bytes = digit_run_bytes(&t, start, start + max, 0);
                assert_eq!(words, bytes, "start {start} stop {stop} max {max}");
            }
        }
    }
}

#[test]
fn int_or_number_splits_as_small_int_does() {
    for text in [
        "0",
        "7",
        "-7",
        "-0",
        "00",
        "01",
        "-01",
        "12.5",
        "1e3",
        "-",
        "123456789012345678",
        "1234567890123456789",
        "-123456789012345678",
        "99999999999999999999",
        "0.0",
        "-0.5",
    ] {
        int_or_number_agrees(text);
    }
    // Every length around the one-word form's limit (7 digits), with a leading zero or not, a sign
    // or not, and each byte that may follow.
    for digits in 1..21 {
        for lead in ["1", "0", "9"] {
            let int: String = (0..digits)
                .map(|i| if i == 0 { lead } else { ["3", "0", "7"][i % 3] })
                .collect();
            for sign in ["", "-"] {
                for frac in ["", ".5", "e3", "E-1", "."] {
                    int_or_number_agrees(&format!("{sign}{int}{frac}"));
                }
            }
        }
    }
}

/// `int_or_number` on `text` followed by a short and a long tail (the one-word form needs 8 bytes)
/// agrees with reading the number's text and then `small_int`, and ends where it does.
fn int_or_number_agrees(text: &str) {
    for tail in [",", "]", "}", " ", ", \"tid\": 821, \"ts\": 1}", "x", "e"] {
        let padded = format!("{text}{tail}");
        let mut c = Cursor::new(&padded);
        let fused = c.int_or_number();
        let mut d = Cursor::new(&padded);
        let plain = d.number().map(|t| small_int(t).map_err(|_| t));
        assert_eq!(fused, plain, "{padded}");
        if fused.is_ok() {
            assert_eq!(c.pos, d.pos, "{padded}");
        }
    }
}

#[test]
fn plain_micros_agree_with_the_general_rule() {
    for text in [
        "0",
        "0.5",
        "00.5",
        "01",
        "1.",
        "1.5",
        "1.25",
        "1.125",
        "1.0625",
        "5352965319325.514",
        "123456789012345.999",
        "1234567890123456",
        "1e3",
        "1.5e3",
        "-1",
        "12",
        "9",
        ".5",
    ] {
        plain_micros_agree(text);
    }
    // Every length of integer and fraction around the word-at-a-time form's limits, with a leading
    // zero or not, and each byte that may follow.
    for int_digits in 0..18 {
        for frac_digits in 0..5 {
            for lead in ["1", "0", "9"] {
                let int: String = (0..int_digits)
                    .map(|i| if i == 0 { lead } else { ["3", "0", "7"][i % 3] })
                    .collect();
                let frac = "5294"[..frac_digits.min(4)].to_owned();
                for dot in ["", "."] {
                    plain_micros_agree(&format!("{int}{dot}{frac}"));
                }
            }
        }
    }
}

/// `plain_micros` on `text` followed by a short and a long tail (the word-at-a-time form needs
/// 16 bytes) agrees with `micros_to_ns`, or reads nothing.
fn plain_micros_agree(text: &str) {
    for tail in [
        ",",
        "e",
        "5, \"args\": {\"External id\": 1}}",
        ", \"args\": {\"External id\": 1}}",
    ] {
        let padded = format!("{text}{tail}");
        let mut c = Cursor::new(&padded);
        match c.plain_micros() {
            Ok(Some(ns)) => {
                let read = padded.get(..c.pos).unwrap();
                assert_eq!(
                    Some(ns),
                    crate::torch_trace::time::micros_to_ns(read),
                    "{padded}"
                );
                assert!(!padded[c.pos..].starts_with(|ch: char| ch.is_ascii_digit() || ch == '.'));
                assert!(Cursor::new(&padded).number().is_ok(), "{padded}");
            }
            Ok(None) => assert_eq!(c.pos, 0, "{padded}"),
            Err(GiveUp) => assert!(text.is_empty(), "{padded}"),
        }
    }
}

#[test]
fn small_ints_are_what_serde_json_gives_an_i64_visitor() {
    assert_eq!(small_int("42"), Ok(42));
    assert_eq!(small_int("-7"), Ok(-7));
    assert_eq!(small_int("-0"), Err(GiveUp));
    assert_eq!(small_int("1234567890123456789"), Err(GiveUp));
    assert_eq!(small_int("999999999999999999"), Ok(999_999_999_999_999_999));
}
