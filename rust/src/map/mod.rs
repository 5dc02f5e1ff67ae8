//! Execution-map arithmetic (spec §8): where the time of a window goes, over a selection of timelines.
//!
//! Events are half-open intervals `[start, end)` in integer nanoseconds, each in one group (the caller
//! numbers the distinct group keys `0..groups`). Events are clipped to the window; a positive-length
//! event counts when some of it lies inside the window, a zero-length event at `t` when
//! `window.start <= t <= window.end` (it is counted in `zero_length_events` and occupies no time). One
//! boundary sweep ([`crate::intervals::labelled_sweep`]) gives the totals and, per group, the union (the
//! removable-time ceiling) and the exclusive time. Identities that hold by construction and are tested:
//! `serial = union + overlap_excess`, `exclusive <= union <= serial` per group, group union <= union.

use crate::error::{Error, Result};
use crate::intervals::{labelled_sweep, Span, SweepError};
use crate::table::Table;
use arrow_array::{ArrayRef, Float64Array, Int64Array, UInt32Array};
use serde::Serialize;
use std::sync::Arc;

/// The events of one selection, as parallel columns.
#[derive(Debug, Clone, Copy)]
pub struct Events<'a> {
    pub start_ns: &'a [i64],
    pub end_ns: &'a [i64],
    /// Group index of each event, `< groups`.
    pub group: &'a [u32],
    pub groups: usize,
}

/// The totals over the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub window_start_ns: i64,
    pub window_end_ns: i64,
    pub window_ns: i64,
    /// Events with some time (or, for zero-length events, their instant) inside the window.
    pub events: u64,
    pub union_ns: i64,
    pub idle_ns: i64,
    pub overlap_excess_ns: i64,
    pub max_concurrency: u64,
    pub serial_ns: i64,
    pub zero_length_events: u64,
}

/// One group's accounting (`share_of_window` = union / window, `None` for an empty window).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub count: u64,
    pub zero_length: u64,
    pub serial_ns: i64,
    pub union_ns: i64,
    pub exclusive_ns: i64,
    pub share_of_window: Option<f64>,
}

/// The whole account: totals and one row per group index.
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    pub totals: Totals,
    pub groups: Vec<Group>,
}

fn row_error(code: &'static str, message: String, row: usize, field: &str) -> Error {
    Error::input(code, message).with_path(format!("events[{row}].{field}"))
}

/// Checks the columns: equal lengths, times >= 0, end >= start, group indices in range.
pub fn validate(events: &Events<'_>) -> Result<()> {
    let n = events.start_ns.len();
    if events.end_ns.len() != n || events.group.len() != n {
        return Err(Error::internal(
            "map_columns_unequal",
            "start, end and group columns differ in length",
        ));
    }
    let rows = events.start_ns.iter().zip(events.end_ns).zip(events.group);
    for (row, ((&start, &end), &group)) in rows.enumerate() {
        if start < 0 {
            return Err(row_error(
                "event_time_negative",
                format!("start_ns {start} < 0"),
                row,
                "start_ns",
            )
            .with_expected(">= 0")
            .with_observed(start.to_string()));
        }
        if end < start {
            return Err(row_error(
                "event_time_reversed",
                format!("end_ns {end} < start_ns {start}"),
                row,
                "end_ns",
            )
            .with_expected(format!(">= {start}"))
            .with_observed(end.to_string()));
        }
        if usize::try_from(group).map_or(true, |g| g >= events.groups) {
            return Err(Error::internal(
                "map_group_out_of_range",
                format!("group index {group} of row {row} >= {}", events.groups),
            ));
        }
    }
    Ok(())
}

/// The hull of the events, `[min start, max end]`; `None` without events.
pub fn hull(events: &Events<'_>) -> Option<Span> {
    let start = events.start_ns.iter().min()?;
    let end = events.end_ns.iter().max()?;
    Some(Span::new(*start, *end))
}

