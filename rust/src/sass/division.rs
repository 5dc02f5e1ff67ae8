//! nvcc's integer division: 32- and 64-bit integer `/` and `%` are lowered to a float reciprocal of the
//! divisor and integer corrections, with no float math in the source:
//!
//! ```text
//! I2F.U32.RP R2, UR9 ;            // divisor to float, rounded up (I2F.RP after IABS when signed)
//! MUFU.RCP R2, R2 ;               // its reciprocal on the special-function unit
//! VIADD R6, R2, 0xffffffe ;
//! F2I.FTZ.U32.TRUNC.NTZ R7, R6 ;  // back to an unsigned integer (F2I.U64.TRUNC for 64 bits)
//! IMAD.HI.U32 ... / IMAD ...      // the quotient and its correction
//! ```
//!
//! A `MUFU.RCP` is counted as part of it when its source register is the destination of the last
//! round-up integer-to-float conversion and an unsigned truncating float-to-integer conversion follows.
//! Both links must lie within [`WINDOW`] instructions (the scheduler interleaves other work: 5 and 11
//! instructions apart in the `local_spill` fixture).

/// What an opcode is to the division sequence, decided once per distinct opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DivisionStep {
    #[default]
    None,
    /// `I2F` with the `.RP` (round toward +∞) modifier.
    ToFloatRoundUp,
    /// `MUFU.RCP` (exactly: not `RCP64H`).
    Reciprocal,
    /// `F2I` with `.TRUNC` and an unsigned integer type (`.U32`, `.U64`).
    ToUnsignedTruncated,
}

impl DivisionStep {
    /// The step of a mnemonic split into its base and modifiers.
    pub fn of(base: &str, modifiers: &[&str]) -> Self {
        let has = |m: &str| modifiers.contains(&m);
        match base {
            "I2F" if has("RP") => Self::ToFloatRoundUp,
            "MUFU" if modifiers == ["RCP"] => Self::Reciprocal,
            "F2I" if has("TRUNC") && (has("U32") || has("U64")) => Self::ToUnsignedTruncated,
            _ => Self::None,
        }
    }
}

/// Instructions within which one step of the sequence must follow the previous one.
pub const WINDOW: u32 = 16;

/// The sequence's state within one function, fed every instruction in listing order.
#[derive(Debug, Default)]
pub struct Division {
    /// The destination register of the last round-up conversion, and the instructions since.
    converted: Option<(u64, u32)>,
    /// Reciprocals of a converted divisor awaiting their truncating conversion, and the instructions
    /// since the latest.
    pending: u64,
    pending_age: u32,
}

impl Division {
    /// Takes one instruction; returns the reciprocals it completed as integer divisions.
    #[inline]
    pub fn step(&mut self, step: DivisionStep, operands: &[u8]) -> u64 {
        let mut done = 0;
        match step {
            DivisionStep::None => {}
            DivisionStep::ToFloatRoundUp => {
                self.converted = register(operand(operands, 0)).map(|r| (r, 0));
            }
            DivisionStep::Reciprocal => {
                let source = register(operand(operands, 1));
                if source.is_some() && source == self.converted.map(|(r, _)| r) {
                    self.converted = None;
                    self.pending += 1;
                    self.pending_age = 0;
                }
            }
            DivisionStep::ToUnsignedTruncated => {
                done = self.pending;
                self.pending = 0;
            }
        }
        self.age();
        done
    }

    fn age(&mut self) {
        if let Some((reg, age)) = self.converted {
            self.converted = (age < WINDOW).then_some((reg, age + 1));
        }
        if self.pending > 0 {
            self.pending_age += 1;
            if self.pending_age > WINDOW {
                self.pending = 0;
            }
        }
    }
}

/// Operand `index` of `R2, UR9`, trimmed.
fn operand(operands: &[u8], index: usize) -> &[u8] {
    operands
        .split(|b| *b == b',')
        .nth(index)
        .map_or(&[][..], crate::sass::lexer::trim)
}

