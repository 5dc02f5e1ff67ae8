"""Documents about SASS listings: where the listing came from, the listing-level summary, signature totals."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.doctor import ToolIdentity
from gpuopt.models.envelope import UnmodeledItem
from gpuopt.models.table import TableData

Dialect = Literal["cuobjdump", "nvdisasm"]


class SassSource(Model):
    """Where the listing came from: text given directly, a listing file, or a binary run through a tool."""

    kind: Literal["text", "listing_file", "binary"] = Field(
        description="text (stdin), listing_file (a SASS listing) or binary (run through cuobjdump/nvdisasm)"
    )
    path: str | None = Field(default=None, description="The file read; null for stdin")
    binary_kind: Literal["elf", "fatbin", "archive"] | None = Field(
        default=None, description="For a binary: its container, from the file's magic bytes"
    )
    tool: ToolIdentity | None = Field(default=None, description="The disassembler that was run (binaries)")
    command: list[str] | None = Field(default=None, description="The exact command line that was run")


class CatalogInfo(Model):
    format: str = Field(description="The signature catalog's format name")
    version: int = Field(description="Version of the signature catalog (references/sass_signatures.json)")
    sha256: str = Field(description="SHA-256 of the catalog's bytes")
    signature_count: int = Field(description="Signatures in it")


class SassSummary(Model):
    """Listing-level totals. Counts exclude the trailing NOP padding of each function."""

    stage: Literal["sass"] = Field(description="Every fact here was read from disassembled machine code")
    dialect: Dialect = Field(description="cuobjdump or nvdisasm: which tool's listing format")
    architectures: list[str] = Field(description="Architectures of the SASS code, e.g. sm_90a")
    ptx_architectures: list[str] = Field(description="Architectures of PTX embedded beside it (cuobjdump)")
    cubin_count: int = Field(description="ELF images in the listing (a fatbin or library holds several)")
    function_count: int = Field(description="Functions in the listing")
    instruction_count: int = Field(description="Instructions, trailing padding NOPs excluded")
    padding_nop_count: int = Field(description="Trailing unguarded NOPs (alignment padding)")
    predicated_count: int = Field(description="Instructions with a guard other than @PT")
    backward_branch_count: int = Field(description="BRA/JMP to a lower address (loop back-edges)")
    distinct_opcode_count: int = Field(description="Distinct full mnemonics, modifiers included")
    class_counts: dict[str, int] = Field(description="Instructions per class (see references/sass.md)")
    line_count: int = Field(description="Lines of the listing")
    size_bytes: int = Field(description="Size of the listing (bytes)")
    unmodeled: list[UnmodeledItem] = Field(description="Lines or constructs recognised but not modeled")
    catalog: CatalogInfo | None = Field(description="The signature catalog used; null when none")


class SignatureTotal(Model):
    """How many functions a catalog signature was found, missing or not applicable in."""

    signature: str = Field(description="Key of the catalog signature (references/sass_signatures.json)")
    mechanism: str = Field(description="The mechanism it is evidence of")
    found: int = Field(description="Functions where it was found")
    missing: int = Field(description="Functions where it was not")
    not_applicable: int = Field(description="Functions whose arch is outside the signature's list")


class SassScanReport(Model):
    """``gpuopt sass scan``: the source, the summary and per-signature totals."""

    source: SassSource = Field(description="What was read")
    summary: SassSummary = Field(description="Counts over the whole listing")
    signatures: list[SignatureTotal] = Field(
        description="Per signature: functions found, missing, not applicable"
    )


class SassTableData(Model):
    """A SASS table (functions, opcodes, signatures) with the stage and source it was read from."""

    stage: Literal["sass"] = Field(description="sass")
    source: SassSource = Field(description="What was read")
    table: TableData = Field(description="The table (column definitions: gpuopt schema sass.<table name>)")
