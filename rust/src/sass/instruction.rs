//! One instruction line: `/*0150*/  @!P0 BRA 0xd50 ;  /* 0x... */` split into address, guard, opcode and
//! operands, and what an opcode is (base mnemonic, modifiers, classes, memory access width).

use super::division::DivisionStep;
use super::lexer::trim;

/// Instruction classes, one bit each. A class is a fact about the mnemonic, looked up in a table below;
/// `references/sass_signatures.md` lists the mnemonics of each class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Class {
    TensorCore,
    TensorMemory,
    Warpgroup,
    TmaBulkCopy,
    AsyncCopy,
    GlobalLoad,
    GlobalStore,
    GlobalAtomic,
    SharedLoad,
    SharedStore,
    SharedAtomic,
    LocalLoad,
    LocalStore,
    GenericLoad,
    GenericStore,
    GenericAtomic,
    ConstantLoad,
    Barrier,
    Branch,
    SpecialFunction,
    Conversion,
    WarpShuffle,
}

/// Every class in column order, with its name in tables and documents.
pub const CLASSES: &[(Class, &str)] = &[
    (Class::TensorCore, "tensor_core"),
    (Class::TensorMemory, "tensor_memory"),
    (Class::Warpgroup, "warpgroup"),
    (Class::TmaBulkCopy, "tma_bulk_copy"),
    (Class::AsyncCopy, "async_copy"),
    (Class::GlobalLoad, "global_load"),
    (Class::GlobalStore, "global_store"),
    (Class::GlobalAtomic, "global_atomic"),
    (Class::SharedLoad, "shared_load"),
    (Class::SharedStore, "shared_store"),
    (Class::SharedAtomic, "shared_atomic"),
    (Class::LocalLoad, "local_load"),
    (Class::LocalStore, "local_store"),
    (Class::GenericLoad, "generic_load"),
    (Class::GenericStore, "generic_store"),
    (Class::GenericAtomic, "generic_atomic"),
    (Class::ConstantLoad, "constant_load"),
    (Class::Barrier, "barrier"),
    (Class::Branch, "branch"),
    (Class::SpecialFunction, "special_function"),
    (Class::Conversion, "conversion"),
    (Class::WarpShuffle, "warp_shuffle"),
];

pub const CLASS_COUNT: usize = CLASSES.len();

impl Class {
    pub const fn bit(self) -> u32 {
        1 << (self as u8)
    }

    pub fn name(self) -> &'static str {
        CLASSES
            .iter()
            .find(|(c, _)| *c == self)
            .map_or("unknown", |(_, n)| n)
    }
}

