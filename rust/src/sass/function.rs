//! Per-function accumulation: counters updated once per instruction, an opcode histogram kept in the
//! scanner's shared scratch arrays, and bounded evidence for signature patterns.

use super::arch::Arch;
use super::division::Division;
use super::instruction::{
    branch_target, BranchTarget, Class, Instruction, OpcodeInfo, CLASS_COUNT,
};
use crate::fxhash::FxHashMap;
use serde::Serialize;

/// One evidence line: where the instruction is and how the listing printed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub address: u64,
    pub text: String,
}

/// How often one catalog pattern matched in a function, with its first few matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternHits {
    pub pattern: u16,
    pub count: u64,
    pub evidence: Vec<Evidence>,
}

/// The facts of one function, as the listing states them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionFacts {
    /// Position in the listing (0-based); with `cubin_index` it tells apart equal names.
    pub index: usize,
    pub name: String,
    pub arch: Option<Arch>,
    /// Which embedded ELF image (0-based, in listing order) the function belongs to.
    pub cubin_index: u32,
    /// Instructions without the trailing `NOP` padding.
    pub instruction_count: u64,
    /// Unguarded `NOP`s after the last other instruction (alignment padding).
    pub padding_nop_count: u64,
    /// Instructions with a guard predicate other than `@PT`.
    pub predicated_count: u64,
    /// `BRA`/`JMP` whose target lies below their own address (loop back-edges); a branch to itself
    /// (the trap loop after the final `EXIT`) is not counted.
    pub backward_branch_count: u64,
    pub class_counts: [u64; CLASS_COUNT],
    /// `MUFU.RCP` instructions of nvcc's integer-division sequence (`I2F.RP` → `MUFU.RCP` →
    /// unsigned `F2I.TRUNC`): special-function instructions that compute no float math of the source.
    pub integer_division_rcp_count: u64,
    /// (opcode id, count), padding excluded.
    pub opcode_counts: Vec<(u32, u64)>,
    pub first_address: Option<u64>,
    pub last_address: Option<u64>,
    /// From nvdisasm only: `.sectioninfo SHI_REGISTERS` or `.nv.info` `EIATTR_REGCOUNT`.
    pub registers: Option<u32>,
    /// From nvdisasm only: `.nv.info` `EIATTR_FRAME_SIZE`.
    pub frame_size_bytes: Option<u32>,
    /// From nvdisasm only: `.nv.info` `EIATTR_MIN_STACK_SIZE`.
    pub min_stack_size_bytes: Option<u32>,
    /// `//## File ..., line N` annotations (nvdisasm `-g`).
    pub line_info_count: u64,
    pub hits: Vec<PatternHits>,
}

/// Scratch shared by all functions: an opcode-indexed counter array and the list of touched slots, so
/// that closing a function costs the number of distinct opcodes it used, not the size of the table.
#[derive(Default)]
pub struct Scratch {
    counts: Vec<u64>,
    touched: Vec<u32>,
}

pub struct FunctionBuilder {
    pub facts: FunctionFacts,
    pending_nops: u64,
    labels: FxHashMap<Vec<u8>, u64>,
    pending_labels: Vec<Vec<u8>>,
    division: Division,
}

impl FunctionBuilder {
    pub fn new(index: usize, name: String, arch: Option<Arch>, cubin_index: u32) -> Self {
        Self {
            facts: FunctionFacts {
                index,
                name,
                arch,
                cubin_index,
                instruction_count: 0,
                padding_nop_count: 0,
                predicated_count: 0,
                backward_branch_count: 0,
                class_counts: [0; CLASS_COUNT],
                integer_division_rcp_count: 0,
                opcode_counts: Vec::new(),
                first_address: None,
                last_address: None,
                registers: None,
                frame_size_bytes: None,
                min_stack_size_bytes: None,
                line_info_count: 0,
                hits: Vec::new(),
            },
            pending_nops: 0,
            labels: FxHashMap::default(),
            pending_labels: Vec::new(),
            division: Division::default(),
        }
    }

