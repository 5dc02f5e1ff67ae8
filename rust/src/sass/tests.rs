//! Scans of the real listings under `tests/data/fixtures`, with exact facts.

use super::*;
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    crate::testdata::fixtures().join(rel)
}

fn scan(rel: &str) -> Listing {
    let options = ScanOptions {
        catalog: Some(Catalog::builtin().unwrap()),
        ..ScanOptions::default()
    };
    scan_path(&fixture(rel), options).unwrap()
}

#[test]
fn cuobjdump_and_nvdisasm_listings_of_one_cubin_agree() {
    let a = scan("h200/sass/kernels_sm90.cuobjdump.sass");
    let b = scan("h200/sass/kernels_sm90.nvdisasm.sass");
    assert_eq!(
        (a.dialect, b.dialect),
        (Dialect::Cuobjdump, Dialect::Nvdisasm)
    );
    assert_eq!(a.functions.len(), 4);
    let ops = |l: &Listing, f: &FunctionFacts| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = f
            .opcode_counts
            .iter()
            .map(|(id, n)| (l.opcodes[*id as usize].text.clone(), *n))
            .collect();
        v.sort();
        v
    };
    for (x, y) in a.functions.iter().zip(&b.functions) {
        assert_eq!(x.name, y.name);
        assert_eq!(
            (
                x.instruction_count,
                x.padding_nop_count,
                x.predicated_count,
                x.class_counts
            ),
            (
                y.instruction_count,
                y.padding_nop_count,
                y.predicated_count,
                y.class_counts
            )
        );
        assert_eq!(ops(&a, x), ops(&b, y), "{}", x.name);
        assert_eq!(x.registers, None);
    }
    let regs: Vec<_> = b.functions.iter().map(|f| f.registers).collect();
    assert_eq!(regs, [Some(32), Some(32), Some(18), Some(22)]);
    let summary = a.summary();
    assert_eq!(
        (summary.instruction_count, summary.padding_nop_count),
        (1375, 49)
    );
}

#[test]
fn every_mufu_of_the_fixture_kernels_is_an_integer_division_reciprocal() {
    // kernels.cu has no float transcendental: local_spill's `%` and strided_copy's 32- and 64-bit
    // division are nvcc's I2F.RP -> MUFU.RCP -> F2I.TRUNC sequences, the only MUFUs there are.
    let slot = CLASSES
        .iter()
        .position(|(c, _)| *c == Class::SpecialFunction)
        .unwrap();
    for rel in [
        "h200/sass/kernels_sm90.cuobjdump.sass",
        "h200/sass/kernels_sm90.nvdisasm.sass",
    ] {
        let listing = scan(rel);
        let facts: Vec<(&str, u64, u64)> = listing
            .functions
            .iter()
            .map(|f| {
                let mufu = f.class_counts[slot];
                (f.name.as_str(), mufu, f.integer_division_rcp_count)
            })
            .collect();
        assert_eq!(
            facts,
            [
                ("_Z9wmma_gemmPK6__halfS1_Pfiii", 0, 0),
                ("_Z11local_spillPKfPfi", 1, 1),
                ("_Z12strided_copyPKfPfii", 2, 2),
                ("_Z7vec_addPK6float4S1_PS_i", 0, 0),
            ],
            "{rel}"
        );
    }
}

#[test]
fn probe_axpy_matches_the_reference_study() {
    // The study counted 32 instructions in this fatbin, 12 of them NOP padding.
    let l = scan("h200/probe/sass_fatbin.txt");
    let f = &l.functions[0];
    assert_eq!((f.instruction_count, f.padding_nop_count), (20, 12));
    assert_eq!(l.ptx_architectures.len(), 1);
    assert_eq!(l.cubin_count, 1);
}