/// Base mnemonic → class. Mnemonics from NVIDIA's CUDA Binary Utilities instruction-set tables and
/// from disassembled sm_80/sm_90/sm_90a/sm_100 code.
const CLASS_TABLE: &[(&str, Class)] = &[
    ("HMMA", Class::TensorCore),
    ("IMMA", Class::TensorCore),
    ("BMMA", Class::TensorCore),
    ("DMMA", Class::TensorCore),
    ("QMMA", Class::TensorCore),
    ("OMMA", Class::TensorCore),
    ("HGMMA", Class::TensorCore),
    ("IGMMA", Class::TensorCore),
    ("QGMMA", Class::TensorCore),
    ("BGMMA", Class::TensorCore),
    ("UTCHMMA", Class::TensorCore),
    ("UTCIMMA", Class::TensorCore),
    ("UTCQMMA", Class::TensorCore),
    ("UTCOMMA", Class::TensorCore),
    ("UTCBAR", Class::TensorMemory),
    ("UTCATOMSWS", Class::TensorMemory),
    ("UTCCP", Class::TensorMemory),
    ("UTCSHIFT", Class::TensorMemory),
    ("LDTM", Class::TensorMemory),
    ("STTM", Class::TensorMemory),
    ("WARPGROUP", Class::Warpgroup),
    ("WARPGROUPSET", Class::Warpgroup),
    ("UTMALDG", Class::TmaBulkCopy),
    ("UTMASTG", Class::TmaBulkCopy),
    ("UTMAPF", Class::TmaBulkCopy),
    ("UTMAREDG", Class::TmaBulkCopy),
    ("UTMACCTL", Class::TmaBulkCopy),
    ("UTMACMDFLUSH", Class::TmaBulkCopy),
    ("UBLKCP", Class::TmaBulkCopy),
    ("UBLKPF", Class::TmaBulkCopy),
    ("UBLKRED", Class::TmaBulkCopy),
    ("LDGSTS", Class::AsyncCopy),
    ("LDGDEPBAR", Class::AsyncCopy),
    ("LDG", Class::GlobalLoad),
    ("STG", Class::GlobalStore),
    ("ATOMG", Class::GlobalAtomic),
    ("RED", Class::GlobalAtomic),
    ("REDG", Class::GlobalAtomic),
    ("LDS", Class::SharedLoad),
    ("LDSM", Class::SharedLoad),
    ("STS", Class::SharedStore),
    ("STSM", Class::SharedStore),
    ("ATOMS", Class::SharedAtomic),
    ("LDL", Class::LocalLoad),
    ("STL", Class::LocalStore),
    ("LD", Class::GenericLoad),
    ("ST", Class::GenericStore),
    ("ATOM", Class::GenericAtomic),
    ("LDC", Class::ConstantLoad),
    ("ULDC", Class::ConstantLoad),
    ("LDCU", Class::ConstantLoad),
    ("BAR", Class::Barrier),
    ("BARRIER", Class::Barrier),
    ("SYNCS", Class::Barrier),
    ("UCGABAR_ARV", Class::Barrier),
    ("UCGABAR_WAIT", Class::Barrier),
    ("MEMBAR", Class::Barrier),
    ("FENCE", Class::Barrier),
    ("DEPBAR", Class::Barrier),
    ("WARPSYNC", Class::Barrier),
    ("ERRBAR", Class::Barrier),
    ("BRA", Class::Branch),
    ("BRX", Class::Branch),
    ("BRXU", Class::Branch),
    ("JMP", Class::Branch),
    ("JMX", Class::Branch),
    ("JMXU", Class::Branch),
    ("CALL", Class::Branch),
    ("RET", Class::Branch),
    ("EXIT", Class::Branch),
    ("BREAK", Class::Branch),
    ("BSSY", Class::Branch),
    ("BSYNC", Class::Branch),
    ("KILL", Class::Branch),
    ("MUFU", Class::SpecialFunction),
    ("F2F", Class::Conversion),
    ("F2I", Class::Conversion),
    ("I2F", Class::Conversion),
    ("I2I", Class::Conversion),
    ("F2FP", Class::Conversion),
    ("I2FP", Class::Conversion),
    ("F2IP", Class::Conversion),
    ("I2IP", Class::Conversion),
    ("FRND", Class::Conversion),
    ("SHFL", Class::WarpShuffle),
];

/// How many base mnemonics the table puts in `class` (for the documentation check).
pub fn class_mnemonic_count(class: Class) -> usize {
    CLASS_TABLE.iter().filter(|(_, c)| *c == class).count()
}

/// Classes whose instructions move data to or from memory, and so have an access width.
const MEMORY: u32 = Class::AsyncCopy.bit()
    | Class::GlobalLoad.bit()
    | Class::GlobalStore.bit()
    | Class::GlobalAtomic.bit()
    | Class::SharedLoad.bit()
    | Class::SharedStore.bit()
    | Class::SharedAtomic.bit()
    | Class::LocalLoad.bit()
    | Class::LocalStore.bit()
    | Class::GenericLoad.bit()
    | Class::GenericStore.bit()
    | Class::GenericAtomic.bit();

/// What one distinct opcode string is; computed once when the opcode is first seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpcodeInfo {
    /// The full mnemonic with modifiers, as printed: `LDG.E.128.CONSTANT`.
    pub text: String,
    /// Length of the base mnemonic within `text` (`LDG`).
    pub base_len: usize,
    pub classes: u32,
    /// Bits moved per thread by a memory instruction (`.128` → 128, `.U8` → 8, none of these → 32);
    /// `None` for instructions that are not plain loads/stores (including `LDSM`/`STSM`).
    pub width_bits: Option<u16>,
    /// Indices of catalog patterns this opcode satisfies.
    pub patterns: Vec<u16>,
    /// Its part in nvcc's integer-division sequence, if any.
    pub division: DivisionStep,
}

impl OpcodeInfo {
    pub fn new(text: &str) -> Self {
        let base_len = text.find('.').unwrap_or(text.len());
        let base = text.get(..base_len).unwrap_or(text);
        let classes = CLASS_TABLE
            .iter()
            .filter(|(name, _)| *name == base)
            .fold(0, |acc, (_, class)| acc | class.bit());
        let width_bits = if classes & MEMORY != 0 && base != "LDSM" && base != "STSM" {
            Some(width_from_modifiers(
                text.get(base_len..).unwrap_or_default(),
            ))
        } else {
            None
        };
        let modifiers: Vec<&str> = text
            .get(base_len..)
            .unwrap_or_default()
            .split('.')
            .filter(|m| !m.is_empty())
            .collect();
        Self {
            text: text.to_string(),
            base_len,
            classes,
            width_bits,
            patterns: Vec::new(),
            division: DivisionStep::of(base, &modifiers),
        }
    }

