//! The `cuobjdump -sass` grammar: fatbin headers (ELF and PTX entries), `code for sm_NN` per embedded
//! cubin, `Function : name` blocks closed by a line of ten dots, and instruction lines whose encodings
//! trail in comments (plus encoding-only continuation lines).

use super::instruction::Addressed;
use super::lexer::LineStats;
use super::scanner::Scanner;
use super::{codes, Arch};
use crate::error::{Error, Result};

/// What the grammar remembers between lines.
#[derive(Default)]
pub struct State {
    /// Inside a `Fatbin ptx code:` entry (its header, and PTX text when cuobjdump printed it).
    in_ptx: bool,
    /// The current function has been closed by its `..........` line.
    closed: bool,
}

/// Header lines cuobjdump prints that carry nothing gpuopt turns into facts.
const METADATA: &[&[u8]] = &[
    b"code version =",
    b"host =",
    b"compile_size =",
    b"compressed",
    b"ptxasOptions =",
    b"identifier =",
    b"producer =",
    b".headerflags",
];

pub fn line(s: &mut Scanner, state: &mut State, line: &[u8]) -> Result<()> {
    if line.starts_with(b"/*") {
        if line.get(2) == Some(&b' ') {
            return Ok(()); // `/* 0x000fe20000000800 */`: the second encoding word
        }
        if s.current.is_none() || state.closed {
            return Err(s.invalid("an instruction outside any `Function :` block"));
        }
        return match s.addressed(line)? {
            Addressed::Instruction(ins) => {
                s.instruction(&ins)?;
                Ok(())
            }
            Addressed::Data { .. } => {
                Err(s.invalid("a data directive inside a cuobjdump function"))
            }
        };
    }
    if let Some(name) = line.strip_prefix(b"Function :") {
        s.start_function(super::lexer::trim(name));
        state.closed = false;
        return Ok(());
    }
    if line == b".........." {
        s.finish_function();
        state.closed = true;
        return Ok(());
    }
    if let Some(arch) = line.strip_prefix(b"code for ") {
        s.finish_function();
        state.in_ptx = false;
        s.cubin_count += 1;
        s.set_arch(arch)?;
        return Ok(());
    }
    if line == b"Fatbin elf code:" || line == b"Fatbin ptx code:" {
        s.finish_function();
        state.in_ptx = line == b"Fatbin ptx code:";
        return Ok(());
    }
    if line.iter().all(|b| *b == b'=') {
        return Ok(());
    }
    if let Some(arch) = line.strip_prefix(b"arch = ") {
        let parsed = checked_arch(s, arch)?;
        // A PTX entry's architecture is recorded apart; an ELF entry's is checked only, since the
        // `code for` line that follows is what functions are bound to.
        if state.in_ptx && !s.ptx_architectures.contains(&parsed) {
            s.ptx_architectures.push(parsed);
        }
        return Ok(());
    }
    if let Some(target) = line.strip_prefix(b".target") {
        checked_arch(s, target)?;
        return Ok(());
    }
    if METADATA.iter().any(|m| line.starts_with(m)) {
        return Ok(());
    }
    if state.in_ptx {
        s.note_unmodeled("ptx_text", b"lines of embedded PTX");
    } else {
        let head = line.split(|b| *b == b' ').next().unwrap_or(line);
        s.note_unmodeled("line", head);
    }
    Ok(())
}

/// An architecture name from a header line, failing closed (with the line number) on an unknown one.
fn checked_arch(s: &Scanner, text: &[u8]) -> Result<Arch> {
    let text = String::from_utf8_lossy(text);
    Arch::parse(text.trim()).map_err(|e| Error {
        message: format!("line {}: {}", s.line_no, e.message),
        ..e
    })
}

pub fn finish(s: &Scanner, state: &State, _stats: LineStats) -> Result<()> {
    if let Some(open) = &s.current {
        if !state.closed {
            return Err(Error::input(
                codes::FILE_TRUNCATED,
                // Its place, not its name: the name is the file's text (and can be any length).
                format!(
                    "the listing ends inside its function #{} (line {}) (no closing `..........` line)",
                    open.facts.index + 1,
                    s.line_no
                ),
            )
            .with_expected(
                "every `Function :` block closed by a line of ten dots, as cuobjdump prints it",
            ));
        }
    }
    Ok(())
}
