"""Shared pieces of every evaluation record: strict base, bounded names and texts, refs, violations."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StringConstraints

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
Operation = Literal[
    "readiness_smoke", "baseline", "noise", "screen", "target", "final_audit", "capture", "gate"
]


class RecordRef(Record):
    """A record's id and the sha256 of its file bytes, copied from command output."""

    id: str = Field(description="The record's id")
    sha256: Sha256 = Field(description="SHA-256 of the record file's bytes")


class ResultRef(Record):
    """An invocation result: the invocation id and the sha256 of its ``result.json``."""

    invocation_id: InvocationId
    sha256: Sha256


class Violation(Record):
    """One failed gate: a stable ``code`` and where, what was expected, what was seen."""

    code: str
    path: str | None = None
    expected: str | None = None
    observed: str | None = None
    message: str | None = None


class Unavailable(Record):
    """An explicit marker for a part a diagnostic Target does not have (never null, never a fake default)."""

    unavailable: Literal["diagnostic_target"]


UNAVAILABLE = Unavailable(unavailable="diagnostic_target")
