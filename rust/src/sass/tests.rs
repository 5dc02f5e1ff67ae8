//! Scans of the real listings under `../shared/fixtures`, with exact facts.

use super::*;
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(rel)
}

fn scan(rel: &str) -> Listing {
    let options = ScanOptions {
        catalog: Some(Catalog::builtin().unwrap()),
        evidence_limit: 3,
    };
    scan_path(&fixture(rel), options).unwrap()
}

#[test]
fn dump_for_exploration() {
    for rel in [
        "h200/sass/kernels_sm90.cuobjdump.sass",
        "h200/sass/kernels_sm90.nvdisasm.sass",
        "public/sass/librecuda_async_kernels.asm",
        "h200/probe/sass_fatbin.txt",
    ] {
        let l = scan(rel);
        println!("{rel}: {}", serde_json::to_string(&l.summary()).unwrap());
        for f in &l.functions {
            println!(
                "  {} {:?} n={} pad={} pred={} back={} regs={:?} frame={:?} stack={:?}",
                f.name, f.arch.map(|a| a.name()), f.instruction_count, f.padding_nop_count,
                f.predicated_count, f.backward_branch_count, f.registers, f.frame_size_bytes,
                f.min_stack_size_bytes
            );
        }
    }
}
