//! The `nvdisasm` grammar: ELF sections (`.section .text.<name>` holds one function), labels, symbol
//! directives, `.nv.info` attributes (register count, frame and stack sizes) and `//##` line info.

use super::instruction::{parse_hex, Addressed};
use super::lexer::{trim, LineStats};
use super::scanner::Scanner;
use super::{codes, Arch};
use crate::error::{Error, Result};
use crate::fxhash::FxHashMap;

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Section {
    #[default]
    None,
    Text,
    NvInfo,
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Attr {
    RegCount,
    FrameSize,
    MinStackSize,
}

#[derive(Default, Clone, Copy)]
struct Resources {
    registers: Option<u32>,
    frame: Option<u32>,
    min_stack: Option<u32>,
}

/// What the grammar remembers between lines.
#[derive(Default)]
pub struct State {
    section: Section,
    attr: Option<Attr>,
    attr_function: Option<String>,
    resources: FxHashMap<String, Resources>,
    end_label: Option<Vec<u8>>,
    end_reached: bool,
    saw_header: bool,
}

/// Directives that carry nothing gpuopt turns into facts.
const IGNORED: &[&[u8]] = &[
    b"elftype",
    b"global",
    b"type",
    b"other",
    b"weak",
    b"align",
    b"sectionflags",
    b"sectionentsize",
    b"zero",
    b"tkinfo",
    b"byte",
    b"short",
    b"word",
    b"dword",
    b"string",
    b"section_name",
    b"nv.info",
    b"debug_frame",
];

fn directive_name(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(line.len());
    line.get(1..end).unwrap_or_default()
}

fn rest_after_name(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(line.len());
    trim(line.get(end..).unwrap_or_default())
}

fn is_label(line: &[u8]) -> bool {
    line.last() == Some(&b':') && !line.iter().any(|b| b.is_ascii_whitespace())
}

pub fn line(s: &mut Scanner, state: &mut State, line: &[u8]) -> Result<()> {
    if line.starts_with(b"/*") {
        if line.get(2) == Some(&b' ') {
            return Ok(()); // an encoding comment (`nvdisasm -hex`)
        }
        return addressed(s, state, line);
    }
    if let Some(comment) = line.strip_prefix(b"//") {
        if comment.starts_with(b"##") {
            if let Some(f) = s.current.as_mut() {
                f.facts.line_info_count += 1;
            }
        } else if let Some(attr) = find_after(comment, b"nvinfo : ") {
            state.attr = match trim(attr) {
                b"EIATTR_REGCOUNT" => Some(Attr::RegCount),
                b"EIATTR_FRAME_SIZE" => Some(Attr::FrameSize),
                b"EIATTR_MIN_STACK_SIZE" => Some(Attr::MinStackSize),
                _ => None,
            };
            state.attr_function = None;
        }
        return Ok(());
    }
    if is_label(line) {
        let name = line.get(..line.len() - 1).unwrap_or_default();
        if state.section == Section::Text {
            if state.end_label.as_deref() == Some(name) {
                state.end_reached = true;
            } else if let Some(f) = s.current.as_mut() {
                f.label(name);
            }
        }
        return Ok(());
    }
    if line.first() == Some(&b'.') {
        return directive(s, state, line);
    }
    let head = line
        .split(|b| b.is_ascii_whitespace())
        .next()
        .unwrap_or(line);
    s.note_unmodeled("line", head);
    Ok(())
}

fn find_after<'a>(hay: &'a [u8], needle: &[u8]) -> Option<&'a [u8]> {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .and_then(|i| hay.get(i + needle.len()..))
}

