//! The ranks of one job side by side (shared by the nsys and PyTorch-trace engines): per-rank step
//! time and collective wait; per collective, the rank that arrived last and how long the others
//! waited for it; and a straggler table (the ranks others waited for).
//!
//! Definitions (all times on one clock):
//! * Collectives are matched **by order**: the k-th collective kernel (by start) of every rank is the
//!   same collective, as NCCL issues a communicator's collectives in one order on every rank. Only the
//!   first `min(count)` are matched; `names_agree` is false where the k-th kernels' names differ.
//! * A rank **arrives** at a collective when its kernel starts; the kernel of an early rank spins
//!   until the last rank arrives. `skew = last arrival − first arrival`; a rank's **wait** at it is
//!   `last arrival − its arrival`, and `others_wait_ns` sums the waits of every rank.
//! * The **latest rank** of a collective is the one with the last arrival (the lowest rank on a tie).
//! * **Step time** per rank: the durations of its step ranges (`ProfilerStep#N`, or a named NVTX range).

use crate::column::{Column, Declared, Unit};
use crate::error::Result;
use crate::intervals::Span;
use crate::table::Table;
use arrow_array::{ArrayRef, BooleanArray, Int64Array, StringArray};
use std::sync::Arc;

const ARRIVED_LAST: Column = Column::int(
    "arrived_last",
    Unit::Count,
    "Matched collectives at which this rank arrived last (lowest rank on a tie)",
);
const LABEL: Column = Column::text(
    "label",
    "Where the rank came from (file, process, device), for people",
);
const RANK: Column = Column::int(
    "rank",
    Unit::Id,
    "The rank: distributedInfo's rank, or its position in the files given (see data.rank_source)",
);

/// `AREA.rank_collectives`: one row per matched collective.
pub const COLLECTIVES_COLUMNS: &[Column] = &[
    Column::int(
        "index",
        Unit::Id,
        "k: the k-th collective kernel of every rank, by start time",
    ),
    Column::text("name", "The first rank's kernel name for it"),
    Column::flag(
        "names_agree",
        "Whether every rank's k-th collective kernel has that name (false: ranks may not match)",
    ),
    Column::int(
        "latest_rank",
        Unit::Id,
        "The rank that arrived last (its kernel started last; lowest rank on a tie)",
    ),
    Column::int(
        "first_start_ns",
        Unit::Ns,
        "Earliest arrival (kernel start, ns on data.clock)",
    ),
    Column::int(
        "last_start_ns",
        Unit::Ns,
        "Latest arrival (kernel start, ns on data.clock)",
    ),
    Column::int("skew_ns", Unit::Ns, "last_start_ns - first_start_ns (ns)"),
    Column::int(
        "others_wait_ns",
        Unit::Ns,
        "Sum over ranks of last arrival - own arrival (ns): the waiting the latest caused",
    ),
];

/// `AREA.rank_stragglers`: the ranks others waited for.
pub const STRAGGLERS_COLUMNS: &[Column] = &[
    RANK,
    LABEL,
    ARRIVED_LAST,
    Column::int(
        "others_wait_ns",
        Unit::Ns,
        "Summed waiting of the other ranks at the collectives this rank arrived last to (ns)",
    ),
    Column::int(
        "max_skew_ns",
        Unit::Ns,
        "The largest skew among those collectives (ns)",
    ),
];

/// `AREA.ranks`: one row per rank.
pub const RANKS_COLUMNS: &[Column] = &[
    RANK,
    LABEL,
    Column::int(
        "steps",
        Unit::Count,
        "Step ranges of the rank (ProfilerStep#N in torch; instances of --step RANGE in nsys)",
    ),
    Column::int(
        "step_mean_ns",
        Unit::Ns,
        "Mean step duration (ns, integer division); null without steps",
    ),
    Column::int(
        "step_max_ns",
        Unit::Ns,
        "Longest step (ns); null without steps",
    ),
    Column::int(
        "collectives",
        Unit::Count,
        "Collective (NCCL) kernels the rank ran",
    ),
    Column::int(
        "matched",
        Unit::Count,
        "Collectives matched across ranks: the fewest any rank ran (the k-th of each rank is one)",
    ),
    Column::int(
        "collective_time_ns",
        Unit::Ns,
        "Summed duration of the rank's collective kernels (ns; end - start, each counted)",
    ),
    Column::int(
        "collective_wait_ns",
        Unit::Ns,
        "Summed wait at the matched collectives: last arrival - own arrival (ns)",
    ),
    ARRIVED_LAST,
];

