//! The signature catalog (`references/sass_signatures.json`): mechanisms described as opcode patterns
//! on parsed instructions, per architecture. A pattern is an exact base mnemonic plus modifiers that
//! must all be present; it never looks at function names, labels, comments or operands.

use super::arch::Arch;
use super::codes;
use super::instruction::OpcodeInfo;
use crate::error::{Error, Result};
use serde::Serialize;
use serde_json::{Map, Value};

/// The catalog shipped with gpuopt (compiled in, so an installed wheel needs no data files).
pub const BUILTIN: &str = include_str!("../../../references/sass_signatures.json");
pub const FORMAT: &str = "gpuopt.sass_signatures";
pub const VERSION: u64 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Require {
    Any,
    All,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pattern {
    pub opcode: String,
    pub modifiers: Vec<String>,
}

impl Pattern {
    pub fn matches(&self, info: &OpcodeInfo) -> bool {
        info.base() == self.opcode
            && self
                .modifiers
                .iter()
                .all(|want| info.modifiers().any(|m| m == want))
    }

    /// `LDG[.128]`-style display: base, then the required modifiers.
    pub fn display(&self) -> String {
        std::iter::once(self.opcode.as_str())
            .chain(self.modifiers.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(".")
    }
}

/// Which architectures a signature applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchRule {
    /// `sm_90a`: exactly that name.
    Exact(Arch),
    /// `sm_80+`: that compute capability or newer, any suffix.
    AtLeast(u16),
}

impl ArchRule {
    fn applies(&self, arch: Arch) -> bool {
        match self {
            Self::Exact(a) => *a == arch,
            Self::AtLeast(sm) => arch.sm >= *sm,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Signature {
    pub key: String,
    pub mechanism: String,
    pub architectures: Vec<String>,
    #[serde(skip)]
    pub rules: Vec<ArchRule>,
    pub require: Require,
    pub patterns: Vec<Pattern>,
    /// Index of this signature's first pattern in the catalog's flat pattern list.
    #[serde(skip)]
    pub first_pattern: usize,
}

impl Signature {
    pub fn applies_to(&self, arch: Option<Arch>) -> bool {
        arch.is_some_and(|a| self.rules.iter().any(|r| r.applies(a)))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    pub version: u64,
    pub sha256: String,
    pub signatures: Vec<Signature>,
    /// Every pattern, flattened; an opcode stores indices into this list.
    pub patterns: Vec<(usize, Pattern)>,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::input(codes::CATALOG_INVALID, message).with_expected(format!(
        "a {FORMAT} catalog, version {VERSION} (references/sass_signatures.md)"
    ))
}

fn closed_keys(obj: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<()> {
    if let Some(extra) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(invalid(format!(
            "{what}: unknown key {extra:?} (allowed: {})",
            allowed.join(", ")
        )));
    }
    Ok(())
}

fn string<'a>(obj: &'a Map<String, Value>, key: &str, what: &str) -> Result<&'a str> {
    obj.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid(format!("{what}: {key:?} must be a non-empty string")))
}

fn token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

impl Catalog {
    pub fn builtin() -> Result<Self> {
        Self::parse(BUILTIN.as_bytes())
    }

    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let root: Value = serde_json::from_slice(bytes)
            .map_err(|e| invalid(format!("the catalog is not JSON: {e}")))?;
        let obj = root
            .as_object()
            .ok_or_else(|| invalid("the catalog must be a JSON object"))?;
        closed_keys(obj, &["format", "version", "note", "signatures"], "catalog")?;
        if obj.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(invalid(format!("\"format\" must be {FORMAT:?}")));
        }
        let version = obj.get("version").and_then(Value::as_u64).unwrap_or(0);
        if version != VERSION {
            return Err(
                invalid(format!("catalog version {version} is not supported"))
                    .with_observed(format!("version {version}")),
            );
        }
        let list = obj
            .get("signatures")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid("\"signatures\" must be a list"))?;
        let mut signatures = Vec::with_capacity(list.len());
        let mut patterns = Vec::new();
        for (i, item) in list.iter().enumerate() {
            let sig = parse_signature(item, i, patterns.len())?;
            if signatures.iter().any(|s: &Signature| s.key == sig.key) {
                return Err(invalid(format!(
                    "signature key {:?} appears twice",
                    sig.key
                )));
            }
            for p in &sig.patterns {
                patterns.push((signatures.len(), p.clone()));
            }
            signatures.push(sig);
        }
        if patterns.len() > usize::from(u16::MAX) {
            return Err(invalid("the catalog holds more than 65535 patterns"));
        }
        Ok(Self {
            version,
            sha256: crate::identity::hex(&<sha2::Sha256 as sha2::Digest>::digest(bytes)),
            signatures,
            patterns,
        })
    }

    /// Indices of the patterns an opcode satisfies.
    pub fn patterns_for(&self, info: &OpcodeInfo) -> Vec<u16> {
        self.patterns
            .iter()
            .enumerate()
            .filter(|(_, (_, p))| p.matches(info))
            .filter_map(|(i, _)| u16::try_from(i).ok())
            .collect()
    }
}

