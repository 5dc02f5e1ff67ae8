//! Known names nearest to one a user typed, for errors that list them (the Python side's
//! `gpuopt.names.closest` ranks the same way: by edit distance, also against an NVTX tag's text).

/// The text of a `DOMAIN:TEXT` tag (`:TEXT` for the default domain); the whole name when it has none.
fn text(name: &str) -> &str {
    match name.split_once(':') {
        Some((domain, rest))
            if !rest.is_empty() && !rest.starts_with(':') && !domain.contains(':') =>
        {
            rest
        }
        _ => name,
    }
}

/// Levenshtein distance over chars, case-insensitive.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = i;
        let mut left = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row.get(j + 1).copied().unwrap_or(usize::MAX);
            let best = (diagonal + usize::from(ca != cb)).min(up + 1).min(left + 1);
            diagonal = up;
            if let Some(slot) = row.get_mut(j + 1) {
                *slot = best;
            }
            left = best;
        }
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
    }
    row.last().copied().unwrap_or(0)
}

/// The `n` names nearest to `given` (ties by name), each name once.
pub fn closest<'a>(
    given: &str,
    names: impl IntoIterator<Item = &'a str>,
    n: usize,
) -> Vec<&'a str> {
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .map(|name| (distance(given, name).min(distance(given, text(name))), name))
        .collect();
    scored.sort_unstable();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(n).map(|(_, name)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_names_come_first() {
        let names = [
            ":step_0",
            ":step_1",
            ":forward",
            ":h2d",
            "NCCL:allreduce",
            ":aten::mm",
        ];
        assert_eq!(closest("stepp_1", names, 2), vec![":step_1", ":step_0"]);
        assert_eq!(closest("allreduse", names, 1), vec!["NCCL:allreduce"]);
        assert_eq!(closest("aten::m", names, 1), vec![":aten::mm"]);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert!(closest("x", [], 3).is_empty());
    }
}