/// The three tables, declared for both areas that compare ranks (`gpuopt nsys ranks`, `torch ranks`).
pub fn tables() -> Vec<Declared> {
    let mut out = Vec::new();
    for (ranks, collectives, stragglers) in [
        (
            "nsys.ranks",
            "nsys.rank_collectives",
            "nsys.rank_stragglers",
        ),
        (
            "torch.ranks",
            "torch.rank_collectives",
            "torch.rank_stragglers",
        ),
    ] {
        out.push(Declared::new(ranks, RANKS_COLUMNS));
        out.push(Declared::new(collectives, COLLECTIVES_COLUMNS));
        out.push(Declared::new(stragglers, STRAGGLERS_COLUMNS));
    }
    out
}

/// One collective kernel of a rank.
#[derive(Debug, Clone)]
pub struct Collective {
    pub name: String,
    pub start: i64,
    pub end: i64,
}

/// One rank: what identifies it, its collective kernels and its step ranges.
#[derive(Debug, Clone, Default)]
pub struct Rank {
    pub rank: i64,
    /// Where the rank came from (file, process, device), for people.
    pub label: String,
    pub collectives: Vec<Collective>,
    pub steps: Vec<Span>,
}

/// The three tables of a comparison.
pub struct Tables {
    pub ranks: Table,
    pub collectives: Table,
    pub stragglers: Table,
}

struct Matched {
    name: String,
    names_agree: bool,
    /// Index into the ranks of the latest arrival.
    latest: usize,
    first_start: i64,
    last_start: i64,
    others_wait: i64,
}

fn ints(v: Vec<i64>) -> ArrayRef {
    Arc::new(Int64Array::from(v))
}

fn opt_ints(v: Vec<Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from(v))
}

