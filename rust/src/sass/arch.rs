//! GPU architecture names as listings print them (`sm_90`, `sm_90a`, `sm_100f`), checked against the
//! architectures this version knows. An unknown one fails closed instead of being guessed at.

use super::codes;
use crate::error::{Error, Result};

/// Compute capabilities (major * 10 + minor) that CUDA 12.x/13.x toolchains emit SASS for.
const KNOWN: &[u16] = &[
    50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121,
];

/// A SASS architecture: the compute capability and the family suffix (`a` arch-specific, `f` family).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Arch {
    pub sm: u16,
    pub suffix: Option<char>,
}

impl Arch {
    /// Parses `sm_NN`, `sm_NNa` or `sm_NNf` (surrounding quotes or a trailing comma are not accepted).
    pub fn parse(text: &str) -> Result<Self> {
        let unknown = || {
            Error::input(
                codes::ARCH_UNKNOWN,
                format!("unknown GPU architecture {text:?} in the listing"),
            )
            .with_expected(expected())
            .with_observed(text.to_string())
        };
        let rest = text.strip_prefix("sm_").ok_or_else(unknown)?;
        let (digits, suffix) = match rest.char_indices().last() {
            Some((i, c @ ('a' | 'f'))) => (rest.get(..i).unwrap_or_default(), Some(c)),
            _ => (rest, None),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(unknown());
        }
        let sm: u16 = digits.parse().map_err(|_| unknown())?;
        if !KNOWN.contains(&sm) {
            return Err(unknown());
        }
        Ok(Self { sm, suffix })
    }

    /// The architecture from an ELF header-flags token such as `EF_CUDA_SM80` (no suffix).
    pub fn from_header_flag(flag: &str) -> Option<Result<Self>> {
        let digits = flag.strip_prefix("EF_CUDA_SM")?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Self::parse(&format!("sm_{digits}")))
    }

    pub fn name(&self) -> String {
        match self.suffix {
            Some(c) => format!("sm_{}{c}", self.sm),
            None => format!("sm_{}", self.sm),
        }
    }
}

fn expected() -> String {
    let names: Vec<String> = KNOWN.iter().map(|sm| format!("sm_{sm}")).collect();
    format!(
        "one of {} (optionally with an `a` or `f` suffix)",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_suffixed_names() {
        assert_eq!(Arch::parse("sm_90").unwrap().name(), "sm_90");
        assert_eq!(Arch::parse("sm_90a").unwrap().name(), "sm_90a");
        assert_eq!(Arch::parse("sm_100f").unwrap().sm, 100);
    }

    #[test]
    fn unknown_names_fail_closed() {
        for bad in ["sm_99", "sm_", "sm_9x", "compute_90", "sm_90b", "sm_1000"] {
            let err = Arch::parse(bad).unwrap_err();
            assert_eq!(err.code, codes::ARCH_UNKNOWN, "{bad}");
        }
    }

    #[test]
    fn header_flags_name_the_architecture() {
        assert_eq!(
            Arch::from_header_flag("EF_CUDA_SM80")
                .unwrap()
                .unwrap()
                .name(),
            "sm_80"
        );
        assert!(Arch::from_header_flag("EF_CUDA_64BIT_ADDRESS").is_none());
    }
}