    pub fn base(&self) -> &str {
        self.text.get(..self.base_len).unwrap_or(&self.text)
    }

    /// The dot-separated modifiers after the base mnemonic.
    pub fn modifiers(&self) -> impl Iterator<Item = &str> {
        self.text
            .get(self.base_len..)
            .unwrap_or_default()
            .split('.')
            .filter(|m| !m.is_empty())
    }

    pub fn has(&self, class: Class) -> bool {
        self.classes & class.bit() != 0
    }

    pub fn class_names(&self) -> Vec<&'static str> {
        CLASSES
            .iter()
            .filter(|(c, _)| self.has(*c))
            .map(|(_, n)| *n)
            .collect()
    }
}

fn width_from_modifiers(modifiers: &str) -> u16 {
    let mut width = 32;
    for m in modifiers.split('.') {
        width = match m {
            "128" => 128,
            "64" => 64,
            "U16" | "S16" => 16,
            "U8" | "S8" => 8,
            _ => continue,
        };
    }
    width
}

/// A line that begins (after blanks) with an address comment `/*0150*/`.
#[derive(Debug, PartialEq, Eq)]
pub enum Addressed<'a> {
    /// An instruction: `[@guard] OPCODE operands ;`.
    Instruction(Instruction<'a>),
    /// A data directive in a non-code section: `/*0004*/ .word index@(name)`.
    Data {
        directive: &'a [u8],
        operands: &'a [u8],
    },
}

#[derive(Debug, PartialEq, Eq)]
pub struct Instruction<'a> {
    pub address: u64,
    /// `@P0`, `@!UP1`; `None` when unguarded.
    pub guard: Option<&'a [u8]>,
    pub opcode: &'a [u8],
    pub operands: &'a [u8],
    /// Guard, opcode and operands through the `;`, as printed (evidence text).
    pub text: &'a [u8],
}

/// Why an addressed line is not usable.
#[derive(Debug, PartialEq, Eq)]
pub enum LineError {
    /// No `*/` after the address, or no hex digits in it.
    BadAddress,
    /// The opcode is not an upper-case mnemonic.
    BadOpcode,
    /// An instruction without its `;` (a cut-off line).
    Unterminated,
}

/// Parses a trimmed line that starts with `/*` and is not an encoding-only comment (`/* 0x... */`).
pub fn parse_addressed(line: &[u8]) -> Result<Addressed<'_>, LineError> {
    let body = line.get(2..).ok_or(LineError::BadAddress)?;
    let digits = body.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if body.get(digits..digits + 2) != Some(b"*/") {
        return Err(LineError::BadAddress);
    }
    let address = parse_hex(body.get(..digits).unwrap_or_default()).ok_or(LineError::BadAddress)?;
    let mut rest = trim(body.get(digits + 2..).unwrap_or_default());
    if let Some(directive) = rest.strip_prefix(b".") {
        let end = directive
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(directive.len());
        return Ok(Addressed::Data {
            directive: directive.get(..end).unwrap_or_default(),
            operands: trim(directive.get(end..).unwrap_or_default()),
        });
    }
    // Dual-issue braces of older architectures: `{ IADD ... ;` and `... }`.
    if let Some(inner) = rest.strip_prefix(b"{") {
        rest = trim(inner);
    }
    let semicolon = memchr::memchr(b';', rest).ok_or(LineError::Unterminated)?;
    let text = rest.get(..=semicolon).unwrap_or(rest);
    let stmt = rest.get(..semicolon).unwrap_or(rest);
    let (guard, after_guard) = if stmt.first() == Some(&b'@') {
        let end = stmt
            .iter()
            .position(|b| *b == b' ' || *b == b'\t')
            .unwrap_or(stmt.len());
        (stmt.get(..end), trim(stmt.get(end..).unwrap_or_default()))
    } else {
        (None, stmt)
    };
    let op_end = after_guard
        .iter()
        .position(|b| *b == b' ' || *b == b'\t')
        .unwrap_or(after_guard.len());
    let opcode = after_guard.get(..op_end).unwrap_or_default();
    if opcode.is_empty() {
        return Err(LineError::BadOpcode);
    }
    // The mnemonic's spelling is checked once per distinct opcode, when it is interned.
    Ok(Addressed::Instruction(Instruction {
        address,
        guard,
        opcode,
        operands: trim(after_guard.get(op_end..).unwrap_or_default()),
        text,
    }))
}

pub fn parse_hex(hex: &[u8]) -> Option<u64> {
    let hex = hex.strip_prefix(b"0x").unwrap_or(hex);
    if hex.is_empty() || hex.len() > 16 {
        return None;
    }
    hex.iter().try_fold(0u64, |acc, b| {
        let digit = (*b as char).to_digit(16)?;
        Some(acc << 4 | u64::from(digit))
    })
}