fn texts(v: Vec<String>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Compares the ranks (each rank's collectives in any order).
pub fn compare(ranks: &[Rank]) -> Result<Tables> {
    let sorted: Vec<Vec<&Collective>> = ranks
        .iter()
        .map(|r| {
            let mut c: Vec<&Collective> = r.collectives.iter().collect();
            c.sort_by_key(|c| (c.start, c.end));
            c
        })
        .collect();
    let matched_n = sorted.iter().map(Vec::len).min().unwrap_or(0);
    let mut wait = vec![0i64; ranks.len()];
    let mut last_count = vec![0i64; ranks.len()];
    let mut caused = vec![0i64; ranks.len()];
    let mut max_skew = vec![0i64; ranks.len()];
    let mut matched = Vec::with_capacity(matched_n);
    for k in 0..matched_n {
        let at: Vec<&Collective> = sorted.iter().filter_map(|c| c.get(k).copied()).collect();
        let Some(first) = at.first() else { continue };
        let mut latest = 0usize;
        for (i, c) in at.iter().enumerate() {
            if at.get(latest).is_some_and(|l| c.start > l.start) {
                latest = i;
            }
        }
        let last_start = at.get(latest).map_or(first.start, |c| c.start);
        let first_start = at.iter().map(|c| c.start).min().unwrap_or(last_start);
        let mut others_wait = 0i64;
        for (i, c) in at.iter().enumerate() {
            let w = last_start - c.start;
            others_wait += w;
            if let Some(slot) = wait.get_mut(i) {
                *slot += w;
            }
        }
        if let Some(n) = last_count.get_mut(latest) {
            *n += 1;
        }
        if let Some(n) = caused.get_mut(latest) {
            *n += others_wait;
        }
        if let Some(n) = max_skew.get_mut(latest) {
            *n = (*n).max(last_start - first_start);
        }
        matched.push(Matched {
            name: first.name.clone(),
            names_agree: at.iter().all(|c| c.name == first.name),
            latest,
            first_start,
            last_start,
            others_wait,
        });
    }
    let rank_of = |i: usize| ranks.get(i).map_or(-1, |r| r.rank);
    let step_stat = |r: &Rank, f: fn(&[i64]) -> Option<i64>| {
        let d: Vec<i64> = r.steps.iter().map(Span::len).collect();
        f(&d)
    };
    let ranks_table = Table::declared(
        RANKS_COLUMNS,
        vec![
            ("rank", ints(ranks.iter().map(|r| r.rank).collect())),
            (
                "label",
                texts(ranks.iter().map(|r| r.label.clone()).collect()),
            ),
            (
                "steps",
                ints(ranks.iter().map(|r| count(r.steps.len())).collect()),
            ),
            (
                "step_mean_ns",
                opt_ints(
                    ranks
                        .iter()
                        .map(|r| {
                            step_stat(r, |d| {
                                (!d.is_empty()).then(|| d.iter().sum::<i64>() / count(d.len()))
                            })
                        })
                        .collect(),
                ),
            ),
            (
                "step_max_ns",
                opt_ints(
                    ranks
                        .iter()
                        .map(|r| step_stat(r, |d| d.iter().copied().max()))
                        .collect(),
                ),
            ),
            (
                "collectives",
                ints(ranks.iter().map(|r| count(r.collectives.len())).collect()),
            ),
            ("matched", ints(vec![count(matched_n); ranks.len()])),
            (
                "collective_time_ns",
                ints(
                    ranks
                        .iter()
                        .map(|r| r.collectives.iter().map(|c| c.end - c.start).sum())
                        .collect(),
                ),
            ),
            ("collective_wait_ns", ints(wait)),
            ("arrived_last", ints(last_count.clone())),
        ],
    )?;
    let collectives = Table::declared(
        COLLECTIVES_COLUMNS,
        vec![
            ("index", ints((0..matched.len()).map(count).collect())),
            (
                "name",
                texts(matched.iter().map(|m| m.name.clone()).collect()),
            ),
            (
                "names_agree",
                Arc::new(BooleanArray::from(
                    matched.iter().map(|m| m.names_agree).collect::<Vec<bool>>(),
                )) as ArrayRef,
            ),
            (
                "latest_rank",
                ints(matched.iter().map(|m| rank_of(m.latest)).collect()),
            ),
            (
                "first_start_ns",
                ints(matched.iter().map(|m| m.first_start).collect()),
            ),
            (
                "last_start_ns",
                ints(matched.iter().map(|m| m.last_start).collect()),
            ),
            (
                "skew_ns",
                ints(
                    matched
                        .iter()
                        .map(|m| m.last_start - m.first_start)
                        .collect(),
                ),
            ),
            (
                "others_wait_ns",
                ints(matched.iter().map(|m| m.others_wait).collect()),
            ),
        ],
    )?;
    let late: Vec<usize> = (0..ranks.len())
        .filter(|&i| last_count.get(i).is_some_and(|&n| n > 0))
        .collect();
    let pick = |v: &[i64]| {
        late.iter()
            .map(|&i| v.get(i).copied().unwrap_or(0))
            .collect()
    };
    let stragglers = Table::declared(
        STRAGGLERS_COLUMNS,
        vec![
            ("rank", ints(late.iter().map(|&i| rank_of(i)).collect())),
            (
                "label",
                texts(
                    late.iter()
                        .map(|&i| ranks.get(i).map_or_else(String::new, |r| r.label.clone()))
                        .collect(),
                ),
            ),
            ("arrived_last", ints(pick(&last_count))),
            ("others_wait_ns", ints(pick(&caused))),
            ("max_skew_ns", ints(pick(&max_skew))),
        ],
    )?;
    Ok(Tables {
        ranks: ranks_table,
        collectives,
        stragglers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coll(name: &str, start: i64, end: i64) -> Collective {
        Collective {
            name: name.into(),
            start,
            end,
        }
    }

    #[test]
    fn latest_arrival_and_waits_by_hand() {
        // Collective 0: rank 0 at 10, rank 1 at 40 -> rank 1 last, rank 0 waits 30.
        // Collective 1: rank 0 at 100, rank 1 at 90 -> rank 0 last, rank 1 waits 10.
        let ranks = vec![
            Rank {
                rank: 0,
                collectives: vec![coll("a", 100, 150), coll("a", 10, 60)],
                steps: vec![Span::new(0, 200)],
                ..Rank::default()
            },
            Rank {
                rank: 1,
                collectives: vec![coll("a", 40, 60), coll("a", 90, 150), coll("b", 300, 310)],
                ..Rank::default()
            },
        ];
        let t = compare(&ranks).unwrap();
        assert_eq!(ints(&t.collectives, "latest_rank"), [1, 0]);
        assert_eq!(ints(&t.collectives, "skew_ns"), [30, 10]);
        assert_eq!(ints(&t.collectives, "others_wait_ns"), [30, 10]);
        assert_eq!(ints(&t.ranks, "collective_wait_ns"), [30, 10]);
        assert_eq!(ints(&t.ranks, "matched"), [2, 2]);
        assert_eq!(ints(&t.ranks, "collectives"), [2, 3]);
        assert_eq!(ints(&t.ranks, "collective_time_ns"), [100, 90]);
        assert_eq!(ints(&t.ranks, "step_mean_ns"), [200, 0]); // rank 1 has none (null reads 0)
        assert_eq!(ints(&t.stragglers, "rank"), [0, 1]);
        assert_eq!(ints(&t.stragglers, "others_wait_ns"), [10, 30]);
    }

    fn ints(t: &Table, col: &str) -> Vec<i64> {
        let a = t.batches[0].column_by_name(col).unwrap();
        let a = a.as_any().downcast_ref::<Int64Array>().unwrap();
        (0..a.len()).map(|i| a.value(i)).collect()
    }
}
