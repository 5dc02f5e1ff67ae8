"""What gpuopt freezes for each evaluation: the typed core an operation's builder returns and the frozen
request file (``invocations/<id>/request.json``) that core becomes once gpuopt adds the Target, its tool
identity, the host, the GPUs and the limits.

Each ``<Op>Frozen`` derives from its ``<Op>Core`` and from :class:`FrozenRequest`, so the fields a builder
sets and the fields a reader gets are declared once, and ``isinstance`` on a core class (``ContractCore``,
``BoundCore``) narrows a frozen request for mypy instead of ``getattr`` on a union.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models.evaluation.common import RecordRef, ResultRef
from gpuopt.models.evaluation.experiment import Contract
from gpuopt.models.evaluation.gate import GateSpec
from gpuopt.models.evaluation.invocation import EvidenceStep, FrozenRequest, RequestCore
from gpuopt.models.evaluation.operations import Binding, ChampionFacts

# ---- cores: what the builders return -----------------------------------------------------------------------


class SmokeCore(RequestCore):
    """``readiness_smoke``: one isolated call of the original per case."""

    operation: Literal["readiness_smoke"] = Field(
        description="The operation: always readiness_smoke (the supervisor picks its handler by it)"
    )


class BaselineCore(RequestCore):
    operation: Literal["baseline"] = Field(
        description="The operation: always baseline (the supervisor picks its handler by it)"
    )


class ContractCore(RequestCore):
    """A core whose calls run under an acquisition contract (state kept, gates, diagnostics)."""

    contract: Contract = Field(
        description="How the calls acquire their subjects (lifecycle, shared and rebuilt state) and the "
        "candidate-only correctness gates and diagnostics"
    )


class NoiseCore(ContractCore):
    operation: Literal["noise"] = Field(
        description="The operation: always noise (the supervisor picks its handler by it)"
    )


class BoundCore(ContractCore):
    """A comparison bound to the Champion it was built against, with the noise record for its resolution."""

    reference_binding: Binding = Field(
        description="The Champion the comparison is bound to (selection and pointer file hash); a move "
        "before publication makes the result stale"
    )
    noise: ResultRef | None = Field(
        description="The noise result the resolution (MDE) is computed from; null when none matches"
    )


class ExperimentCore(BoundCore):
    """A comparison of an Experiment's candidate against the Champion."""

    experiment: RecordRef = Field(description="The Experiment whose candidate is compared")
    mechanism: str = Field(description="The Experiment's mechanism slug")


class ScreenCore(ExperimentCore):
    operation: Literal["screen"] = Field(
        description="The operation: always screen (the supervisor picks its handler by it)"
    )


class TargetCore(ExperimentCore):
    operation: Literal["target"] = Field(
        description="The operation: always target (the supervisor picks its handler by it)"
    )
    screens: list[ResultRef] = Field(description="The screen chain the screen gate accepted")


class FinalAuditCore(BoundCore):
    operation: Literal["final_audit"] = Field(
        description="The operation: always final_audit (the supervisor picks its handler by it)"
    )
    champion: ChampionFacts = Field(
        description="The Champion audited: its selection, Experiment and where the contract came from"
    )
    restore_checks: list[EvidenceStep] = Field(
        description="One isolated original call per case, run only if the Champion fails correctness"
    )


class GateCore(ContractCore):
    """``gate``: the current code against a saved baseline's variant or the Champion (``gate check``)."""

    operation: Literal["gate"] = Field(
        description="The operation: always gate (the supervisor picks its handler by it)"
    )
    gate: GateSpec = Field(
        description="What the current code is compared with (a saved gate baseline or the Champion) "
        "and the judging mode"
    )
    noise: ResultRef | None = Field(description="The noise record used for the resolution")


# ---- frozen requests: what request.json holds --------------------------------------------------------------


class SmokeFrozen(SmokeCore, FrozenRequest):
    """A frozen ``readiness_smoke`` request."""


class BaselineFrozen(BaselineCore, FrozenRequest):
    """A frozen ``baseline`` request."""


class NoiseFrozen(NoiseCore, FrozenRequest):
    """A frozen ``noise`` request."""


class ScreenFrozen(ScreenCore, FrozenRequest):
    """A frozen ``screen`` request."""


class TargetFrozen(TargetCore, FrozenRequest):
    """A frozen ``target`` request."""


class FinalAuditFrozen(FinalAuditCore, FrozenRequest):
    """A frozen ``final_audit`` request."""


class GateFrozen(GateCore, FrozenRequest):
    """A frozen ``gate`` request."""