fn parse_signature(item: &Value, i: usize, first_pattern: usize) -> Result<Signature> {
    let what = format!("signatures[{i}]");
    let obj = item
        .as_object()
        .ok_or_else(|| invalid(format!("{what} must be an object")))?;
    closed_keys(
        obj,
        &[
            "key",
            "mechanism",
            "architectures",
            "require",
            "patterns",
            "evidence",
            "note",
        ],
        &what,
    )?;
    let key = string(obj, "key", &what)?.to_string();
    if !key
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(invalid(format!("{what}: key {key:?} must be snake_case")));
    }
    let mechanism = string(obj, "mechanism", &what)?.to_string();
    let require = match string(obj, "require", &what)? {
        "any" => Require::Any,
        "all" => Require::All,
        other => {
            return Err(invalid(format!(
                "{what}: require {other:?} is not \"any\" or \"all\""
            )))
        }
    };
    let arch_list = obj
        .get("architectures")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| {
            invalid(format!(
                "{what}: \"architectures\" must be a non-empty list"
            ))
        })?;
    let mut architectures = Vec::new();
    let mut rules = Vec::new();
    for a in arch_list {
        let text = a
            .as_str()
            .ok_or_else(|| invalid(format!("{what}: architectures must be strings")))?;
        let rule = match text.strip_suffix('+') {
            Some(base) => ArchRule::AtLeast(
                Arch::parse(base)
                    .map_err(|e| invalid(format!("{what}: {}", e.message)))?
                    .sm,
            ),
            None => ArchRule::Exact(
                Arch::parse(text).map_err(|e| invalid(format!("{what}: {}", e.message)))?,
            ),
        };
        architectures.push(text.to_string());
        rules.push(rule);
    }
    let pattern_list = obj
        .get("patterns")
        .and_then(Value::as_array)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| invalid(format!("{what}: \"patterns\" must be a non-empty list")))?;
    let mut patterns = Vec::new();
    for (j, p) in pattern_list.iter().enumerate() {
        let pwhat = format!("{what}.patterns[{j}]");
        let pobj = p
            .as_object()
            .ok_or_else(|| invalid(format!("{pwhat} must be an object")))?;
        closed_keys(pobj, &["opcode", "modifiers"], &pwhat)?;
        let opcode = string(pobj, "opcode", &pwhat)?.to_string();
        if !token(&opcode) {
            return Err(invalid(format!(
                "{pwhat}: opcode {opcode:?} must be one upper-case mnemonic without dots"
            )));
        }
        let modifiers = match pobj.get("modifiers") {
            None => Vec::new(),
            Some(Value::Array(ms)) => ms
                .iter()
                .map(|m| {
                    m.as_str()
                        .filter(|s| token(s))
                        .map(str::to_string)
                        .ok_or_else(|| {
                            invalid(format!(
                                "{pwhat}: modifiers must be upper-case tokens without dots"
                            ))
                        })
                })
                .collect::<Result<Vec<_>>>()?,
            Some(_) => return Err(invalid(format!("{pwhat}: \"modifiers\" must be a list"))),
        };
        patterns.push(Pattern { opcode, modifiers });
    }
    Ok(Signature {
        key,
        mechanism,
        architectures,
        rules,
        require,
        patterns,
        first_pattern,
    })
}

