"""``gpuopt store verify`` and ``gpuopt store reindex``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import ROOT_ARGUMENT
from gpuopt.cli._registry import Group
from gpuopt.cli._render import section, table
from gpuopt.errors import InputError

if TYPE_CHECKING:
    from gpuopt.models.evaluation.store import StoreReindex, StoreVerification


@click.group(cls=Group)
def store() -> None:
    """Check and rebuild an artifact root's store and ledger."""


def _render_verify(v: StoreVerification) -> str:
    head = section(
        "Store",
        [
            ("root", v.root),
            ("ok", v.ok),
            ("defects", len(v.defects)),
            ("records", v.records),
            ("ledger lines", v.ledger_lines),
            ("ledger torn tail", v.ledger_torn_tail),
            ("manifests", v.manifests),
            ("blobs", v.blobs if v.deep else f"{v.blobs} (sizes checked; --deep re-hashes them)"),
            ("event logs", v.events_files),
            ("unreferenced blobs", len(v.blobs_unreferenced)),
            ("temp files", len(v.temp_files)),
        ],
    )
    out = [head]
    if v.defects:
        rows = [[d.code, d.path, d.expected, d.observed, d.record] for d in v.defects]
        out.append(table(["defect", "path", "expected", "observed", "record"], rows))
    if v.repair is not None:
        verb = "would remove" if v.repair.dry_run else "removed"
        rows = [[a.reason, a.path] for a in v.repair.removed]
        out.append(
            f"Repair {verb} {len(rows)} file(s)" + (":\n" + table(["reason", "path"], rows) if rows else "")
        )
        if v.repair.kept_unreferenced_blobs:
            out.append(
                f"Kept {len(v.repair.kept_unreferenced_blobs)} unreferenced blob(s): the store has defects, "
                "and the missing or damaged evidence may be what references them"
            )
    return "\n\n".join(out)


def corrupt(v: StoreVerification) -> InputError:
    """A failed verify is an error (exit 2) that still carries the full report as its data."""
    counts = Counter(d.code for d in v.defects)
    first = v.defects[0]
    return InputError(
        "store_corrupt",
        f"{v.root} fails verification: "
        + ", ".join(f"{n} {code}" for code, n in sorted(counts.items()))
        + f"; first: {first.code} at {first.path}",
        path=first.path,
        expected=first.expected,
        observed=first.observed,
    )


@store.command("verify")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@click.option("--deep", is_flag=True, help="Also re-hash every blob, result table and record byte.")
@click.option(
    "--repair",
    is_flag=True,
    help="Remove temp files, and blobs no manifest lists once nothing else is wrong; never anything a record "
    "references. Needs the root alone (else store_busy, exit 2).",
)
@click.option("--dry-run", is_flag=True, help="With --repair: list what it would remove, change nothing.")
@command("gpuopt.store-verify/v2")
def verify(root: Path, deep: bool, repair: bool, dry_run: bool) -> Outcome:
    """Prove an artifact root holds what its ledger says; list every defect with its code, path and what
    was expected. Exits 2 (``store_corrupt``, the report still in ``data``) when anything is wrong, and 2
    (``not_a_store``) for a folder that is not a store (one holds target.json and ledger/records.jsonl).

    \b
    Checked, each with its defect codes:
      ledger      numbered, chained lines, one per publication: ledger_missing,
                  ledger_line_invalid, ledger_line_duplicated, ledger_seq_invalid,
                  ledger_chain_broken, ledger_mismatch (kind, id or keys edited)
      records     every record matches its newest ledger line and validates:
                  record_missing, record_changed, record_invalid, record_unlisted,
                  table_missing, table_changed (--deep)
      objects     every tree a record references, every manifest and the blobs
                  it lists: object_missing, manifest_corrupt, blob_missing,
                  blob_size_mismatch, blob_corrupt (--deep)
      events      each ledgered invocation's events.jsonl: events_missing,
                  event_line_invalid, event_line_duplicated, event_seq_invalid,
                  event_chain_broken, event_result_mismatch, events_unfinished
                  (a published result's log must end with supervisor_finished)
      env key     keys/env.key of a gpuopt.target/v2 Target: env_key_missing,
                  env_key_invalid, env_key_mismatch

    \b
    --repair removes temp files (.tmp-*, objects/tmp/*) and, only when no defect
    is found, blobs no manifest lists. It never removes a record, a manifest or
    a blob a manifest lists. --repair --dry-run says what it would remove.

    \b
    Examples:
      gpuopt store verify ./root
      gpuopt store verify ./root --deep --json
      gpuopt store verify ./root --repair --dry-run
      gpuopt store verify ./root --repair
    """
    from gpuopt.evaluation.store import Store
    from gpuopt.evaluation.verify import verify as lib

    if dry_run and not repair:
        raise click.UsageError("--dry-run goes with --repair (verify alone never changes anything)")
    out = lib(Store.open(root), deep=deep, repair=repair, dry_run=dry_run)
    return Outcome(data=out, render=lambda: _render_verify(out), failure=None if out.ok else corrupt(out))


@store.command("reindex")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False), help=ROOT_ARGUMENT)
@command("gpuopt.store-reindex/v1")
def reindex(root: Path) -> Outcome:
    """Rebuild ledger/records.jsonl from the record files (one line per record, in publication order,
    chained as appends chain them). Refuses a folder that is not a store (not_a_store, exit 2).

    \b
    Examples:
      gpuopt store reindex ./root
    """
    from gpuopt.evaluation.store import Store
    from gpuopt.evaluation.store import reindex as lib

    out: StoreReindex = lib(Store.open(root))
    return Outcome(
        data=out,
        render=lambda: section(
            "Ledger rebuilt", [("lines", out.lines), ("sha256", out.sha256), ("identical", out.identical)]
        ),
    )