/// An upper-case base mnemonic; modifiers may hold lower case (`HGMMA.64x128x16.F32`).
pub fn is_mnemonic(op: &[u8]) -> bool {
    matches!(op.first(), Some(b'A'..=b'Z'))
        && op
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
}

/// The target of a branch when the operands name one: `0xd50` (cuobjdump) or `` `(.L_x_2) `` (nvdisasm).
pub enum BranchTarget<'a> {
    Address(u64),
    Label(&'a [u8]),
}

pub fn branch_target(operands: &[u8]) -> Option<BranchTarget<'_>> {
    let last = operands
        .rsplit(|b| *b == b' ' || *b == b',')
        .find(|t| !t.is_empty())?;
    if let Some(label) = last.strip_prefix(b"`(") {
        return label.strip_suffix(b")").map(BranchTarget::Label);
    }
    if last.starts_with(b"0x") {
        return parse_hex(last).map(BranchTarget::Address);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instr(line: &str) -> Instruction<'_> {
        match parse_addressed(line.as_bytes()).unwrap() {
            Addressed::Instruction(i) => i,
            Addressed::Data { .. } => panic!("not an instruction: {line}"),
        }
    }

    #[test]
    fn splits_a_cuobjdump_instruction() {
        let i = instr("/*0150*/              @!P0 BRA 0xd50 ;                                          /* 0x0000000800fc8947 */");
        assert_eq!(i.address, 0x150);
        assert_eq!(i.guard, Some(&b"@!P0"[..]));
        assert_eq!(i.opcode, b"BRA");
        assert_eq!(i.operands, b"0xd50");
        assert_eq!(i.text, b"@!P0 BRA 0xd50 ;");
    }

    #[test]
    fn splits_nvdisasm_forms() {
        let i = instr("/*0170*/                   BRA `(.L_x_10);");
        assert_eq!(i.opcode, b"BRA");
        assert!(
            matches!(branch_target(i.operands), Some(BranchTarget::Label(l)) if l == b".L_x_10")
        );
        let nop = instr("/*0180*/                   NOP;");
        assert_eq!((nop.opcode, nop.operands), (&b"NOP"[..], &b""[..]));
        let ann =
            instr("/*0120*/ LDG.E R2, desc[UR6][R2.64]   &req={1} &wr=0x2  ?trans4;   /* 0x00 */");
        assert_eq!(ann.opcode, b"LDG.E");
    }

    #[test]
    fn data_directives_are_not_instructions() {
        let d = parse_addressed(b"/*0004*/ \t.word\tindex@(_Z7vec_addPK6float4S1_PS_i)").unwrap();
        assert_eq!(
            d,
            Addressed::Data {
                directive: b"word",
                operands: b"index@(_Z7vec_addPK6float4S1_PS_i)"
            }
        );
    }

    #[test]
    fn malformed_lines_are_classified() {
        assert_eq!(
            parse_addressed(b"/*0150*/ LDG.E R2, desc[UR4][R2.64]"),
            Err(LineError::Unterminated)
        );
        assert_eq!(parse_addressed(b"/*zz*/ NOP ;"), Err(LineError::BadAddress));
        assert_eq!(parse_addressed(b"/*0000*/ ;"), Err(LineError::BadOpcode));
        assert!(!is_mnemonic(b"hello"));
        assert!(is_mnemonic(b"HGMMA.64x8x16.F32"));
    }

    #[test]
    fn opcode_info_has_base_modifiers_classes_and_width() {
        let ldg = OpcodeInfo::new("LDG.E.128.CONSTANT");
        assert_eq!(ldg.base(), "LDG");
        assert_eq!(
            ldg.modifiers().collect::<Vec<_>>(),
            ["E", "128", "CONSTANT"]
        );
        assert_eq!(ldg.class_names(), ["global_load"]);
        assert_eq!(ldg.width_bits, Some(128));
        assert_eq!(OpcodeInfo::new("STG.E.U16").width_bits, Some(16));
        assert_eq!(OpcodeInfo::new("LDSM.16.M88.4").width_bits, None);
        assert_eq!(
            OpcodeInfo::new("HMMA.16816.F32").class_names(),
            ["tensor_core"]
        );
        let hgmma = instr("/*0d70*/ HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8].tnspB, R24 ;");
        assert_eq!(hgmma.opcode, b"HGMMA.64x128x16.F32.BF16");
        // LDSM is a shared load, not a substring match of LDS; USETMAXREG is not SETMAXREG.
        assert_eq!(OpcodeInfo::new("LDSM.16.M88.4").base(), "LDSM");
        assert_eq!(OpcodeInfo::new("IMAD.WIDE").classes, 0);
    }
}
