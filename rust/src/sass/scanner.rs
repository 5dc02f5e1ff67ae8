//! The one-pass driver: decides the dialect from the first structural line, hands each line to that
//! dialect's grammar, interns opcodes and collects the finished functions.

use super::arch::Arch;
use super::codes;
use super::function::{FunctionBuilder, FunctionFacts, Scratch};
use super::instruction::{
    is_mnemonic, parse_addressed, Addressed, Instruction, LineError, OpcodeInfo,
};
use super::lexer::{for_each_line, for_each_line_in, trim, LineStats};
use super::signatures::Catalog;
use super::{cuobjdump, nvdisasm};
use crate::error::{Error, Result};
use crate::fxhash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

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

#[derive(Clone)]
pub struct ScanOptions {
    pub catalog: Option<Catalog>,
    /// Evidence lines kept per pattern and function.
    pub evidence_limit: usize,
    /// A cuobjdump listing file larger than this is cut at function boundaries into segments of about
    /// this size, scanned on all cores and merged in order (the result is the same as one pass).
    pub segment_bytes: usize,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            catalog: None,
            evidence_limit: 3,
            segment_bytes: 32 << 20,
        }
    }
}

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

/// State shared by the two grammars.
pub struct Scanner {
    pub dialect: Option<Dialect>,
    pub arch: Option<Arch>,
    pub architectures: Vec<Arch>,
    pub ptx_architectures: Vec<Arch>,
    pub cubin_count: u32,
    pub current: Option<FunctionBuilder>,
    pub functions: Vec<FunctionFacts>,
    pub line_no: u64,
    pub unmodeled: BTreeMap<(String, String), u64>,
    pub cuobjdump: cuobjdump::State,
    pub nvdisasm: nvdisasm::State,
    opcode_ids: FxHashMap<Box<[u8]>, u32>,
    pub opcodes: Vec<OpcodeInfo>,
    nop_id: Option<u32>,
    scratch: Scratch,
    catalog: Option<Catalog>,
    evidence_limit: usize,
}

/// At most this many distinct unmodeled names are reported per kind (the most frequent, then by name);
/// the rest are summed under `(other)`. While scanning, up to `UNMODELED_DISTINCT_MAX` are counted.
const UNMODELED_NAMES_PER_KIND: usize = 32;
const UNMODELED_DISTINCT_MAX: usize = 10_000;
const OTHER: &str = "(other)";

impl Scanner {
    pub(crate) fn new(options: &ScanOptions, dialect: Option<Dialect>) -> Self {
        Self {
            dialect,
            arch: None,
            architectures: Vec::new(),
            ptx_architectures: Vec::new(),
            cubin_count: 0,
            current: None,
            functions: Vec::new(),
            line_no: 0,
            unmodeled: BTreeMap::new(),
            cuobjdump: cuobjdump::State::default(),
            nvdisasm: nvdisasm::State::default(),
            opcode_ids: FxHashMap::default(),
            opcodes: Vec::new(),
            nop_id: None,
            scratch: Scratch::default(),
            catalog: options.catalog.clone(),
            evidence_limit: options.evidence_limit,
        }
    }

    /// A format error that names the line.
    pub fn invalid(&self, message: impl Into<String>) -> Error {
        Error::input(
            codes::FORMAT_INVALID,
            format!("line {}: {}", self.line_no, message.into()),
        )
        .with_observed(format!("line {}", self.line_no))
    }

    pub fn note_unmodeled(&mut self, kind: &str, name: &[u8]) {
        let name = String::from_utf8_lossy(name.get(..name.len().min(60)).unwrap_or_default())
            .into_owned();
        let key = (kind.to_string(), name);
        if !self.unmodeled.contains_key(&key) && self.unmodeled.len() >= UNMODELED_DISTINCT_MAX {
            *self
                .unmodeled
                .entry((kind.to_string(), OTHER.to_string()))
                .or_insert(0) += 1;
            return;
        }
        *self.unmodeled.entry(key).or_insert(0) += 1;
    }

    /// Sets the current architecture from a name in the listing, failing closed on an unknown one.
    pub fn set_arch(&mut self, text: &[u8]) -> Result<Arch> {
        let text = String::from_utf8_lossy(text);
        let arch = Arch::parse(text.trim()).map_err(|e| {
            let msg = format!("line {}: {}", self.line_no, e.message);
            Error { message: msg, ..e }
        })?;
        self.arch = Some(arch);
        if !self.architectures.contains(&arch) {
            self.architectures.push(arch);
        }
        Ok(arch)
    }

