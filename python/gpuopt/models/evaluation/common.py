"""Shared pieces of every evaluation record: strict base, bounded names and texts, refs, violations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, GetCoreSchemaHandler, GetJsonSchemaHandler, StringConstraints
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from gpuopt.evaluation import registry
from gpuopt.models._base import Model


class Record(Model):
    """A strict evaluation document: unknown fields, bool-as-number and string-as-number are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_.:-]{0,127}$")]
"""A metric, case, gate or rule name."""
Text = Annotated[str, StringConstraints(max_length=4096)]
Unit = Annotated[str, StringConstraints(min_length=1, max_length=32)]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class ObjectReference:
    """Marks a digest that names a frozen tree of the root's object store (``objects/trees/<digest>.json``):
    ``gpuopt store verify`` finds every field so marked in a record and checks the tree is there."""

    def __repr__(self) -> str:
        return "ObjectReference()"


OBJECT_REFERENCE = ObjectReference()
ObjectDigest = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$"), OBJECT_REFERENCE]
"""The digest of a tree in this root's object store (a variant, a test set, a call's output bundle...)."""
Finite = Annotated[float, Field(allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Epoch = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]
TargetId = Annotated[str, StringConstraints(pattern=r"^tgt-[0-9a-f]{64}$")]
InvocationId = Annotated[
    str, StringConstraints(pattern=r"^(inv-[0-9a-f]{32}(-r[1-9][0-9]{0,5})?|probe-[0-9a-f]{24})$")
]
Role = Literal["original", "reference", "candidate"]
VariantKind = Literal["source", "artifact"]


class Registered:
    """A string that must be one of the names ``names()`` gives when a record is validated: an enum read
    from the operations registry (:mod:`gpuopt.evaluation.registry`), so no model lists the verbs. Its
    error and JSON Schema are those of the ``Literal`` it stands for."""

    def __init__(self, names: Callable[[], list[str]]) -> None:
        self.names = names

    def __repr__(self) -> str:
        return f"Registered({', '.join(self.names())})"

    def _check(self, value: str) -> str:
        names = self.names()
        if value not in names:
            quoted = [repr(n) for n in names]
            expected = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
            raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self._check, handler(str))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> Any:
        return {"enum": self.names(), "type": "string"}


Operation = Annotated[str, Registered(registry.operation_names)]
"""The operation a frozen request, a result or a driver request names: a supervised verb of the registry."""
CitingOperation = Annotated[str, Registered(registry.citing_names)]
"""An operation whose results may cite capture diffs."""


class RecordRef(Record):
    """A record's id and the sha256 of its file bytes, copied from command output."""

    id: str = Field(description="The record's id")
    sha256: Sha256 = Field(description="SHA-256 of the record file's bytes")


class ResultRef(Record):
    """An invocation result: the invocation id and the sha256 of its ``result.json``."""

    invocation_id: InvocationId = Field(
        description="The invocation whose result this is: inv-<32hex> (a retry adds -r<N>)"
    )
    sha256: Sha256 = Field(
        description="SHA-256 of the invocation's result.json bytes, copied from command output; a file "
        "that no longer hashes to it is record_changed"
    )


class Violation(Record):
    """One failed gate: a stable ``code`` and where, what was expected, what was seen."""

    code: str = Field(
        description="Stable code of the failed gate (sample_count_mismatch, metric_set_mismatch, "
        "bundle_undeclared_member, command_failed, ...)"
    )
    path: str | None = Field(
        default=None,
        description="Where the gate failed, e.g. subjects[1].measurements.step_time_ms.samples or a bundle "
        "member; null when it has no one place",
    )
    expected: str | None = Field(
        default=None,
        description="What the gate expected: text, or canonical JSON cut at 1000 characters; null when not "
        "stated",
    )
    observed: str | None = Field(
        default=None, description="What the call produced instead, in the same form; null when not stated"
    )
    message: str | None = Field(
        default=None, description="A sentence for a person; null when the code and values say it all"
    )


class Unavailable(Record):
    """An explicit marker for a part a diagnostic Target does not have (never null, never a fake default)."""

    unavailable: Literal["diagnostic_target"] = Field(
        description="Always diagnostic_target: a diagnostic Target has no such part (an explicit marker, "
        "never null or a made-up default)"
    )


UNAVAILABLE = Unavailable(unavailable="diagnostic_target")