/// Accounts the events over `window` (the events' hull when `None`).
pub fn account(events: &Events<'_>, window: Option<Span>) -> Result<Account> {
    validate(events)?;
    let window = match window {
        Some(w) if w.start < 0 || w.end <= w.start => {
            return Err(Error::input(
                "window_invalid",
                format!("window [{}, {}) is empty or negative", w.start, w.end),
            )
            .with_path("window")
            .with_expected("0 <= START < END"));
        }
        Some(w) => w,
        None => hull(events).ok_or_else(|| {
            Error::input(
                "events_none_selected",
                "no events are selected and no window is given",
            )
            .with_path("events")
        })?,
    };
    let mut groups: Vec<Group> = (0..events.groups)
        .map(|_| Group {
            count: 0,
            zero_length: 0,
            serial_ns: 0,
            union_ns: 0,
            exclusive_ns: 0,
            share_of_window: None,
        })
        .collect();
    let mut clipped: Vec<(Span, u32)> = Vec::with_capacity(events.start_ns.len());
    let (mut counted, mut zero_length) = (0u64, 0u64);
    let rows = events.start_ns.iter().zip(events.end_ns).zip(events.group);
    for ((&start, &end), &group) in rows {
        let slot = groups.get_mut(group as usize);
        let Some(slot) = slot else { continue };
        if start == end {
            if window.start <= start && start <= window.end {
                counted += 1;
                zero_length += 1;
                slot.count += 1;
                slot.zero_length += 1;
            }
            continue;
        }
        if let Some(span) = Span::new(start, end).clip(window) {
            counted += 1;
            slot.count += 1;
            slot.serial_ns = slot.serial_ns.saturating_add(span.len());
            clipped.push((span, group));
        }
    }
    let sweep = labelled_sweep(&clipped, events.groups).map_err(|e| match e {
        SweepError::Overflow => Error::input(
            "map_overflow",
            "a time sum does not fit in 64-bit nanoseconds",
        ),
        SweepError::LabelOutOfRange(i) => Error::internal(
            "map_group_out_of_range",
            format!("clipped event {i} has an unknown group"),
        ),
    })?;
    let window_ns = window.len();
    let share = |union: i64| (window_ns > 0).then(|| union as f64 / window_ns as f64);
    for (g, (union, exclusive)) in groups
        .iter_mut()
        .zip(sweep.label_union.iter().zip(&sweep.label_exclusive))
    {
        g.union_ns = *union;
        g.exclusive_ns = *exclusive;
        g.share_of_window = share(*union);
    }
    Ok(Account {
        totals: Totals {
            window_start_ns: window.start,
            window_end_ns: window.end,
            window_ns,
            events: counted,
            union_ns: sweep.union,
            idle_ns: window_ns - sweep.union,
            overlap_excess_ns: sweep.overlap_excess,
            max_concurrency: sweep.max_concurrency,
            serial_ns: sweep.serial,
            zero_length_events: zero_length,
        },
        groups,
    })
}

