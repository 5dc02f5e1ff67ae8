"""Where each top-level command lives, so ``gpuopt --help`` imports no command module at all.

A command's module is imported when that command runs (or its own ``--help`` is asked for); the
root's listing prints the one-line help kept here. ``tests/test_cli_startup.py`` checks that every
line equals the command's own short help, so this table cannot drift from the docstrings.

The commands the operations registry generates (``gpuopt baseline``, ..., ``gpuopt capture``) are not in
:data:`COMMANDS`: :func:`commands` adds them from :mod:`gpuopt.evaluation.registry`, whose entries hold
their help (the registry imports nothing heavy).
"""

from __future__ import annotations

import difflib
import importlib
from typing import NamedTuple

import click

from gpuopt.evaluation import registry


class Entry(NamedTuple):
    module: str
    attribute: str
    short_help: str


COMMANDS: dict[str, Entry] = {
    "doctor": Entry(
        "doctor",
        "doctor",
        "Report this machine's identity: OS, CPU, Python, gpuopt, NVIDIA driver and GPUs, CUDA tools, "
        "packages.",
    ),
    "schema": Entry(
        "schema", "schema", "Print the JSON Schema of a document gpuopt emits, or list their names."
    ),
    "nsys": Entry(
        "nsys_analyses",
        "nsys",
        "Nsight Systems: facts from an nsys SQLite export (`nsys export --type sqlite`).",
    ),
    "torch": Entry(
        "torch_analyses",
        "torch",
        "PyTorch profiler (Kineto) Chrome traces: kernels, ops, GPU timeline, record_function steps.",
    ),
    "stats": Entry(
        "stats", "stats", "Paired statistics: bootstrap CIs of effects and verdicts against a minimum effect."
    ),
    "sass": Entry(
        "sass", "sass", "Facts from SASS: cuobjdump -sass / nvdisasm listings, or binaries run through them."
    ),
    "compiler": Entry(
        "compiler",
        "compiler",
        "Facts from compiler reports (ptxas -v, cuobjdump -res-usage) and caches (Triton, TorchInductor).",
    ),
    "ncu": Entry(
        "ncu_analyses",
        "ncu",
        "Nsight Compute: per-launch facts from .ncu-rep files and ncu --csv exports, and collection.",
    ),
    "readiness": Entry(
        "readiness",
        "readiness",
        "Freeze a Target (readiness check) and re-run its smoke as a supervised invocation.",
    ),
    "driver": Entry("driver", "driver", "The workload driver protocol (gpuopt.driver/v1)."),
    "status": Entry(
        "invocation",
        "status",
        "Show an invocation's state (starting, running, completed, lost), or every pending one of a root.",
    ),
    "cancel": Entry(
        "invocation",
        "cancel",
        "Cancel an invocation: its supervisor terminates the running call; an orphaned call is killed here.",
    ),
    "store": Entry("store", "store", "Check and rebuild an artifact root's store and ledger."),
    "experiment": Entry(
        "evaluate",
        "experiment",
        "Freeze a candidate against the current Champion (or the original) with its comparison contract, "
        "screen design, opportunity claim and premises.",
    ),
    "champion": Entry(
        "champion",
        "champion",
        "The Champion: the variant currently selected (the original until an explicit select).",
    ),
    "ls": Entry(
        "views",
        "ls",
        "List records from the ledger (plus the live state of unfinished invocations): id, operation, "
        "Experiment, mechanism, verdict, primary estimate and CI, valid/invalid pairs, GPU-seconds, time.",
    ),
    "show": Entry(
        "views",
        "show",
        "Show one record (Target, Experiment, invocation, Selection) verified against its ledger hash, "
        "with the derived status of an invocation; or one table of an invocation (--part "
        "pairs|samples|calls|events).",
    ),
    "report": Entry(
        "views",
        "report",
        "A report of a root (invocations, Experiments by mechanism, Champion history, totals) or of one "
        "invocation (plan, statistics with CIs, per-case effects, pairs, resolution, contamination, "
        "GPU-seconds).",
    ),
    "handoff": Entry(
        "views",
        "handoff",
        "Draft the handoff notes from the records: Target, Champion (or original) with its justifying "
        "result and final-audit status, Experiments by mechanism, scoped local results, noise, "
        "contamination, unfinished invocations, GPU-seconds.",
    ),
    "example": Entry(
        "example",
        "example",
        "The bundled example: a small real workload with an original, a faster, a wrong and a no-effect "
        "candidate, and its driver.",
    ),
    "idle-check": Entry(
        "idle",
        "idle_check",
        "Sample GPUs for a window: busy (a foreign compute process, or utilization above the threshold in "
        "more than 10 % of ticks), idle, or unknown (the process list was unreadable and nothing proved "
        "busy).",
    ),
    "map": Entry("map", "map_group", "Execution maps: where a window's time goes, per group of events."),
    "profile": Entry(
        "profile",
        "profile",
        "Profiles: what is in a capture (overview); compare baseline and candidate captures key by key.",
    ),
    "knowledge": Entry(
        "knowledge",
        "knowledge",
        "Advisory knowledge cards: what a mechanism is, how to tell it apart, where NVIDIA, PyTorch, Triton "
        "or NCCL documentation says so.",
    ),
    "audit": Entry("audit", "audit", "Audits of identity records."),
    "gate": Entry(
        "gate",
        "gate",
        "A regression gate for CI: saved baselines, checks with exit codes, reports where CI shows them.",
    ),
    "skill": Entry(
        "agent",
        "skill",
        "The agent skill shipped with this package: SKILL.md and the command reference it links.",
    ),
    "mcp": Entry(
        "agent",
        "mcp",
        "Serve gpuopt's commands as MCP tools over stdio (needs the `mcp` extra: pip install 'gpuopt[mcp]').",
    ),
}


