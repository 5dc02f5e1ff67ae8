"""The JSON envelope every command prints with ``--json``."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import Field

from gpuopt.models._base import Model

DataT = TypeVar("DataT")


class ErrorItem(Model):
    """One error: a stable ``code`` to switch on and a message for a person."""

    code: str
    message: str
    path: str | None = None
    expected: str | None = None
    observed: str | None = None


class UnmodeledItem(Model):
    """Content that was recognised but is not turned into facts: reported, never guessed at."""

    kind: str = Field(description="What sort of content: table, column, metric, event_category, field ...")
    name: str = Field(description="What was not modeled (a category, field, metric, header key, ...)")
    count: int | None = Field(default=None, description="How many rows/events/values carried it, if counted")


class FileIdentity(Model):
    """A file a fact was read from."""

    path: str = Field(description="The file's path as given")
    size_bytes: int = Field(description="Its size (bytes)")
    blake3: str = Field(
        description="BLAKE3 (256-bit, hex) of its content: gpuopt's file identity (b3sum prints the same)"
    )
    from_cache: bool = Field(
        default=False,
        description="True when the digest came from gpuopt's identity cache (same device, inode, size, "
        "mtime and ctime as when it was hashed, entry tagged with the cache's key), false when the file "
        "was read and hashed now.",
    )


class Provenance(Model):
    """Where a document came from: the gpuopt build and the exact input files."""

    gpuopt_version: str
    native_build_id: str
    inputs: list[FileIdentity] = Field(default_factory=list)


class Envelope(Model, Generic[DataT]):
    """``{schema, ok, data, errors, unmodeled, provenance}``: exactly one per command run with ``--json``."""

    schema_: str = Field(
        alias="schema", description="Name and version of this document, e.g. gpuopt.doctor/v1"
    )
    ok: bool
    data: DataT | None
    errors: list[ErrorItem] = Field(default_factory=list)
    unmodeled: list[UnmodeledItem] = Field(default_factory=list)
    provenance: Provenance