fn directive(s: &mut Scanner, state: &mut State, line: &[u8]) -> Result<()> {
    let name = directive_name(line);
    let rest = rest_after_name(line);
    match name {
        b"section" => {
            s.finish_function();
            state.end_label = None;
            state.end_reached = false;
            let section = rest.split(|b| *b == b',').next().unwrap_or_default();
            if let Some(function) = section.strip_prefix(b".text.") {
                state.section = Section::Text;
                if s.cubin_count == 0 {
                    s.cubin_count = 1;
                }
                s.start_function(function);
            } else if section == b".nv.info" {
                state.section = Section::NvInfo;
            } else {
                state.section = Section::Other;
            }
        }
        b"target" => {
            let arch = rest
                .split(|b| *b == b',' || b.is_ascii_whitespace())
                .next()
                .unwrap_or_default();
            s.set_arch(arch)?;
            state.saw_header = true;
        }
        b"headerflags" => {
            state.saw_header = true;
            if s.arch.is_none() {
                // Older listings have no `.target`; the ELF flags name the architecture, and
                // EF_CUDA_ACCELERATORS marks the arch-specific (`a`) variant.
                let flags = String::from_utf8_lossy(rest);
                let tokens: Vec<&str> = flags
                    .trim_matches(|c| c == '@' || c == '"')
                    .split_whitespace()
                    .collect();
                let accelerated = tokens.contains(&"EF_CUDA_ACCELERATORS");
                for token in &tokens {
                    if let Some(parsed) = Arch::from_header_flag(token) {
                        let arch = parsed.map_err(|e| Error {
                            message: format!("line {}: {}", s.line_no, e.message),
                            ..e
                        })?;
                        let name = if accelerated {
                            format!("{}a", arch.name())
                        } else {
                            arch.name()
                        };
                        s.set_arch(name.as_bytes())?;
                    }
                }
            }
        }
        b"sectioninfo" => {
            if let (Some(f), Some(regs)) = (s.current.as_mut(), find_after(rest, b"SHI_REGISTERS="))
            {
                let digits: Vec<u8> = regs
                    .iter()
                    .copied()
                    .take_while(u8::is_ascii_digit)
                    .collect();
                f.facts.registers = std::str::from_utf8(&digits)
                    .ok()
                    .and_then(|d| d.parse().ok());
            }
        }
        b"size" => {
            // `.size name,(.L_x_15 - name)`: the label that ends the function's code.
            if let Some(f) = s.current.as_ref() {
                let mut parts = rest.splitn(2, |b| *b == b',');
                let symbol = trim(parts.next().unwrap_or_default());
                let expr = parts.next().unwrap_or_default();
                if symbol == f.facts.name.as_bytes() {
                    let inner = expr.strip_prefix(b"(").unwrap_or(expr);
                    let label = inner
                        .split(|b| b.is_ascii_whitespace())
                        .next()
                        .unwrap_or_default();
                    if label.starts_with(b".L") {
                        state.end_label = Some(label.to_vec());
                    }
                }
            }
        }
        other if IGNORED.contains(&other) => {}
        other => s.note_unmodeled("directive", other),
    }
    Ok(())
}

fn addressed(s: &mut Scanner, state: &mut State, line: &[u8]) -> Result<()> {
    match s.addressed(line)? {
        Addressed::Instruction(ins) => {
            if state.section != Section::Text || s.current.is_none() {
                return Err(s.invalid("an instruction outside any `.text.` section"));
            }
            s.instruction(&ins)?;
        }
        Addressed::Data {
            directive,
            operands,
        } => {
            if state.section != Section::NvInfo || state.attr.is_none() || directive != b"word" {
                return Ok(());
            }
            if let Some(inner) = operands.strip_prefix(b"index@(") {
                let name = inner.strip_suffix(b")").unwrap_or(inner);
                state.attr_function = Some(String::from_utf8_lossy(name).into_owned());
            } else if let (Some(function), Some(value)) = (
                state.attr_function.take(),
                parse_hex(operands).and_then(|v| u32::try_from(v).ok()),
            ) {
                let entry = state.resources.entry(function).or_default();
                match state.attr {
                    Some(Attr::RegCount) => entry.registers = Some(value),
                    Some(Attr::FrameSize) => entry.frame = Some(value),
                    Some(Attr::MinStackSize) => entry.min_stack = Some(value),
                    None => {}
                }
            }
        }
    }
    Ok(())
}

pub fn finish(s: &mut Scanner, state: &mut State, _stats: LineStats) -> Result<()> {
    if let Some(open) = &s.current {
        if state.end_label.is_some() && !state.end_reached {
            return Err(Error::input(
                codes::FILE_TRUNCATED,
                // Its place, not its name: the name is the file's text (and can be any length).
                format!(
                    "the listing ends inside its function #{} (line {}) (its end label was never reached)",
                    open.facts.index + 1,
                    s.line_no
                ),
            )
            .with_expected(
                "each `.text.` section to run to the label named by its `.size` directive",
            ));
        }
    }
    s.finish_function();
    let resources = std::mem::take(&mut state.resources);
    for f in &mut s.functions {
        if let Some(r) = resources.get(&f.name) {
            f.registers = f.registers.or(r.registers);
            f.frame_size_bytes = r.frame;
            f.min_stack_size_bytes = r.min_stack;
        }
    }
    Ok(())
}
