//! What a scan of a listing produced: the dialect, the per-function facts, the interned opcodes and
//! the unmodeled content, and the listing-level summary document `gpuopt sass scan` prints.

use super::arch::Arch;
use super::function::FunctionFacts;
use super::instruction::{OpcodeInfo, CLASSES};
use super::signatures::{Catalog, FORMAT};
use serde::Serialize;
use std::collections::BTreeMap;

/// Which tool printed the listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// `cuobjdump -sass` / `--dump-sass`: `Function : name` blocks, encodings in trailing comments.
    Cuobjdump,
    /// `nvdisasm`: ELF sections, `.text.<name>` per function, labels, directives.
    Nvdisasm,
}

/// Content that was recognised but not turned into facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmodeled {
    pub kind: String,
    pub name: String,
    pub count: u64,
}

/// The name under which unmodeled names past a cap are summed.
pub(super) const OTHER: &str = "(other)";

/// Everything one pass over a listing produced.
#[derive(Debug)]
pub struct Listing {
    pub dialect: Dialect,
    /// Architectures of SASS code (`code for`, `.target`, header flags), sorted.
    pub architectures: Vec<Arch>,
    /// Architectures of embedded PTX (cuobjdump `Fatbin ptx code:` blocks), sorted.
    pub ptx_architectures: Vec<Arch>,
    /// ELF images (cubins) in the listing.
    pub cubin_count: u32,
    pub functions: Vec<FunctionFacts>,
    pub opcodes: Vec<OpcodeInfo>,
    pub unmodeled: Vec<Unmodeled>,
    pub lines: u64,
    pub bytes: u64,
    pub catalog: Option<Catalog>,
}

/// The listing-level document: what `gpuopt sass scan` prints.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// Always `sass`: every fact here was read from disassembled machine code.
    pub stage: &'static str,
    pub dialect: Dialect,
    pub architectures: Vec<String>,
    pub ptx_architectures: Vec<String>,
    pub cubin_count: u32,
    pub function_count: usize,
    pub instruction_count: u64,
    pub padding_nop_count: u64,
    pub predicated_count: u64,
    pub backward_branch_count: u64,
    pub distinct_opcode_count: usize,
    pub class_counts: BTreeMap<&'static str, u64>,
    pub line_count: u64,
    pub size_bytes: u64,
    pub unmodeled: Vec<Unmodeled>,
    pub catalog: Option<CatalogSummary>,
}

#[derive(Debug, Serialize)]
pub struct CatalogSummary {
    pub format: &'static str,
    pub version: u64,
    pub sha256: String,
    pub signature_count: usize,
}

impl Listing {
    pub fn summary(&self) -> Summary {
        let fs = &self.functions;
        let mut class_counts = BTreeMap::new();
        for (slot, (_, name)) in CLASSES.iter().enumerate() {
            let total = fs
                .iter()
                .map(|f| f.class_counts.get(slot).copied().unwrap_or(0))
                .sum();
            class_counts.insert(*name, total);
        }
        Summary {
            stage: "sass",
            dialect: self.dialect,
            architectures: self.architectures.iter().map(Arch::name).collect(),
            ptx_architectures: self.ptx_architectures.iter().map(Arch::name).collect(),
            cubin_count: self.cubin_count,
            function_count: fs.len(),
            instruction_count: fs.iter().map(|f| f.instruction_count).sum(),
            padding_nop_count: fs.iter().map(|f| f.padding_nop_count).sum(),
            predicated_count: fs.iter().map(|f| f.predicated_count).sum(),
            backward_branch_count: fs.iter().map(|f| f.backward_branch_count).sum(),
            distinct_opcode_count: self.opcodes.len(),
            class_counts,
            line_count: self.lines,
            size_bytes: self.bytes,
            unmodeled: self.unmodeled.clone(),
            catalog: self.catalog.as_ref().map(|c| CatalogSummary {
                format: FORMAT,
                version: c.version,
                sha256: c.sha256.clone(),
                signature_count: c.signatures.len(),
            }),
        }
    }
}
