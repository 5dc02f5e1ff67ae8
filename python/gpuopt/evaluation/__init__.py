"""The evaluation core: artifact store, Target freeze (readiness), workload driver protocol, supervised
invocations, evaluations, the Champion and read-only views. Tools measure, freeze and record; they never
choose what to try next.

Layers, bottom up (``references/architecture.md`` draws them; a test enforces them): records
(:mod:`execution`, :mod:`formats`, the models), store (:mod:`jsonio`, :mod:`store`, :mod:`target`,
:mod:`records`), runner (:mod:`launch`, :mod:`driver`, :mod:`locks`, :mod:`identity`, :mod:`sampler`,
:mod:`sampling`, :mod:`executor`, :mod:`supervisor`), operations (:mod:`analysis`, :mod:`plans`,
:mod:`invocation`, :mod:`invocation_status`, :mod:`operations`, :mod:`experiment`, :mod:`champion`,
:mod:`readiness`, :mod:`detached`) and views (:mod:`views`: ls, show, report, handoff).

Every verb is one entry of the operations registry (:mod:`registry`). The CLI verbs' Python twins are
importable from here (loaded on first use): each registry entry's ``api`` name — :func:`baseline`,
:func:`noise`, :func:`screen`, :func:`formal_target` (``gpuopt target``; ``gpuopt.evaluation.target`` is the
module that reads Targets), :func:`final_audit` (a request model, JSON bytes or a dict -> the command's
data model), :func:`create_experiment`, :func:`select`, :func:`restore_original` — and the views'
:func:`show_champion`, :func:`champion_history`, :func:`ls`, :func:`show`, :func:`report`,
:func:`handoff`.
"""

from __future__ import annotations

import importlib
from typing import Any

from gpuopt.evaluation import registry

_VIEWS = {
    "show_champion": ("champion", "show"),
    "champion_history": ("champion", "history"),
    "ls": ("views.listing", "ls"),
    "show": ("views.listing", "show"),
    "report": ("views.report", "report"),
    "handoff": ("views.handoff", "write"),
}


def __getattr__(name: str) -> Any:
    """The CLI twins, imported lazily (the supervisor imports this package before anything heavy): the
    verbs' from the operations registry (each entry's ``api`` name), the views' from :data:`_VIEWS`."""
    for verb in registry.verbs():
        if verb.api == name:
            return verb.entry()
    if name in _VIEWS:
        module, attribute = _VIEWS[name]
        return getattr(importlib.import_module(f"gpuopt.evaluation.{module}"), attribute)
    raise AttributeError(f"module 'gpuopt.evaluation' has no attribute {name!r}")