    pub fn start_function(&mut self, name: &[u8]) {
        self.finish_function();
        let index = self.functions.len();
        // While scanning, `cubin_index` holds the 1-based ordinal of the cubin (0: none seen yet in this
        // part); merging turns it into the 0-based index of the whole listing.
        self.current = Some(FunctionBuilder::new(
            index,
            String::from_utf8_lossy(name).into_owned(),
            self.arch,
            self.cubin_count,
        ));
    }

    pub fn finish_function(&mut self) {
        if let Some(builder) = self.current.take() {
            let facts = builder.finish(&mut self.scratch);
            self.functions.push(facts);
        }
    }

    fn intern(&mut self, opcode: &[u8]) -> u32 {
        if let Some(id) = self.opcode_ids.get(opcode) {
            return *id;
        }
        let id = u32::try_from(self.opcodes.len()).unwrap_or(u32::MAX);
        let text = String::from_utf8_lossy(opcode);
        let mut info = OpcodeInfo::new(&text);
        if let Some(catalog) = &self.catalog {
            info.patterns = catalog.patterns_for(&info);
        }
        if info.text == "NOP" {
            self.nop_id = Some(id);
        }
        self.opcodes.push(info);
        self.opcode_ids.insert(opcode.into(), id);
        id
    }

    /// Adds an instruction to the current function (the caller has checked there is one).
    pub fn instruction(&mut self, ins: &Instruction<'_>) -> Result<()> {
        let id = match self.opcode_ids.get(ins.opcode) {
            Some(id) => *id,
            None if is_mnemonic(ins.opcode) => self.intern(ins.opcode),
            None => {
                return Err(self.invalid(format!(
                    "not an instruction: {:?}",
                    String::from_utf8_lossy(
                        ins.text.get(..ins.text.len().min(80)).unwrap_or_default()
                    )
                )))
            }
        };
        let nop_id = self.nop_id;
        let limit = self.evidence_limit;
        if let (Some(builder), Some(info)) = (self.current.as_mut(), self.opcodes.get(id as usize))
        {
            builder.add(&mut self.scratch, ins, id, info, nop_id, limit);
        }
        Ok(())
    }

    /// Parses an addressed line, turning a malformed one into a format error (or, at the very end of
    /// the input, a truncation error).
    pub fn addressed<'a>(&self, line: &'a [u8]) -> Result<Addressed<'a>> {
        parse_addressed(line).map_err(|e| match e {
            LineError::Unterminated => Error::input(
                codes::FILE_TRUNCATED,
                format!(
                    "line {}: an instruction without its terminating `;`",
                    self.line_no
                ),
            )
            .with_observed(String::from_utf8_lossy(line).into_owned()),
            LineError::BadAddress => self.invalid("an address comment `/*hex*/` is malformed"),
            LineError::BadOpcode => self.invalid(format!(
                "not an instruction: {:?}",
                String::from_utf8_lossy(line.get(..line.len().min(80)).unwrap_or_default())
            )),
        })
    }

    fn line(&mut self, raw: &[u8], line_no: u64) -> Result<()> {
        self.line_no = line_no;
        let line = trim(raw);
        if line.is_empty() {
            return Ok(());
        }
        let dialect = match self.dialect {
            Some(d) => d,
            None => match detect(line) {
                Some(d) => {
                    self.dialect = Some(d);
                    d
                }
                None => {
                    // Text before any structure: blank-ish preambles are tolerated, anything else
                    // is not a listing.
                    return Err(self.invalid(format!(
                        "not a cuobjdump or nvdisasm listing: {:?}",
                        String::from_utf8_lossy(line.get(..line.len().min(80)).unwrap_or_default())
                    ))
                    .with_expected("a listing from `cuobjdump -sass` (starting with `Fatbin elf code:`, `Fatbin ptx code:` or `code for sm_NN`) or from `nvdisasm` (starting with `.headerflags`, `.target` or `.elftype`)"));
                }
            },
        };
        match dialect {
            Dialect::Cuobjdump => cuobjdump::line(self, line),
            Dialect::Nvdisasm => nvdisasm::line(self, line),
        }
    }

    /// Ends this scanner's part of the listing. `whole_end`: the part ends where the listing ends, so
    /// an open function means the listing was cut off.
    pub(crate) fn finish_part(mut self, stats: LineStats, whole_end: bool) -> Result<Part> {
        let dialect = self.dialect.ok_or_else(|| {
            Error::input(codes::FORMAT_INVALID, "the input is empty")
                .with_expected("SASS text from cuobjdump -sass or nvdisasm")
        })?;
        match dialect {
            Dialect::Cuobjdump if whole_end => cuobjdump::finish(&mut self, stats)?,
            Dialect::Cuobjdump => {}
            Dialect::Nvdisasm => nvdisasm::finish(&mut self, stats)?,
        }
        self.finish_function();
        Ok(Part {
            dialect,
            functions: self.functions,
            opcodes: self.opcodes,
            architectures: self.architectures,
            ptx_architectures: self.ptx_architectures,
            cubin_count: self.cubin_count,
            last_arch: self.arch,
            unmodeled: self.unmodeled,
            lines: stats.lines,
            bytes: stats.bytes,
        })
    }
}