/// The per-group table: `group` (index), `count`, `zero_length`, `serial_ns`, `union_ns`,
/// `exclusive_ns`, `share_of_window`.
pub fn groups_table(account: &Account) -> Result<Table> {
    let g = &account.groups;
    let index: Vec<u32> = (0..g.len())
        .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
        .collect();
    let int = |f: fn(&Group) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(g.iter().map(f)))
    };
    Table::from_columns(vec![
        ("group", Arc::new(UInt32Array::from(index)) as ArrayRef),
        ("count", int(|x| i64::try_from(x.count).unwrap_or(i64::MAX))),
        (
            "zero_length",
            int(|x| i64::try_from(x.zero_length).unwrap_or(i64::MAX)),
        ),
        ("serial_ns", int(|x| x.serial_ns)),
        ("union_ns", int(|x| x.union_ns)),
        ("exclusive_ns", int(|x| x.exclusive_ns)),
        (
            "share_of_window",
            Arc::new(Float64Array::from(
                g.iter().map(|x| x.share_of_window).collect::<Vec<_>>(),
            )) as ArrayRef,
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intervals::{concurrency, total, union};
    use proptest::prelude::*;

    fn run(ev: &[(i64, i64, u32)], groups: usize, window: Option<Span>) -> Account {
        let s: Vec<i64> = ev.iter().map(|e| e.0).collect();
        let e: Vec<i64> = ev.iter().map(|e| e.1).collect();
        let g: Vec<u32> = ev.iter().map(|e| e.2).collect();
        let events = Events {
            start_ns: &s,
            end_ns: &e,
            group: &g,
            groups,
        };
        account(&events, window).unwrap()
    }

    #[test]
    fn pinned_overlap_example() {
        let a = run(&[(0, 10, 0), (5, 15, 1), (15, 20, 0)], 2, None);
        let t = &a.totals;
        assert_eq!(
            (
                t.window_ns,
                t.union_ns,
                t.overlap_excess_ns,
                t.max_concurrency
            ),
            (20, 20, 5, 2)
        );
        assert_eq!((t.serial_ns, t.idle_ns, t.events), (25, 0, 3));
        // group 0: [0,10) [15,20) → union 15, exclusive [0,5) + [15,20) = 10; group 1: [5,15) → exclusive [10,15)
        assert_eq!(
            (
                a.groups[0].union_ns,
                a.groups[0].exclusive_ns,
                a.groups[0].serial_ns
            ),
            (15, 10, 15)
        );
        assert_eq!(
            (
                a.groups[1].union_ns,
                a.groups[1].exclusive_ns,
                a.groups[1].serial_ns
            ),
            (10, 5, 10)
        );
        assert_eq!(a.groups[0].share_of_window, Some(0.75));
    }

    #[test]
    fn pinned_back_to_back_example() {
        let a = run(&[(0, 10, 0), (10, 20, 0)], 1, None);
        assert_eq!(a.totals.max_concurrency, 1);
        assert_eq!(a.totals.overlap_excess_ns, 0);
        assert_eq!(a.totals.union_ns, 20);
        // one group active throughout: all of it is exclusive, and the union counts once
        assert_eq!((a.groups[0].union_ns, a.groups[0].exclusive_ns), (20, 20));
    }

    #[test]
    fn window_clips_events_and_counts_idle() {
        let ev = [(0, 10, 0), (5, 15, 1), (15, 20, 0), (30, 40, 1)];
        let a = run(&ev, 2, Some(Span::new(8, 32)));
        let t = &a.totals;
        // clipped: [8,10) [8,15) [15,20) [30,32)
        assert_eq!((t.window_ns, t.union_ns, t.idle_ns), (24, 14, 10));
        assert_eq!((t.serial_ns, t.overlap_excess_ns, t.events), (16, 2, 4));
        assert_eq!((a.groups[0].count, a.groups[0].serial_ns), (2, 7));
        assert_eq!((a.groups[1].union_ns, a.groups[1].exclusive_ns), (9, 7));
        // an event ending where the window starts is outside it
        let b = run(&ev, 2, Some(Span::new(20, 30)));
        assert_eq!(
            (b.totals.events, b.totals.union_ns, b.totals.idle_ns),
            (0, 0, 10)
        );
        assert_eq!(b.groups[0].share_of_window, Some(0.0));
    }

    #[test]
    fn zero_length_events_are_counted_but_occupy_no_time() {
        let a = run(&[(0, 10, 0), (4, 4, 1), (10, 10, 1), (11, 11, 1)], 2, None);
        // the hull [0, 11] holds all three instants, including the one at its end
        assert_eq!((a.totals.zero_length_events, a.totals.events), (3, 4));
        assert_eq!((a.totals.union_ns, a.totals.max_concurrency), (10, 1));
        assert_eq!((a.groups[1].count, a.groups[1].zero_length), (3, 3));
        assert_eq!((a.groups[1].union_ns, a.groups[1].serial_ns), (0, 0));
        assert_eq!(a.groups[0].exclusive_ns, 10);
        let only = run(&[(7, 7, 0)], 1, None);
        assert_eq!(
            (only.totals.window_ns, only.totals.zero_length_events),
            (0, 1)
        );
        assert_eq!(only.groups[0].share_of_window, None);
    }

    #[test]
    fn bad_rows_have_codes_and_paths() {
        let events = |s: &'static [i64], e: &'static [i64]| Events {
            start_ns: s,
            end_ns: e,
            group: &[0, 0],
            groups: 1,
        };
        let err = account(&events(&[0, -1], &[1, 2]), None).unwrap_err();
        assert_eq!(
            (err.code, err.path.as_deref()),
            ("event_time_negative", Some("events[1].start_ns"))
        );
        let err = account(&events(&[0, 5], &[1, 4]), None).unwrap_err();
        assert_eq!(
            (err.code, err.path.as_deref()),
            ("event_time_reversed", Some("events[1].end_ns"))
        );
        let err = account(&events(&[0, 1], &[1, 2]), Some(Span::new(5, 5))).unwrap_err();
        assert_eq!(err.code, "window_invalid");
        let none = Events {
            start_ns: &[],
            end_ns: &[],
            group: &[],
            groups: 0,
        };
        assert_eq!(
            account(&none, None).unwrap_err().code,
            "events_none_selected"
        );
        let empty = account(&none, Some(Span::new(0, 10))).unwrap();
        assert_eq!((empty.totals.idle_ns, empty.totals.union_ns), (10, 0));
    }

    #[test]
    fn table_has_one_row_per_group() {
        let a = run(&[(0, 10, 0), (5, 15, 1), (15, 20, 0)], 3, None);
        let t = groups_table(&a).unwrap();
        assert_eq!(t.num_rows(), 3);
        assert_eq!(
            t.column_names(),
            [
                "group",
                "count",
                "zero_length",
                "serial_ns",
                "union_ns",
                "exclusive_ns",
                "share_of_window"
            ]
        );
    }

    fn brute(ev: &[(i64, i64, u32)], groups: usize) -> (i64, i64, u64, Vec<i64>, Vec<i64>) {
        // per-nanosecond counts: union, overlap excess, max concurrency, per-group union and exclusive
        let end = ev.iter().map(|e| e.1).max().unwrap_or(0);
        let (mut u, mut over, mut max) = (0, 0, 0u64);
        let (mut gu, mut gx) = (vec![0; groups], vec![0; groups]);
        for t in 0..end {
            let live: Vec<u32> = ev
                .iter()
                .filter(|e| e.0 <= t && t < e.1)
                .map(|e| e.2)
                .collect();
            let n = live.len() as i64;
            if n > 0 {
                u += 1;
                over += n - 1;
                max = max.max(n as u64);
            }
            let mut seen: Vec<u32> = live.clone();
            seen.sort_unstable();
            seen.dedup();
            for g in &seen {
                gu[*g as usize] += 1;
            }
            if let [only] = seen[..] {
                gx[only as usize] += 1;
            }
        }
        (u, over, max, gu, gx)
    }

    proptest! {
        #[test]
        fn identities_hold(ev in prop::collection::vec((0i64..60, 0i64..15, 0u32..4), 0..24)) {
            let ev: Vec<(i64, i64, u32)> = ev.into_iter().map(|(s, d, g)| (s, s + d, g)).collect();
            let groups = 4;
            let window = Some(Span::new(0, 80));
            let a = run(&ev, groups, window);
            let t = &a.totals;
            prop_assert_eq!(t.serial_ns, t.union_ns + t.overlap_excess_ns);
            prop_assert_eq!(t.idle_ns, t.window_ns - t.union_ns);
            prop_assert_eq!(t.serial_ns, a.groups.iter().map(|g| g.serial_ns).sum::<i64>());
            for g in &a.groups {
                prop_assert!(g.exclusive_ns <= g.union_ns);
                prop_assert!(g.union_ns <= g.serial_ns);
                prop_assert!(g.union_ns <= t.union_ns);
            }
            // the exclusive times and the shared time partition the union
            prop_assert!(a.groups.iter().map(|g| g.exclusive_ns).sum::<i64>() <= t.union_ns);
            let (u, over, max, gu, gx) = brute(&ev, groups);
            prop_assert_eq!((t.union_ns, t.overlap_excess_ns, t.max_concurrency), (u, over, max));
            prop_assert_eq!(a.groups.iter().map(|g| g.union_ns).collect::<Vec<_>>(), gu);
            prop_assert_eq!(a.groups.iter().map(|g| g.exclusive_ns).collect::<Vec<_>>(), gx);
            // the existing interval engine agrees on busy time, weighted time and peak
            let spans: Vec<Span> = ev.iter().map(|e| Span::new(e.0, e.1)).collect();
            let c = concurrency(&spans);
            prop_assert_eq!(total(&union(spans)), t.union_ns);
            prop_assert_eq!((c.busy, c.weighted, u64::from(c.max)), (t.union_ns, t.serial_ns, t.max_concurrency));
        }

        #[test]
        fn clipping_to_a_window_matches_clipping_the_input(
            ev in prop::collection::vec((0i64..60, 1i64..15, 0u32..3), 1..16),
            ws in 0i64..40, wl in 1i64..40,
        ) {
            let ev: Vec<(i64, i64, u32)> = ev.into_iter().map(|(s, d, g)| (s, s + d, g)).collect();
            let w = Span::new(ws, ws + wl);
            let a = run(&ev, 3, Some(w));
            let pre: Vec<(i64, i64, u32)> = ev
                .iter()
                .filter_map(|e| Span::new(e.0, e.1).clip(w).map(|s| (s.start, s.end, e.2)))
                .collect();
            let b = run(&pre, 3, Some(w));
            prop_assert_eq!(a, b);
        }
    }
}
