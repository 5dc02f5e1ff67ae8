"""``gpuopt store verify`` and ``gpuopt store reindex``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._render import section, table
from gpuopt.errors import InputError

if TYPE_CHECKING:
    from gpuopt.models.evaluation.store import StoreReindex, StoreVerification


@click.group()
def store() -> None:
    """Check and rebuild an artifact root's store and ledger."""


def _render_verify(v: StoreVerification) -> str:
    o = v.objects
    head = section(
        "Store",
        [
            ("root", v.root),
            ("ok", v.ok),
            ("blobs", o.blobs),
            ("manifests", o.manifests),
            ("corrupt blobs", len(o.blobs_corrupt) if v.deep else "not checked (use --deep)"),
            ("corrupt manifests", len(o.manifests_corrupt)),
            ("missing blobs", len(o.blobs_missing)),
            ("unreferenced blobs", len(o.blobs_unreferenced)),
            ("temp files", len(o.temp_files)),
            ("removed", len(o.removed)),
            ("ledger lines", v.ledger_lines),
            ("ledger torn tail", v.ledger_torn_tail),
        ],
    )
    bad = [[c.kind, c.id, c.path, c.status, c.detail] for c in v.records if c.status != "ok"]
    return head + ("\n\n" + table(["kind", "id", "path", "status", "detail"], bad) if bad else "")


def corrupt(v: StoreVerification) -> InputError:
    """A failed verify is an error (exit 2) that still carries the full report as its data."""
    o = v.objects
    bad = [c for c in v.records if c.status != "ok"]
    counts = [
        (len(o.blobs_corrupt), "corrupt blobs"),
        (len(o.manifests_corrupt), "corrupt manifests"),
        (len(o.blobs_missing), "missing blobs"),
        (len(bad), "records or ledger lines that do not match"),
    ]
    first = bad[0].path if bad else None
    return InputError(
        "store_corrupt",
        f"{v.root} fails verification: " + ", ".join(f"{n} {what}" for n, what in counts if n),
        path=first,
    )


@store.command("verify")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False))
@click.option("--deep", is_flag=True, help="Re-hash every blob and check every record's bytes.")
@click.option(
    "--repair",
    is_flag=True,
    help="Remove temp files and unreferenced blobs; needs the root alone (else store_busy, exit 2).",
)
@command("gpuopt.store-verify/v1")
def verify(root: Path, deep: bool, repair: bool) -> Outcome:
    """Check blobs, manifests and records against the ledger; list unreferenced blobs and temp files.
    Exits 2 (``store_corrupt``, the report still in ``data``) when anything fails to verify.

    \b
    Examples:
      gpuopt store verify ./root --deep
      gpuopt store verify ./root --repair
    """
    from gpuopt.evaluation.store import Store
    from gpuopt.evaluation.store import verify as lib

    out = lib(Store.open(root), deep=deep, repair=repair)
    return Outcome(data=out, render=lambda: _render_verify(out), failure=None if out.ok else corrupt(out))


@store.command("reindex")
@click.argument("root", type=click.Path(path_type=Path, file_okay=False))
@command("gpuopt.store-reindex/v1")
def reindex(root: Path) -> Outcome:
    """Rebuild ledger/records.jsonl from the record files (one line per record, in publication order).

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
