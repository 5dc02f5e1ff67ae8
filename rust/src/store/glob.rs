//! Exclusion globs over relative POSIX paths: `*` and `?` stay inside one component, `**` spans any number
//! of components (zero included). A directory is excluded with everything below it when a glob matches it
//! or matches it followed by `/**`.

use crate::error::{Error, Result};

/// A compiled set of exclusion globs.
#[derive(Debug, Clone, Default)]
pub struct Excludes {
    patterns: Vec<Vec<String>>,
}

impl Excludes {
    pub fn new(globs: &[String]) -> Result<Excludes> {
        let mut patterns = Vec::new();
        for g in globs {
            if g.is_empty() || g.starts_with('/') || g.split('/').any(|c| c.is_empty() || c == "..")
            {
                return Err(Error::input(
                    "field_invalid",
                    format!("exclude glob {g:?} must be a relative path pattern without empty or '..' parts"),
                )
                .with_path("source_rules.exclude")
                .with_observed(g.clone()));
            }
            patterns.push(g.split('/').map(str::to_string).collect());
        }
        Ok(Excludes { patterns })
    }

    /// Whether the file or directory at `rel` is excluded.
    pub fn excludes(&self, rel: &str, is_dir: bool) -> bool {
        let parts: Vec<&str> = rel.split('/').collect();
        self.patterns.iter().any(|p| {
            match_parts(p, &parts)
                || (is_dir
                    && p.last().is_some_and(|l| l == "**")
                    && match_parts(p.get(..p.len() - 1).unwrap_or(&[]), &parts))
        })
    }
}

fn match_parts(pattern: &[String], parts: &[&str]) -> bool {
    match pattern.split_first() {
        None => parts.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=parts.len()).any(|skip| match_parts(rest, parts.get(skip..).unwrap_or(&[])))
        }
        Some((first, rest)) => match parts.split_first() {
            Some((part, tail)) => {
                match_component(first.as_bytes(), part.as_bytes()) && match_parts(rest, tail)
            }
            None => false,
        },
    }
}

fn match_component(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => {
            (0..=text.len()).any(|skip| match_component(rest, text.get(skip..).unwrap_or(&[])))
        }
        Some((b'?', rest)) => {
            !text.is_empty() && match_component(rest, text.get(1..).unwrap_or(&[]))
        }
        Some((c, rest)) => {
            text.first() == Some(c) && match_component(rest, text.get(1..).unwrap_or(&[]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let ex =
            Excludes::new(&[".git/**".into(), "**/__pycache__/**".into(), "*.log".into()]).unwrap();
        assert!(ex.excludes(".git", true));
        assert!(ex.excludes(".git/config", false));
        assert!(ex.excludes("__pycache__", true));
        assert!(ex.excludes("a/b/__pycache__", true));
        assert!(ex.excludes("a/__pycache__/x.pyc", false));
        assert!(ex.excludes("run.log", false));
        assert!(!ex.excludes("a/run.log", false));
        assert!(!ex.excludes("src/main.py", false));
        assert!(!ex.excludes(".github", true));
        assert!(Excludes::new(&["../x".into()]).is_err());
    }
}
