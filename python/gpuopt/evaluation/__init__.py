"""The evaluation core: artifact store, Target freeze (readiness), workload driver protocol, supervised
invocations, evaluations, the Champion and read-only views. Tools measure, freeze and record; they never
choose what to try next.

Modules: :mod:`jsonio` (the strict reader and canonical hashing), :mod:`store` (one artifact root),
:mod:`driver` (the driver protocol), :mod:`readiness` (Target freeze), :mod:`invocation` (submit, status,
cancel), :mod:`supervisor` (the process that runs driver calls), :mod:`locks` (per-GPU locks),
:mod:`operations` (baseline, noise, screen, target, final audit), :mod:`experiment`, :mod:`champion`,
:mod:`views` (ls, show, report, handoff).

The CLI verbs' Python twins are importable from here (loaded on first use): :func:`baseline`,
:func:`noise`, :func:`screen`, :func:`formal_target` (``gpuopt target``; ``gpuopt.evaluation.target`` is the
module that reads Targets), :func:`final_audit` (a request model, JSON bytes or a dict -> the command's
data model), :func:`create_experiment`, :func:`select`, :func:`restore_original`,
:func:`show_champion`, :func:`champion_history`, :func:`ls`, :func:`show`, :func:`report`,
:func:`handoff`.
"""

from __future__ import annotations

from typing import Any

_TWINS = {
    "baseline": ("operations", "baseline"),
    "noise": ("operations", "noise"),
    "screen": ("operations", "screen"),
    "formal_target": ("operations", "target"),
    "final_audit": ("operations", "final_audit"),
    "create_experiment": ("experiment", "create"),
    "select": ("champion", "select"),
    "restore_original": ("champion", "restore_original"),
    "show_champion": ("champion", "show"),
    "champion_history": ("champion", "history"),
    "ls": ("views.listing", "ls"),
    "show": ("views.listing", "show"),
    "report": ("views.report", "report"),
    "handoff": ("views.handoff", "write"),
}


def __getattr__(name: str) -> Any:
    """The CLI twins, imported lazily (the supervisor imports this package before anything heavy)."""
    if name in _TWINS:
        import importlib

        module, attribute = _TWINS[name]
        return getattr(importlib.import_module(f"gpuopt.evaluation.{module}"), attribute)
    raise AttributeError(f"module 'gpuopt.evaluation' has no attribute {name!r}")
