"""The one table of evaluation record formats (spec §3.1): every format string the evaluation code writes
comes from here. The stable error codes are listed in the specification, not duplicated here."""

from __future__ import annotations

from typing import Final

TARGET: Final = "gpuopt.target/v2"
"""v2: inherited variables keep a keyed digest, values only where ``env_record`` says; v1 is still read."""
INVOCATION_REQUEST: Final = "gpuopt.invocation-request/v1"
INVOCATION_RESULT: Final = "gpuopt.invocation-result/v3"
"""v3: each metric of a comparison embeds the engine's ``Comparison`` (per-case effects and order facts
included) instead of v2's field-by-field twins (``StatisticV2``, ``CaseStatV2``). v2: the constraints and
guardrails embed the engine's results (``ConstraintResult``, and ``GuardrailResult`` with its violations
located in the pairs) instead of v1's twins (``ConstraintStat``, ``GuardrailStat``). v1 and v2 are still
read (``StatisticsV1``, ``StatisticsV2``)."""
DRIVER_REQUEST: Final = "gpuopt.driver-request/v1"
READINESS_FAILURE: Final = "gpuopt.readiness-failure/v1"
EXPERIMENT: Final = "gpuopt.experiment/v1"
RESOURCES: Final = "gpuopt.resources/v1"
CHAMPION_POINTER: Final = "gpuopt.champion-pointer/v1"
SELECTION: Final = "gpuopt.selection/v1"
EVALUATION: Final = "gpuopt.evaluation/v1"
"""The evaluation format as a whole, part of every invocation's tool identity."""
