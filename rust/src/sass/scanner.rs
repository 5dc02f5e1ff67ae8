//! The state the two grammars (`cuobjdump.rs`, `nvdisasm.rs`) share and the helpers they call:
//! functions started and finished, opcodes interned, instructions counted, unmodeled lines noted.
//! The pass (`pass.rs`) owns a scanner and hands each line to the grammar of its dialect.

use super::arch::Arch;
use super::codes;
use super::function::{FunctionBuilder, FunctionFacts, Scratch};
use super::instruction::{
    is_mnemonic, parse_addressed, Addressed, Instruction, LineError, OpcodeInfo,
};
use super::listing::OTHER;
use super::signatures::Catalog;
use crate::error::{Error, Result};
use crate::fxhash::FxHashMap;
use std::collections::BTreeMap;

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

/// State shared by the two grammars: the function being read, the architectures and cubins seen,
/// the finished functions, the interned opcodes and the unmodeled content.
pub struct Scanner {
    pub arch: Option<Arch>,
    pub architectures: Vec<Arch>,
    pub ptx_architectures: Vec<Arch>,
    pub cubin_count: u32,
    pub current: Option<FunctionBuilder>,
    pub functions: Vec<FunctionFacts>,
    pub line_no: u64,
    pub unmodeled: BTreeMap<(String, String), u64>,
    opcode_ids: FxHashMap<Box<[u8]>, u32>,
    pub opcodes: Vec<OpcodeInfo>,
    nop_id: Option<u32>,
    scratch: Scratch,
    catalog: Option<Catalog>,
    evidence_limit: usize,
}

/// While scanning, up to this many distinct unmodeled names are counted; later ones are summed under
/// `(other)`.
const UNMODELED_DISTINCT_MAX: usize = 10_000;

impl Scanner {
    pub fn new(options: &ScanOptions) -> Self {
        Self {
            arch: None,
            architectures: Vec::new(),
            ptx_architectures: Vec::new(),
            cubin_count: 0,
            current: None,
            functions: Vec::new(),
            line_no: 0,
            unmodeled: BTreeMap::new(),
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
                    "not an instruction: the opcode is not a SASS mnemonic ({} on the line)",
                    crate::shape::of(ins.text)
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
            .with_observed(format!(
                "line {}: {}",
                self.line_no,
                crate::shape::of(line)
            )),
            LineError::BadAddress => self.invalid("an address comment `/*hex*/` is malformed"),
            LineError::BadOpcode => self.invalid(format!(
                "not an instruction: no SASS mnemonic after the address ({} on the line)",
                crate::shape::of(line)
            )),
        })
    }
}