/// The outcome of one signature in one function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Found,
    Missing,
    NotApplicable,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Self::Found => "found",
            Self::Missing => "missing",
            Self::NotApplicable => "not_applicable",
        }
    }
}

/// Evaluates a signature from a function's pattern hits: (status, per-pattern match counts).
pub fn evaluate(
    sig: &Signature,
    arch: Option<Arch>,
    hits: &[super::function::PatternHits],
) -> (Status, Vec<u64>) {
    let counts: Vec<u64> = (0..sig.patterns.len())
        .map(|k| {
            let idx = sig.first_pattern + k;
            hits.iter()
                .find(|h| usize::from(h.pattern) == idx)
                .map_or(0, |h| h.count)
        })
        .collect();
    if !sig.applies_to(arch) {
        return (Status::NotApplicable, counts);
    }
    let found = match sig.require {
        Require::Any => counts.iter().any(|c| *c > 0),
        Require::All => counts.iter().all(|c| *c > 0),
    };
    (
        if found {
            Status::Found
        } else {
            Status::Missing
        },
        counts,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalog_is_valid() {
        let cat = Catalog::builtin().unwrap();
        assert!(cat.signatures.len() >= 8);
        assert!(cat
            .signatures
            .iter()
            .any(|s| s.key == "hopper_warpgroup_mma"));
    }

    #[test]
    fn patterns_match_base_and_modifier_sets_not_substrings() {
        let p = Pattern {
            opcode: "LDS".into(),
            modifiers: vec![],
        };
        assert!(p.matches(&OpcodeInfo::new("LDS.U.128")));
        assert!(!p.matches(&OpcodeInfo::new("LDSM.16.M88.4")));
        let wide = Pattern {
            opcode: "LDG".into(),
            modifiers: vec!["128".into()],
        };
        assert!(wide.matches(&OpcodeInfo::new("LDG.E.128.CONSTANT")));
        assert!(!wide.matches(&OpcodeInfo::new("LDG.E")));
        assert!(!wide.matches(&OpcodeInfo::new("LDG.E.LTC128B")));
    }

    #[test]
    fn bad_catalogs_are_refused_with_a_code() {
        for bad in [
            r#"[]"#,
            r#"{"format":"gpuopt.sass_signatures","version":2,"signatures":[]}"#,
            r#"{"format":"gpuopt.sass_signatures","version":1,"signatures":[],"extra":1}"#,
            r#"{"format":"gpuopt.sass_signatures","version":1,"signatures":[{"key":"x","mechanism":"m","architectures":["sm_90"],"require":"any","patterns":[{"opcode":"HMMA.16816"}]}]}"#,
            r#"{"format":"gpuopt.sass_signatures","version":1,"signatures":[{"key":"x","mechanism":"m","architectures":["sm_99"],"require":"any","patterns":[{"opcode":"HMMA"}]}]}"#,
            r#"{"format":"gpuopt.sass_signatures","version":1,"signatures":[{"key":"x","mechanism":"m","architectures":["sm_90"],"require":"most","patterns":[{"opcode":"HMMA"}]}]}"#,
        ] {
            let err = Catalog::parse(bad.as_bytes()).unwrap_err();
            assert_eq!(err.code, codes::CATALOG_INVALID, "{bad}");
        }
    }

    #[test]
    fn arch_rules() {
        let cat = Catalog::parse(br#"{"format":"gpuopt.sass_signatures","version":1,"signatures":[{"key":"x","mechanism":"m","architectures":["sm_80+"],"require":"all","patterns":[{"opcode":"LDGSTS"}]}]}"#).unwrap();
        let sig = &cat.signatures[0];
        assert!(sig.applies_to(Some(Arch::parse("sm_90a").unwrap())));
        assert!(!sig.applies_to(Some(Arch::parse("sm_75").unwrap())));
        assert!(!sig.applies_to(None));
    }
}
