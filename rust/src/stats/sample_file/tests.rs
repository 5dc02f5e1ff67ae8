use super::*;
use crate::stats::codes;
use std::io::Write;
use std::path::Path;

fn write(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(body.as_bytes()).unwrap();
    p
}

fn tmp() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "gpuopt-stats-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[test]
fn errors_name_the_line_never_its_text() {
    // Issue 28: a mistaken file (a .env, a token) was echoed by "... is not a number".
    let d = tmp();
    for (name, text) in [
        ("env.csv", "GITHUB_TOKEN=ghp_secret\nDB_PASS=hunter2\n"),
        ("order.csv", "value,order\n1,ghp_secret\n"),
        ("cols.csv", "ghp_secret,hunter2\n1,2\n"),
        ("obj.jsonl", "{\"value\": \"ghp_secret\"}\n"),
    ] {
        let path = write(&d, name, text);
        let options = ReadOptions {
            order_column: (name == "order.csv").then(|| "order".to_string()),
            ..ReadOptions::default()
        };
        let err = read(&path, &options).unwrap_err();
        let said = serde_json::to_string(&err).unwrap();
        assert!(
            !said.contains("ghp_secret") && !said.contains("hunter2"),
            "{said}"
        );
    }
}

#[test]
fn duplicate_keys_and_columns_are_refused() {
    // Issue 13.10: serde_json kept the last of two equal keys, so a line silently lost a value.
    let d = tmp();
    let jsonl = write(
        &d,
        "dup.jsonl",
        "{\"value\": 1}\n{\"value\": 2, \"value\": 3}\n",
    );
    let err = read(&jsonl, &ReadOptions::default()).unwrap_err();
    assert_eq!(err.code, "format_invalid");
    assert!(
        err.message.contains(":2: a field name appears twice"),
        "{}",
        err.message
    );
    let csv = write(&d, "dup.csv", "value,key,value\n1,a,2\n");
    let err = read(&csv, &ReadOptions::default()).unwrap_err();
    assert!(
        err.message
            .contains(":1: columns 1 and 3 have the same name"),
        "{}",
        err.message
    );
    // Nested arrays and distinct keys still read.
    let ok = write(&d, "ok.jsonl", "{\"value\": [1, 2], \"key\": \"a\"}\n");
    let opts = ReadOptions {
        key_column: Some("key".into()),
        ..ReadOptions::default()
    };
    assert_eq!(read(&ok, &opts).unwrap().rows, 1);
}

#[test]
fn bare_values_csv_and_jsonl() {
    let d = tmp();
    let csv = read(
        &write(&d, "a.csv", "1.5\n2.5\n\n3\n"),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(csv.calls.samples(), &[1.5, 2.5, 3.0]);
    assert_eq!(csv.lines, vec![1, 2, 4]);
    let jl = read(
        &write(&d, "a.jsonl", "1.5\n[2.0, 3.0]\n"),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(jl.calls.len(), 2);
    assert_eq!(jl.calls.call(1), &[2.0, 3.0]);
}

#[test]
fn named_columns_keys_and_unmodeled() {
    let d = tmp();
    let body = "run,case,ms,note\nr1,a,10,x\nr2,b,11,y\nr1,a,12,z\n";
    let opts = ReadOptions {
        column: Some("ms".into()),
        key_column: Some("run".into()),
        case_column: Some("case".into()),
        ..ReadOptions::default()
    };
    let f = read(&write(&d, "b.csv", body), &opts).unwrap();
    assert_eq!(f.calls.len(), 2);
    assert_eq!(f.calls.call(0), &[10.0, 12.0]);
    assert_eq!(f.keys, Some(vec!["r1".to_string(), "r2".to_string()]));
    assert_eq!(f.unmodeled_columns, vec!["note".to_string()]);
    let missing = read(&write(&d, "c.csv", "a,b\n1,2\n"), &ReadOptions::default()).unwrap_err();
    assert_eq!(missing.code, codes::COLUMN_MISSING);
}

#[test]
fn bad_values_name_file_and_line() {
    let d = tmp();
    let p = write(&d, "n.csv", "ms\n1\n-2\n");
    let err = read(&p, &ReadOptions::default()).unwrap_err();
    assert_eq!(err.code, codes::NONPOSITIVE_METRIC_VALUE);
    assert!(err.path.unwrap().ends_with("n.csv:3"));
    let err = read(&write(&d, "n.jsonl", "1\nNaN\n"), &ReadOptions::default()).unwrap_err();
    assert_eq!(err.code, codes::NONFINITE_METRIC_VALUE);
    let err = read(&write(&d, "g.jsonl", "1\n{oops\n"), &ReadOptions::default()).unwrap_err();
    assert_eq!(err.code, "format_invalid");
    let err = read(&write(&d, "e.csv", ""), &ReadOptions::default()).unwrap_err();
    assert_eq!(err.code, "format_invalid");
}

#[test]
fn pairing_by_key_follows_the_baseline_order() {
    let d = tmp();
    let opts = ReadOptions {
        key_column: Some("k".into()),
        ..ReadOptions::default()
    };
    let b = read(
        &write(
            &d,
            "b.jsonl",
            "{\"k\":\"x\",\"v\":1}\n{\"k\":\"y\",\"v\":2}\n",
        ),
        &opts,
    )
    .unwrap();
    let c = read(
        &write(
            &d,
            "c.jsonl",
            "{\"k\":\"y\",\"v\":4}\n{\"k\":\"x\",\"v\":3}\n",
        ),
        &opts,
    )
    .unwrap();
    let p = pair(b.clone(), c).unwrap();
    assert_eq!(p.candidate.samples(), &[3.0, 4.0]);
    let other = read(
        &write(
            &d,
            "o.jsonl",
            "{\"k\":\"z\",\"v\":4}\n{\"k\":\"x\",\"v\":3}\n",
        ),
        &opts,
    )
    .unwrap();
    assert_eq!(pair(b, other).unwrap_err().code, codes::PAIR_KEY_UNMATCHED);
}

#[test]
fn a_byte_that_is_not_utf8_is_named_by_its_line() {
    // A trial's file: a header, ten numbers, then Latin-1 `é` on line 12 (it was reported as line 0).
    let mut bytes = b"value\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n".to_vec();
    bytes.extend_from_slice(b"\xe9\n");
    let err = read::parse("f.txt".into(), Some("txt"), bytes, &ReadOptions::default()).unwrap_err();
    assert_eq!(err.path.as_deref(), Some("f.txt:12"));
    assert!(err.message.contains("byte 27"), "{}", err.message);
}