/// What one scanner saw in its part of a listing. Function indices, opcode ids and cubin ordinals are
/// local to the part until [`Accumulator::merge`] places them in the whole listing.
pub(crate) struct Part {
    dialect: Dialect,
    functions: Vec<FunctionFacts>,
    opcodes: Vec<OpcodeInfo>,
    architectures: Vec<Arch>,
    ptx_architectures: Vec<Arch>,
    cubin_count: u32,
    last_arch: Option<Arch>,
    unmodeled: BTreeMap<(String, String), u64>,
    lines: u64,
    bytes: u64,
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

fn detect(line: &[u8]) -> Option<Dialect> {
    const CUOBJDUMP: &[&[u8]] = &[
        b"Fatbin elf code:",
        b"Fatbin ptx code:",
        b"code for sm_",
        b"Function :",
    ];
    const NVDISASM: &[&[u8]] = &[
        b".headerflags",
        b".target",
        b".elftype",
        b".section",
        b"//-----",
    ];
    if CUOBJDUMP.iter().any(|p| line.starts_with(p)) {
        Some(Dialect::Cuobjdump)
    } else if NVDISASM.iter().any(|p| line.starts_with(p)) {
        Some(Dialect::Nvdisasm)
    } else {
        None
    }
}

/// Scans a listing from any reader in one pass.
pub fn scan_reader<R: Read>(reader: R, options: ScanOptions) -> Result<Listing> {
    let mut scanner = Scanner::new(&options, None);
    let stats = for_each_line(reader, |line, no| scanner.line(line, no))?;
    let mut whole = Accumulator::default();
    whole.merge(scanner.finish_part(stats, true)?);
    whole.finish(options.catalog)
}

pub fn scan_bytes(bytes: &[u8], options: ScanOptions) -> Result<Listing> {
    let mut scanner = Scanner::new(&options, None);
    let stats = for_each_line_in(bytes, |line, no| scanner.line(line, no))?;
    let mut whole = Accumulator::default();
    whole.merge(scanner.finish_part(stats, true)?);
    whole.finish(options.catalog)
}

/// Scans one segment that starts at a `Function :` line of a cuobjdump listing.
pub(crate) fn scan_segment(bytes: &[u8], options: &ScanOptions, whole_end: bool) -> Result<Part> {
    let mut scanner = Scanner::new(options, Some(Dialect::Cuobjdump));
    let stats = for_each_line_in(bytes, |line, no| scanner.line(line, no))?;
    scanner.finish_part(stats, whole_end)
}

/// Scans a listing file: large cuobjdump listings in parallel segments, everything else in one pass.
/// Any error in the parallel path is reported by re-running the one-pass scan, so that errors (and
/// their line numbers) do not depend on how the file was cut.
pub fn scan_path(path: &Path, options: ScanOptions) -> Result<Listing> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
    if !meta.is_file() {
        return Err(Error::input(
            crate::error::codes::NOT_A_FILE,
            format!("{shown} is not a regular file"),
        )
        .with_path(shown));
    }
    let with_path = |e: Error| {
        if e.path.is_none() {
            e.with_path(shown.clone())
        } else {
            e
        }
    };
    if meta.len() > options.segment_bytes as u64 {
        if let Some(Ok(listing)) = super::parallel::scan_file(path, &options) {
            return Ok(listing);
        }
    }
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    scan_reader(file, options).map_err(with_path)
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
        for (slot, (_, name)) in super::instruction::CLASSES.iter().enumerate() {
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
                format: super::signatures::FORMAT,
                version: c.version,
                sha256: c.sha256.clone(),
                signature_count: c.signatures.len(),
            }),
        }
    }
}
