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

    operation: Literal["readiness_smoke"]


class BaselineCore(RequestCore):
    operation: Literal["baseline"]


class ContractCore(RequestCore):
    """A core whose calls run under an acquisition contract (state kept, gates, diagnostics)."""

    contract: Contract


class NoiseCore(ContractCore):
    operation: Literal["noise"]


class BoundCore(ContractCore):
    """A comparison bound to the Champion it was built against, with the noise record for its resolution."""

    reference_binding: Binding
    noise: ResultRef | None


class ExperimentCore(BoundCore):
    """A comparison of an Experiment's candidate against the Champion."""

    experiment: RecordRef
    mechanism: str


class ScreenCore(ExperimentCore):
    operation: Literal["screen"]


class TargetCore(ExperimentCore):
    operation: Literal["target"]
    screens: list[ResultRef] = Field(description="The screen chain the screen gate accepted")


class FinalAuditCore(BoundCore):
    operation: Literal["final_audit"]
    champion: ChampionFacts
    restore_checks: list[EvidenceStep] = Field(
        description="One isolated original call per case, run only if the Champion fails correctness"
    )


class GateCore(ContractCore):
    """``gate``: the current code against a saved baseline's variant or the Champion (``gate check``)."""

    operation: Literal["gate"]
    gate: GateSpec
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
