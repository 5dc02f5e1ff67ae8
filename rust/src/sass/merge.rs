//! A listing scanned in parts (segments of a large cuobjdump listing, or the one part of a one-pass
//! scan) assembled in listing order: opcode ids, function indices and cubin ordinals placed in the
//! whole listing, exactly as one pass would have numbered them.

use super::arch::Arch;
use super::codes;
use super::function::FunctionFacts;
use super::instruction::OpcodeInfo;
use super::listing::{Dialect, Listing, Unmodeled, OTHER};
use super::signatures::Catalog;
use crate::error::{Error, Result};
use crate::fxhash::FxHashMap;
use std::collections::BTreeMap;

/// At most this many distinct unmodeled names are reported per kind (the most frequent, then by name);
/// the rest are summed under `(other)`.
const UNMODELED_NAMES_PER_KIND: usize = 32;

/// What one scanner saw in its part of a listing. Function indices, opcode ids and cubin ordinals are
/// local to the part until [`Accumulator::merge`] places them in the whole listing.
pub(crate) struct Part {
    pub dialect: Dialect,
    pub functions: Vec<FunctionFacts>,
    pub opcodes: Vec<OpcodeInfo>,
    pub architectures: Vec<Arch>,
    pub ptx_architectures: Vec<Arch>,
    pub cubin_count: u32,
    pub last_arch: Option<Arch>,
    pub unmodeled: BTreeMap<(String, String), u64>,
    pub lines: u64,
    pub bytes: u64,
}

/// The whole listing, assembled from parts in listing order.
#[derive(Default)]
pub(crate) struct Accumulator {
    dialect: Option<Dialect>,
    ids: FxHashMap<String, u32>,
    opcodes: Vec<OpcodeInfo>,
    functions: Vec<FunctionFacts>,
    architectures: Vec<Arch>,
    ptx_architectures: Vec<Arch>,
    cubin_count: u32,
    arch: Option<Arch>,
    unmodeled: BTreeMap<(String, String), u64>,
    lines: u64,
    bytes: u64,
}

impl Accumulator {
    pub(crate) fn merge(&mut self, part: Part) {
        self.dialect.get_or_insert(part.dialect);
        let remap: Vec<u32> = part
            .opcodes
            .into_iter()
            .map(|info| match self.ids.get(&info.text) {
                Some(id) => *id,
                None => {
                    let id = u32::try_from(self.opcodes.len()).unwrap_or(u32::MAX);
                    self.ids.insert(info.text.clone(), id);
                    self.opcodes.push(info);
                    id
                }
            })
            .collect();
        for mut f in part.functions {
            f.index = self.functions.len();
            if f.cubin_index == 0 {
                // Before the part's first `code for`: the function continues the previous cubin.
                f.cubin_index = self.cubin_count;
                f.arch = f.arch.or(self.arch);
            } else {
                f.cubin_index += self.cubin_count;
            }
            for (id, _) in &mut f.opcode_counts {
                *id = remap.get(*id as usize).copied().unwrap_or(*id);
            }
            f.opcode_counts.sort_unstable();
            self.functions.push(f);
        }
        self.cubin_count += part.cubin_count;
        if part.last_arch.is_some() {
            self.arch = part.last_arch;
        }
        for a in part.architectures {
            if !self.architectures.contains(&a) {
                self.architectures.push(a);
            }
        }
        self.ptx_architectures.extend(part.ptx_architectures);
        for (key, count) in part.unmodeled {
            *self.unmodeled.entry(key).or_insert(0) += count;
        }
        self.lines += part.lines;
        self.bytes += part.bytes;
    }

    pub(crate) fn finish(mut self, catalog: Option<Catalog>) -> Result<Listing> {
        let dialect = self.dialect.ok_or_else(|| {
            Error::input(codes::FORMAT_INVALID, "the input is empty")
                .with_expected("SASS text from cuobjdump -sass or nvdisasm")
        })?;
        if self.functions.is_empty() {
            return Err(Error::input(
                codes::NO_FUNCTIONS,
                "the listing holds no SASS function",
            )
            .with_expected("at least one `Function :` block (cuobjdump) or `.text.` section (nvdisasm); a fatbin with PTX only has no SASS"));
        }
        for f in &mut self.functions {
            f.cubin_index = f.cubin_index.saturating_sub(1);
        }
        self.architectures.sort();
        self.ptx_architectures.sort();
        self.ptx_architectures.dedup();
        Ok(Listing {
            dialect,
            architectures: self.architectures,
            ptx_architectures: self.ptx_architectures,
            cubin_count: self.cubin_count,
            functions: self.functions,
            opcodes: self.opcodes,
            unmodeled: cap_unmodeled(self.unmodeled),
            lines: self.lines,
            bytes: self.bytes,
            catalog,
        })
    }
}

/// The most frequent names of each kind (ties by name), the rest summed under `(other)`.
fn cap_unmodeled(counts: BTreeMap<(String, String), u64>) -> Vec<Unmodeled> {
    let mut by_kind: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for ((kind, name), count) in counts {
        by_kind.entry(kind).or_default().push((name, count));
    }
    let mut out = Vec::new();
    for (kind, mut names) in by_kind {
        names.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut other = 0;
        for (i, (name, count)) in names.into_iter().enumerate() {
            if i < UNMODELED_NAMES_PER_KIND && name != OTHER {
                out.push(Unmodeled {
                    kind: kind.clone(),
                    name,
                    count,
                });
            } else {
                other += count;
            }
        }
        if other > 0 {
            out.push(Unmodeled {
                kind,
                name: OTHER.to_string(),
                count: other,
            });
        }
    }
    out
}
