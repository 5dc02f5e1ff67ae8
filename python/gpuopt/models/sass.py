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

    kind: Literal["text", "listing_file", "binary"]
    path: str | None = None
    binary_kind: Literal["elf", "fatbin", "archive"] | None = Field(
        default=None, description="For a binary: its container, from the file's magic bytes"
    )
    tool: ToolIdentity | None = Field(default=None, description="The disassembler that was run (binaries)")
    command: list[str] | None = Field(default=None, description="The exact command line that was run")


class CatalogInfo(Model):
    format: str
    version: int
    sha256: str = Field(description="SHA-256 of the catalog's bytes")
    signature_count: int


class SassSummary(Model):
    """Listing-level totals. Counts exclude the trailing NOP padding of each function."""

    stage: Literal["sass"] = Field(description="Every fact here was read from disassembled machine code")
    dialect: Dialect
    architectures: list[str] = Field(description="Architectures of the SASS code, e.g. sm_90a")
    ptx_architectures: list[str] = Field(description="Architectures of PTX embedded beside it (cuobjdump)")
    cubin_count: int = Field(description="ELF images in the listing (a fatbin or library holds several)")
    function_count: int
    instruction_count: int
    padding_nop_count: int
    predicated_count: int
    backward_branch_count: int = Field(description="BRA/JMP to a lower address (loop back-edges)")
    distinct_opcode_count: int = Field(description="Distinct full mnemonics, modifiers included")
    class_counts: dict[str, int] = Field(description="Instructions per class (see references/sass.md)")
    line_count: int
    size_bytes: int
    unmodeled: list[UnmodeledItem]
    catalog: CatalogInfo | None


class SignatureTotal(Model):
    """How many functions a catalog signature was found, missing or not applicable in."""

    signature: str
    mechanism: str
    found: int
    missing: int
    not_applicable: int


class SassScanReport(Model):
    """``gpuopt sass scan``: the source, the summary and per-signature totals."""

    source: SassSource
    summary: SassSummary
    signatures: list[SignatureTotal]


class SassTableData(Model):
    """A SASS table (functions, opcodes, signatures) with the stage and source it was read from."""

    stage: Literal["sass"]
    source: SassSource
    table: TableData
