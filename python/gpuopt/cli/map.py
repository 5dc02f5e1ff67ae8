"""``gpuopt map account``: execution-map arithmetic over an event file (spec §8)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._registry import Group
from gpuopt.cli._render import section, table

if TYPE_CHECKING:
    from gpuopt.models.map import MapAccountData


@click.group("map", cls=Group)
def map_group() -> None:
    """Execution maps: where a window's time goes, per group of events."""


def _render(d: MapAccountData) -> str:
    t = d.totals
    head = section(
        "Execution map",
        [
            ("record", None if d.record is None else f"{d.record.id} ({'new' if d.created else 'existing'})"),
            ("source", f"{d.source.file} ({d.source.format}, {d.source.time_unit}) sha256 {d.source.sha256}"),
            (
                "timelines",
                ", ".join(d.timelines) if len(d.timelines) <= 8 else f"{len(d.timelines)} timelines",
            ),
            (
                "window",
                f"[{d.window.start_ns}, {d.window.end_ns}) ns{'' if d.window.explicit else ' (hull)'}",
            ),
            ("window_ns", t.window_ns),
            ("union_ns", t.union_ns),
            ("idle_ns", t.idle_ns),
            ("overlap_excess_ns", t.overlap_excess_ns),
            ("serial_ns", t.serial_ns),
            ("max_concurrency", t.max_concurrency),
            ("events", t.events),
            ("zero_length_events", t.zero_length_events),
        ],
    )
    rows = [
        [
            *(g.key[k] for k in d.group_by),
            g.count,
            g.serial_ns,
            g.union_ns,
            g.exclusive_ns,
            None if g.share_of_window is None else f"{g.share_of_window:.6f}",
        ]
        for g in d.groups
    ]
    headers = [*d.group_by, "count", "serial_ns", "union_ns", "exclusive_ns", "share_of_window"]
    return head + "\n\n" + table(headers, rows)


@map_group.command("account")
@click.argument(
    "events",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Events {timeline, start_ns, end_ns, category, name} as JSON Lines, Parquet or Arrow IPC.",
)
@click.option(
    "--timeline",
    "timelines",
    multiple=True,
    help="Select timelines by glob (repeatable; default: all timelines in the file).",
)
@click.option(
    "--group-by",
    default="category,name",
    show_default=True,
    help="Comma-separated group keys among timeline, category, name.",
)
@click.option("--window", help="START:END in integer ns (default: the hull of the selected events).")
@click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    help="Write the map record maps/map-<64hex>.json into this artifact root (needs --bind-variant, --case).",
)
@click.option("--bind-variant", help="The variant the events were recorded on (a tree digest of the root).")
@click.option("--case", help="The Target case the events were recorded on.")
@command("gpuopt.map.account/v1")
def account(
    events: Path,
    timelines: tuple[str, ...],
    group_by: str,
    window: str | None,
    root: Path | None,
    bind_variant: str | None,
    case: str | None,
) -> Outcome:
    """Account a window's time over events {timeline, start_ns, end_ns, category, name}.

    Events are half-open intervals [start, end) from JSON Lines, Parquet or Arrow IPC (start_us/end_us
    microseconds are rounded to the nearest ns). Totals: union, idle, overlap excess, serial time and
    peak concurrency; per group: count, serial, union (the removable-time ceiling), exclusive time and
    share of the window. With --root the map becomes a create-once record bound to the root's Target.

    \b
    Examples:
      gpuopt map account events.parquet --timeline 'gpu0/*'
      gpuopt map account events.jsonl --window 1000000:2000000 --json
      gpuopt map account events.jsonl --root ./root --bind-variant <digest> --case small
    """
    from gpuopt import map as lib
    from gpuopt.provenance import file_identity

    out = lib.account(
        events,
        timelines=list(timelines),
        group_by=group_by,
        window=window,
        root=root,
        bind_variant=bind_variant,
        case=case,
    )
    return Outcome(data=out.data, render=lambda: _render(out.data), inputs=[file_identity(events)])