    /// A label line (`.L_x_2:`); it names the address of the next instruction.
    pub fn label(&mut self, name: &[u8]) {
        self.pending_labels.push(name.to_vec());
    }

    #[inline]
    pub fn add(
        &mut self,
        scratch: &mut Scratch,
        ins: &Instruction<'_>,
        id: u32,
        info: &OpcodeInfo,
        nop_id: Option<u32>,
        evidence_limit: usize,
    ) {
        let f = &mut self.facts;
        if f.first_address.is_none() {
            f.first_address = Some(ins.address);
        }
        f.last_address = Some(ins.address);
        if !self.pending_labels.is_empty() {
            for label in self.pending_labels.drain(..) {
                self.labels.insert(label, ins.address);
            }
        }
        let guarded = ins.guard.is_some_and(|g| g != b"@PT");
        if !guarded && Some(id) == nop_id {
            // Maybe padding: counted only once a later instruction proves it interior.
            self.pending_nops += 1;
            return;
        }
        if self.pending_nops > 0 {
            if let Some(nop) = nop_id {
                bump(scratch, nop, self.pending_nops);
            }
            f.instruction_count += self.pending_nops;
            self.pending_nops = 0;
        }
        f.instruction_count += 1;
        bump(scratch, id, 1);
        if guarded {
            f.predicated_count += 1;
        }
        if info.classes != 0 {
            for (slot, count) in f.class_counts.iter_mut().enumerate() {
                *count += u64::from((info.classes >> slot) & 1);
            }
            if info.has(Class::Branch) && matches!(info.base(), "BRA" | "JMP") {
                let target = match branch_target(ins.operands) {
                    Some(BranchTarget::Address(a)) => Some(a),
                    Some(BranchTarget::Label(l)) => self.labels.get(l).copied(),
                    None => None,
                };
                if target.is_some_and(|t| t < ins.address) {
                    f.backward_branch_count += 1;
                }
            }
        }
        f.integer_division_rcp_count += self.division.step(info.division, ins.operands);
        for &pattern in &info.patterns {
            record_hit(&mut f.hits, pattern, ins, evidence_limit);
        }
    }

    /// Ends the function: trailing NOPs become padding and the histogram is taken out of the scratch.
    pub fn finish(mut self, scratch: &mut Scratch) -> FunctionFacts {
        self.facts.padding_nop_count = self.pending_nops;
        let mut counts = Vec::with_capacity(scratch.touched.len());
        for id in scratch.touched.drain(..) {
            if let Some(slot) = scratch.counts.get_mut(id as usize) {
                counts.push((id, *slot));
                *slot = 0;
            }
        }
        counts.sort_unstable();
        self.facts.opcode_counts = counts;
        self.facts.hits.sort_by_key(|h| h.pattern);
        self.facts
    }
}

#[inline]
fn bump(scratch: &mut Scratch, id: u32, by: u64) {
    let idx = id as usize;
    if scratch.counts.len() <= idx {
        scratch.counts.resize(idx + 1, 0);
    }
    if let Some(slot) = scratch.counts.get_mut(idx) {
        if *slot == 0 {
            scratch.touched.push(id);
        }
        *slot += by;
    }
}

fn record_hit(hits: &mut Vec<PatternHits>, pattern: u16, ins: &Instruction<'_>, limit: usize) {
    let entry = match hits.iter().position(|h| h.pattern == pattern) {
        Some(i) => hits.get_mut(i),
        None => {
            hits.push(PatternHits {
                pattern,
                count: 0,
                evidence: Vec::new(),
            });
            hits.last_mut()
        }
    };
    if let Some(hit) = entry {
        hit.count += 1;
        if hit.evidence.len() < limit {
            hit.evidence.push(Evidence {
                address: ins.address,
                text: String::from_utf8_lossy(ins.text).into_owned(),
            });
        }
    }
}