GENERATED = "evaluate"
"""The module that builds the registry's generated commands (``cli/evaluate.py``, its ``generated``)."""


def commands() -> dict[str, Entry]:
    """Every top-level command: :data:`COMMANDS` and the registry's generated verbs."""
    out = dict(COMMANDS)
    for verb in registry.verbs():
        if verb.generated and len(verb.command) == 1:
            short = click.Command(verb.command[0], help=verb.help).get_short_help_str(limit=10_000)
            out[verb.command[0]] = Entry(GENERATED, verb.name, short)
    return out


def load(name: str) -> click.Command:
    """Imports the module of a top-level command and returns the command."""
    verb = registry.by_command((name,))
    if verb is not None and verb.generated:
        found = importlib.import_module(f"gpuopt.cli.{GENERATED}").generated(verb)
        where = f"the generated command of {verb.name}"
    else:
        entry = COMMANDS[name]
        found = getattr(importlib.import_module(f"gpuopt.cli.{entry.module}"), entry.attribute)
        where = f"gpuopt.cli.{entry.module}.{entry.attribute}"
    if not isinstance(found, click.Command):
        raise TypeError(f"{where} is not a click command")
    return found


class Group(click.Group):
    """A click group whose unknown command is a usage error (exit 2) naming the closest commands."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if (
            name
            and not name.startswith("-")
            and not ctx.resilient_parsing
            and self.get_command(ctx, name) is None
        ):
            known = self.list_commands(ctx)
            close = difflib.get_close_matches(name, known, n=3)
            hint = (
                f"Did you mean {' or '.join(repr(c) for c in close)}?"
                if close
                else f"Commands: {', '.join(known)}."
            )
            raise click.UsageError(f"No such command {name!r}. {hint}", ctx)
        return super().resolve_command(ctx, args)


class LazyGroup(Group):
    """A click group whose subcommands are imported on first use (click's documented lazy pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(commands())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load(cmd_name) if cmd_name in commands() else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing from the table: the same text click would print, without importing anything."""
        table = commands()
        names = sorted(table)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        # A bare Command shortens the text exactly as the real one would.
        rows = [(n, click.Command(n, help=table[n].short_help).get_short_help_str(limit)) for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