/// A plain register operand (`R2`, `R2.reuse`) as a key; none for anything else (immediates,
/// negated or absolute operands, constant banks, uniform registers).
fn register(op: &[u8]) -> Option<u64> {
    let op = op.strip_suffix(b".reuse").unwrap_or(op);
    let digits = op.strip_prefix(b"R")?;
    if digits.is_empty() || digits.len() > 7 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(op.iter().fold(0u64, |acc, b| acc << 8 | u64::from(*b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(lines: &[(&str, &str)]) -> u64 {
        let mut d = Division::default();
        lines
            .iter()
            .map(|(op, operands)| {
                let mut parts = op.split('.');
                let base = parts.next().unwrap();
                let modifiers: Vec<&str> = parts.collect();
                d.step(DivisionStep::of(base, &modifiers), operands.as_bytes())
            })
            .sum()
    }

    #[test]
    fn steps_are_read_from_the_mnemonic() {
        assert_eq!(
            DivisionStep::of("I2F", &["U32", "RP"]),
            DivisionStep::ToFloatRoundUp
        );
        assert_eq!(
            DivisionStep::of("I2F", &["RP"]),
            DivisionStep::ToFloatRoundUp
        );
        assert_eq!(DivisionStep::of("I2F", &["U32"]), DivisionStep::None);
        assert_eq!(DivisionStep::of("MUFU", &["RCP"]), DivisionStep::Reciprocal);
        assert_eq!(DivisionStep::of("MUFU", &["RCP64H"]), DivisionStep::None);
        assert_eq!(DivisionStep::of("MUFU", &["EX2"]), DivisionStep::None);
        let trunc = DivisionStep::ToUnsignedTruncated;
        assert_eq!(
            DivisionStep::of("F2I", &["FTZ", "U32", "TRUNC", "NTZ"]),
            trunc
        );
        assert_eq!(DivisionStep::of("F2I", &["U64", "TRUNC"]), trunc);
        assert_eq!(
            DivisionStep::of("F2I", &["TRUNC", "NTZ"]),
            DivisionStep::None
        );
    }

    #[test]
    fn the_unsigned_sequence_counts_its_reciprocal() {
        let seq = [
            ("I2F.U32.RP", "R2, UR9"),
            ("ISETP.NE.U32.AND", "P1, PT, RZ, UR9, PT"),
            ("MUFU.RCP", "R2, R2"),
            ("VIADD", "R6, R2, 0xffffffe"),
            ("F2I.FTZ.U32.TRUNC.NTZ", "R7, R6"),
        ];
        assert_eq!(steps(&seq), 1);
    }

    #[test]
    fn a_float_reciprocal_is_not_a_division() {
        // A float 1/x: no round-up conversion feeds it.
        assert_eq!(
            steps(&[("MUFU.RCP", "R3, R0"), ("F2I.U32.TRUNC", "R1, R3")]),
            0
        );
        // Fed by another register than the converted one.
        let other = [
            ("I2F.RP", "R3, R20"),
            ("MUFU.RCP", "R4, R5"),
            ("F2I.FTZ.U32.TRUNC.NTZ", "R7, R6"),
        ];
        assert_eq!(steps(&other), 0);
        // No truncating conversion follows within the window.
        let mut open = vec![("I2F.RP", "R3, R20"), ("MUFU.RCP", "R3, R3")];
        open.extend(std::iter::repeat_n(
            ("IADD3", "R0, R0, 0x1, RZ"),
            WINDOW as usize,
        ));
        open.push(("F2I.FTZ.U32.TRUNC.NTZ", "R7, R6"));
        assert_eq!(steps(&open), 0);
    }

    #[test]
    fn registers_are_plain_r_registers() {
        assert_eq!(register(b"R2"), register(b"R2.reuse"));
        assert!(register(b"R255").is_some());
        for op in [
            "UR9",
            "-R2",
            "|R2|",
            "RZ",
            "0x3f800000",
            "c[0x0][0x210]",
            "",
        ] {
            assert_eq!(register(op.as_bytes()), None, "{op}");
        }
    }
}
