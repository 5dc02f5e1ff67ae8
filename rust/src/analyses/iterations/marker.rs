//! Which top-level range group marks the steps (see the module above: `--marker`, else
//! `ProfilerStep#*`, else the repeated group covering the most time among those that tile their
//! threads).

use super::super::activity::Activity;
use super::super::codes;
use super::group_name;
use crate::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};

/// The group, with its kind, its instance count and how it was chosen.
pub(super) type Choice = (String, (&'static str, usize, &'static str));

/// The marker group: `--marker` (a range name or group), else `ProfilerStep#*`, else the repeated
/// group covering the most time of those that tile their threads ([`tiling`]).
pub(super) fn choose_marker(a: &Activity, wanted: Option<&str>) -> Result<Option<Choice>> {
    let mut groups: BTreeMap<String, (usize, i64)> = BTreeMap::new();
    for m in &a.markers {
        let g = groups.entry(group_name(a.name(m.name))).or_default();
        g.0 += 1;
        g.1 = g.1.saturating_add(m.end - m.start);
    }
    let tiles = tiling(a, &groups);
    let kind_of = |group: &str| {
        if group == "ProfilerStep#*" {
            "profiler_step"
        } else {
            a.marker_kind
        }
    };
    if let Some(wanted) = wanted {
        let found = groups
            .iter()
            .find(|(g, _)| g.as_str() == wanted)
            .or_else(|| {
                let as_group = group_name(wanted);
                groups.iter().find(|(g, _)| **g == as_group)
            });
        return match found {
            Some((g, (n, _))) => Ok(Some((g.clone(), (kind_of(g), *n, "option")))),
            None => {
                let names: Vec<&str> = groups.keys().map(String::as_str).collect();
                let near = crate::names::closest(wanted, names.iter().copied(), 5);
                Err(Error::input(
                    codes::MARKER_UNKNOWN,
                    format!("--marker {wanted:?}: no top-level range of that name"),
                )
                .with_expected(if near.is_empty() {
                    "a range name of the capture (it has none)".to_string()
                } else {
                    format!("one of the ranges, e.g. {}", near.join(", "))
                })
                .with_observed(wanted.to_string()))
            }
        };
    }
    if let Some((n, _)) = groups.get("ProfilerStep#*") {
        return Ok(Some((
            "ProfilerStep#*".to_string(),
            ("profiler_step", *n, "profiler_step"),
        )));
    }
    let best = groups
        .iter()
        .filter(|(g, (n, _))| *n >= 2 && tiles.contains(g.as_str()))
        .max_by(|x, y| x.1 .1.cmp(&y.1 .1).then(y.0.cmp(x.0)));
    Ok(best.map(|(g, (n, _))| (g.clone(), (kind_of(g), *n, "most_time"))))
}

/// The groups that could be a step marker: on the threads holding them, their ranges are at least
/// half the top-level ranges or cover at least half the top-level time (`decode_step`: 12 of 13
/// ranges, beside one long `prefill`). Ops annotated one range each (`aten::view, op_id = 7`) have
/// no such group, and the one covering the most time (two blocking `is_nonzero` calls) is no step.
fn tiling<'g>(a: &Activity, groups: &'g BTreeMap<String, (usize, i64)>) -> BTreeSet<&'g str> {
    let mut threads_of: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    let mut per_thread: BTreeMap<u32, (usize, i64)> = BTreeMap::new();
    for m in &a.markers {
        threads_of
            .entry(group_name(a.name(m.name)))
            .or_default()
            .insert(m.thread);
        let t = per_thread.entry(m.thread).or_default();
        t.0 += 1;
        t.1 = t.1.saturating_add(m.end - m.start);
    }
    groups
        .iter()
        .filter(|(group, (count, time))| {
            let (all_count, all_time) = threads_of
                .get(group.as_str())
                .into_iter()
                .flatten()
                .filter_map(|t| per_thread.get(t))
                .fold((0_usize, 0_i64), |(c, s), (n, d)| {
                    (c + n, s.saturating_add(*d))
                });
            count.saturating_mul(2) >= all_count || time.saturating_mul(2) >= all_time
        })
        .map(|(group, _)| group.as_str())
        .collect()
}
