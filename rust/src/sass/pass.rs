//! One pass over a listing's lines: decides the dialect from the first structural line, hands each
//! line to that dialect's grammar with the shared scanner, and ends in a part of the listing.

use super::codes;
use super::cuobjdump;
use super::lexer::{for_each_line, for_each_line_in, trim, LineStats};
use super::listing::{Dialect, Listing};
use super::merge::{Accumulator, Part};
use super::nvdisasm;
use super::scanner::{ScanOptions, Scanner};
use crate::error::{Error, Result};
use std::io::Read;

/// A scanner with the dialect it reads and each grammar's own state.
struct Pass {
    dialect: Option<Dialect>,
    scanner: Scanner,
    cuobjdump: cuobjdump::State,
    nvdisasm: nvdisasm::State,
}

impl Pass {
    fn new(options: &ScanOptions, dialect: Option<Dialect>) -> Self {
        Self {
            dialect,
            scanner: Scanner::new(options),
            cuobjdump: cuobjdump::State::default(),
            nvdisasm: nvdisasm::State::default(),
        }
    }

    fn line(&mut self, raw: &[u8], line_no: u64) -> Result<()> {
        self.scanner.line_no = line_no;
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
                    return Err(self.scanner.invalid(format!(
                        "not a cuobjdump or nvdisasm listing ({} before any listing structure)",
                        crate::shape::of(line)
                    ))
                    .with_expected("a listing from `cuobjdump -sass` (starting with `Fatbin elf code:`, `Fatbin ptx code:` or `code for sm_NN`) or from `nvdisasm` (starting with `.headerflags`, `.target` or `.elftype`)"));
                }
            },
        };
        match dialect {
            Dialect::Cuobjdump => cuobjdump::line(&mut self.scanner, &mut self.cuobjdump, line),
            Dialect::Nvdisasm => nvdisasm::line(&mut self.scanner, &mut self.nvdisasm, line),
        }
    }

    /// Ends this pass's part of the listing. `whole_end`: the part ends where the listing ends, so
    /// an open function means the listing was cut off.
    fn finish_part(mut self, stats: LineStats, whole_end: bool) -> Result<Part> {
        let dialect = self.dialect.ok_or_else(|| {
            Error::input(codes::FORMAT_INVALID, "the input is empty")
                .with_expected("SASS text from cuobjdump -sass or nvdisasm")
        })?;
        match dialect {
            Dialect::Cuobjdump if whole_end => {
                cuobjdump::finish(&self.scanner, &self.cuobjdump, stats)?
            }
            Dialect::Cuobjdump => {}
            Dialect::Nvdisasm => nvdisasm::finish(&mut self.scanner, &mut self.nvdisasm, stats)?,
        }
        let mut s = self.scanner;
        s.finish_function();
        Ok(Part {
            dialect,
            functions: s.functions,
            opcodes: s.opcodes,
            architectures: s.architectures,
            ptx_architectures: s.ptx_architectures,
            cubin_count: s.cubin_count,
            last_arch: s.arch,
            unmodeled: s.unmodeled,
            lines: stats.lines,
            bytes: stats.bytes,
        })
    }
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
    let mut pass = Pass::new(&options, None);
    let stats = for_each_line(reader, |line, no| pass.line(line, no))?;
    let mut whole = Accumulator::default();
    whole.merge(pass.finish_part(stats, true)?);
    whole.finish(options.catalog)
}

pub fn scan_bytes(bytes: &[u8], options: ScanOptions) -> Result<Listing> {
    let mut pass = Pass::new(&options, None);
    let stats = for_each_line_in(bytes, |line, no| pass.line(line, no))?;
    let mut whole = Accumulator::default();
    whole.merge(pass.finish_part(stats, true)?);
    whole.finish(options.catalog)
}

/// Scans one segment that starts at a `Function :` line of a cuobjdump listing.
pub(crate) fn scan_segment(bytes: &[u8], options: &ScanOptions, whole_end: bool) -> Result<Part> {
    let mut pass = Pass::new(options, Some(Dialect::Cuobjdump));
    let stats = for_each_line_in(bytes, |line, no| pass.line(line, no))?;
    pass.finish_part(stats, whole_end)
}