/// Not a test: `cargo test --release --lib sass::tests::throughput -- --ignored --nocapture` with
/// GPUOPT_SASS_BENCH=<file> prints where the time goes (line splitting alone vs the full scan).
#[test]
#[ignore]
fn throughput() {
    let Ok(path) = std::env::var("GPUOPT_SASS_BENCH") else {
        return;
    };
    let path = PathBuf::from(path);
    // CPU seconds of this process (user + system), from /proc: wall time lies on a shared machine.
    fn cpu() -> f64 {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let fields: Vec<&str> = stat.rsplit(") ").next().unwrap().split(' ').collect();
        (fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap()) / 100.0
    }
    let size = std::fs::metadata(&path).unwrap().len() as f64;
    if std::env::var("GPUOPT_SASS_BENCH_MODE").as_deref() == Ok("onepass") {
        let c = cpu();
        let t = std::time::Instant::now();
        let opts = ScanOptions {
            catalog: Some(Catalog::builtin().unwrap()),
            segment_bytes: usize::MAX,
            ..ScanOptions::default()
        };
        let l = scan_path(&path, opts).unwrap();
        println!(
            "one pass only: cpu {:.2} s, wall {:.2} s, {} functions",
            cpu() - c,
            t.elapsed().as_secs_f64(),
            l.functions.len()
        );
        let c = cpu();
        let f = functions_table(&l).unwrap();
        let c1 = cpu();
        let o = opcodes_table(&l).unwrap();
        let c2 = cpu();
        let g = signatures_table(&l, l.catalog.as_ref().unwrap()).unwrap();
        println!(
            "tables cpu: functions {:.2}, opcodes {:.2}, signatures {:.2} ({} {} {} rows)",
            c1 - c,
            c2 - c1,
            cpu() - c2,
            f.num_rows(),
            o.num_rows(),
            g.num_rows()
        );
        return;
    }
    let c0 = cpu();
    let t = std::time::Instant::now();
    let mut n = 0u64;
    lexer::for_each_line(std::fs::File::open(&path).unwrap(), |l, _| {
        n += l.len() as u64;
        Ok(())
    })
    .unwrap();
    let split = t.elapsed().as_secs_f64();
    let c1 = cpu();
    let t = std::time::Instant::now();
    let mut trimmed = 0u64;
    lexer::for_each_line(std::fs::File::open(&path).unwrap(), |l, _| {
        trimmed += lexer::trim(l).len() as u64;
        Ok(())
    })
    .unwrap();
    let trim = t.elapsed().as_secs_f64();
    let c2 = cpu();
    let t = std::time::Instant::now();
    let one_pass = ScanOptions {
        catalog: Some(Catalog::builtin().unwrap()),
        segment_bytes: usize::MAX,
        ..ScanOptions::default()
    };
    let l = scan_path(&path, one_pass).unwrap();
    let full = t.elapsed().as_secs_f64();
    let c3 = cpu();
    println!(
        "one pass: cpu {:.2} s, {:.2} GB/s wall",
        c3 - c2,
        size / full / 1e9
    );
    let c2 = cpu();
    let t = std::time::Instant::now();
    let l2 = scan_path(
        &path,
        ScanOptions {
            catalog: Some(Catalog::builtin().unwrap()),
            ..ScanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(l2.functions.len(), l.functions.len());
    let full = t.elapsed().as_secs_f64();
    let c3 = cpu();
    println!(
        "cpu seconds: split {:.2}, trim {:.2}, parallel {:.2}",
        c1 - c0,
        c2 - c1,
        c3 - c2
    );
    println!(
        "split+check {:.2} GB/s, +trim {:.2} GB/s, parallel {:.2} GB/s ({} functions, {n} {trimmed})",
        size / split / 1e9,
        size / trim / 1e9,
        size / full / 1e9,
        l.functions.len()
    );
}

#[test]
fn parallel_segments_give_the_one_pass_result() {
    // 40 copies of the H200 listing and the probe fatbin: ~13 MB, cut into 64 KiB segments.
    let a = std::fs::read(fixture("h200/sass/kernels_sm90.cuobjdump.sass")).unwrap();
    let b = std::fs::read(fixture("h200/probe/sass_fatbin.txt")).unwrap();
    let mut text = Vec::new();
    for _ in 0..20 {
        text.extend_from_slice(&b);
        text.extend_from_slice(&a);
    }
    let dir = std::env::temp_dir().join(format!("gpuopt-par-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.sass");
    std::fs::write(&path, &text).unwrap();
    let small = ScanOptions {
        catalog: Some(Catalog::builtin().unwrap()),
        evidence_limit: 2,
        segment_bytes: 64 << 10,
    };
    let parallel = parallel::scan_file(&path, &small).unwrap().unwrap();
    let sequential = scan_bytes(&text, small.clone()).unwrap();
    assert_eq!(parallel.functions, sequential.functions);
    assert_eq!(parallel.opcodes, sequential.opcodes);
    assert_eq!(
        serde_json::to_string(&parallel.summary()).unwrap(),
        serde_json::to_string(&sequential.summary()).unwrap()
    );
    assert_eq!(parallel.functions.len(), 100);
    assert_eq!(parallel.cubin_count, 40);
    assert_eq!(parallel.functions[99].cubin_index, 39);
    assert_eq!(
        parallel.functions[5].arch.map(|a| a.name()).as_deref(),
        Some("sm_90")
    );
    // A cut-off copy: the parallel path gives up and the one-pass scan reports the truncation.
    std::fs::write(&path, &text[..text.len() - 200]).unwrap();
    assert!(matches!(
        parallel::scan_file(&path, &small),
        None | Some(Err(_))
    ));
    let err = scan_path(&path, small).unwrap_err();
    assert_eq!(err.code, codes::FILE_TRUNCATED);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn class_table_matches_the_reference() {
    // references/sass.md documents every mnemonic of every class; the two must not drift apart.
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("references/sass.md"),
    )
    .unwrap();
    for (class, name) in CLASSES {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("class {name} is not in references/sass.md"));
        let documented: Vec<&str> = row
            .split('|')
            .nth(2)
            .unwrap()
            .split_whitespace()
            .map(|m| m.trim_matches('`'))
            .collect();
        for m in &documented {
            assert!(OpcodeInfo::new(m).has(*class), "{m} documented as {name}");
        }
        assert_eq!(
            documented.len(),
            instruction::class_mnemonic_count(*class),
            "{name}"
        );
    }
}
