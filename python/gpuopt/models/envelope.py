"""The JSON envelope every command prints with ``--json``."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import Field

from gpuopt.models._base import Model

DataT = TypeVar("DataT")


class ErrorItem(Model):
    """One error: a stable ``code`` to switch on and a message for a person."""

    code: str = Field(
        description="Stable machine code of the error (e.g. format_invalid, schema_unknown): what callers "
        "switch on; its class sets the exit status (2 bad input, 3 tool or hardware absent, 1 "
        "internal)"
    )
    message: str = Field(description="What went wrong, in words for a person; never parse it, switch on code")
    path: str | None = Field(
        default=None,
        description="The file, field path or name the error is about; null when it is about no one place",
    )
    expected: str | None = Field(
        default=None,
        description="What was expected there (a format, a value range, the names allowed); null when not "
        "stated",
    )
    observed: str | None = Field(
        default=None,
        description='What was found instead; of a file\'s content only its shape ("24 bytes of text"), '
        "never the bytes themselves; null when not stated",
    )


class UnmodeledItem(Model):
    """Content that was recognised but is not turned into facts: reported, never guessed at."""

    kind: str = Field(description="What sort of content: table, column, metric, event_category, field ...")
    name: str = Field(description="What was not modeled (a category, field, metric, header key, ...)")
    count: int | None = Field(default=None, description="How many rows/events/values carried it, if counted")


class FileIdentity(Model):
    """A file a fact was read from."""

    path: str = Field(description="The file's path as given")
    size_bytes: int = Field(description="Size of the file as hashed (bytes)")
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

    gpuopt_version: str = Field(description="Version of the gpuopt package that wrote the document")
    native_build_id: str = Field(
        description="First 16 hex digits of the native module's source SHA-256 (gpuopt doctor's "
        "gpuopt.native.source_sha256): which Rust engines computed the facts"
    )
    inputs: list[FileIdentity] = Field(
        default_factory=list,
        description="Identity of every input file read (path, size, BLAKE3), in the order read; empty for "
        "a command that reads no file",
    )


class Envelope(Model, Generic[DataT]):
    """``{schema, ok, data, errors, unmodeled, provenance}``: exactly one per command run with ``--json``."""

    schema_: str = Field(
        alias="schema", description="Name and version of this document, e.g. gpuopt.doctor/v1"
    )
    ok: bool = Field(
        description="True when the command did what was asked; false when errors says why (data may still "
        "be present, e.g. a corrupt store's report)"
    )
    data: DataT | None = Field(
        description="The command's document, as this schema's data model describes; null when the command "
        "failed before making one"
    )
    errors: list[ErrorItem] = Field(
        default_factory=list,
        description="Why ok is false: one item per error (usually one); empty when ok is true",
    )
    unmodeled: list[UnmodeledItem] = Field(
        default_factory=list,
        description="Content recognised in the inputs but not turned into facts (tables, columns, metrics, "
        "categories), reported rather than guessed at; empty when everything read was modeled",
    )
    provenance: Provenance = Field(
        description="Where this document came from: the gpuopt build and the identity of every input file"
    )
