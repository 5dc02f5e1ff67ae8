//! Record ids, validated against `^[a-z0-9-]+$` and their exact shape before any path is built from them.

use super::codes;
use crate::error::{Error, Result};

/// The kinds of ids the store knows, with their shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// `tgt-<64hex>`
    Target,
    /// `exp-<64hex>`
    Experiment,
    /// `inv-<32hex>` or `inv-<32hex>-r<N>`
    Invocation,
    /// `probe-<24hex>`
    Probe,
    /// `sel-<32hex>`
    Selection,
    /// `map-<64hex>`
    Map,
    /// `<64hex>`: an object digest or blob hash
    Digest,
}

impl IdKind {
    pub fn parse(name: &str) -> Option<IdKind> {
        Some(match name {
            "target" => IdKind::Target,
            "experiment" => IdKind::Experiment,
            "invocation" => IdKind::Invocation,
            "probe" => IdKind::Probe,
            "selection" => IdKind::Selection,
            "map" => IdKind::Map,
            "digest" => IdKind::Digest,
            _ => return None,
        })
    }

    fn shape(self) -> &'static str {
        match self {
            IdKind::Target => "tgt-<64 hex>",
            IdKind::Experiment => "exp-<64 hex>",
            IdKind::Invocation => "inv-<32 hex> or inv-<32 hex>-r<N>",
            IdKind::Probe => "probe-<24 hex>",
            IdKind::Selection => "sel-<32 hex>",
            IdKind::Map => "map-<64 hex>",
            IdKind::Digest => "<64 hex>",
        }
    }
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn matches(kind: IdKind, id: &str) -> bool {
    let tail = |prefix: &str, len: usize| id.strip_prefix(prefix).is_some_and(|h| is_hex(h, len));
    match kind {
        IdKind::Target => tail("tgt-", 64),
        IdKind::Experiment => tail("exp-", 64),
        IdKind::Selection => tail("sel-", 32),
        IdKind::Map => tail("map-", 64),
        IdKind::Probe => tail("probe-", 24),
        IdKind::Digest => is_hex(id, 64),
        IdKind::Invocation => {
            let Some(rest) = id.strip_prefix("inv-") else {
                return false;
            };
            let (hex, retry) = match rest.split_once("-r") {
                Some((h, n)) => (h, Some(n)),
                None => (rest, None),
            };
            is_hex(hex, 32)
                && retry.is_none_or(|n| {
                    !n.is_empty()
                        && n.len() <= 6
                        && !n.starts_with('0')
                        && n.bytes().all(|b| b.is_ascii_digit())
                })
        }
    }
}

/// Checks `id` against its kind's shape; `path_unsafe` otherwise (nothing is built from a bad id).
pub fn validate(kind: IdKind, id: &str) -> Result<()> {
    if matches(kind, id) {
        Ok(())
    } else {
        Err(
            Error::input(codes::PATH_UNSAFE, format!("{id:?} is not a valid id"))
                .with_expected(kind.shape())
                .with_observed(id.chars().take(100).collect::<String>()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let h32 = "0123456789abcdef0123456789abcdef";
        let h64 = format!("{h32}{h32}");
        assert!(validate(IdKind::Invocation, &format!("inv-{h32}")).is_ok());
        assert!(validate(IdKind::Invocation, &format!("inv-{h32}-r1")).is_ok());
        assert!(validate(IdKind::Invocation, &format!("inv-{h32}-r12")).is_ok());
        assert!(validate(IdKind::Invocation, &format!("inv-{h32}-r0")).is_err());
        assert!(validate(IdKind::Invocation, &format!("inv-{h32}-r")).is_err());
        assert!(validate(IdKind::Invocation, &format!("inv-{h32}/../x")).is_err());
        assert!(validate(IdKind::Target, &format!("tgt-{h64}")).is_ok());
        assert!(validate(IdKind::Target, &format!("tgt-{}", h64.to_uppercase())).is_err());
        assert!(validate(IdKind::Digest, &h64).is_ok());
        assert_eq!(
            validate(IdKind::Selection, "sel-..").unwrap_err().code,
            codes::PATH_UNSAFE
        );
    }
}
