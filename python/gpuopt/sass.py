"""SASS listings: scan ``cuobjdump -sass`` or ``nvdisasm`` output, or a binary through those tools.

``scan`` makes one pass in Rust and returns the summary (pydantic) and three polars tables: one row
per function, per (function, opcode) and per (function, signature). Signatures match parsed opcodes
only (``references/sass_signatures.json``), never function names or comments.

:func:`scan_document` and :func:`table_document` answer what ``gpuopt sass scan|functions|opcodes|
signatures`` print (a :class:`gpuopt.answer.Answer`: ``.data`` the document, ``.table`` the whole table).
"""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from gpuopt import _native
from gpuopt._files import read_bounded, regular_size
from gpuopt.errors import InputError
from gpuopt.models.doctor import ToolIdentity
from gpuopt.models.sass import SassScanReport, SassSource, SassSummary, SignatureTotal

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.models.sass import SassTableData


TOOLS = ("cuobjdump", "nvdisasm")

# Magic bytes of the binaries the NVIDIA tools read: ELF (cubin, .o, .so, executables), a fat binary
# (``.fatbin``), an ``ar`` archive of objects (``.a``).
_MAGIC: tuple[tuple[bytes, Literal["elf", "fatbin", "archive"]], ...] = (
    (b"\x7fELF", "elf"),
    (b"\x50\xed\x55\xba", "fatbin"),
    (b"!<arch>\n", "archive"),
)
_EM_CUDA = 190  # ELF e_machine of a cubin
_TOOL_TIMEOUT_S = 600


@dataclass(frozen=True)
class SassScan:
    """One scanned listing: where it came from, its summary and its tables."""

    source: SassSource
    summary: SassSummary
    functions: pl.DataFrame
    opcodes: pl.DataFrame
    signatures: pl.DataFrame

    def report(self) -> SassScanReport:
        """The ``gpuopt sass scan`` document: source, summary, per-signature totals."""
        import polars as pl

        totals = (
            self.signatures.group_by("signature", "mechanism", maintain_order=True)
            .agg(
                found=(pl.col("status") == "found").sum(),
                missing=(pl.col("status") == "missing").sum(),
                not_applicable=(pl.col("status") == "not_applicable").sum(),
            )
            .to_dicts()
        )
        return SassScanReport(
            source=self.source,
            summary=self.summary,
            signatures=[SignatureTotal.model_validate(t) for t in totals],
        )


def binary_kind(path: Path) -> Literal["elf", "fatbin", "archive"] | None:
    """The binary container of ``path`` by its magic bytes, or None for text."""
    from gpuopt._files import read_head

    head = read_head(path, 20)
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return None


def _is_cubin(path: Path) -> bool:
    from gpuopt._files import read_head

    head = read_head(path, 20)
    return len(head) >= 20 and int.from_bytes(head[18:20], "little") == _EM_CUDA


@functools.lru_cache(maxsize=4)
def _tool(name: str) -> ToolIdentity:
    """The tool's identity, found and hashed once per process (a scan of many cubins asks often)."""
    from gpuopt.tools import require_tool

    return require_tool(name)


def _disassemble(path: Path, tool: str, kind: str, out: Path) -> tuple[ToolIdentity, list[str]]:
    if tool not in TOOLS:
        raise InputError("sass_tool_unknown", f"no disassembler {tool!r}", expected=" or ".join(TOOLS))
    if tool == "nvdisasm" and not (kind == "elf" and _is_cubin(path)):
        raise InputError(
            "sass_tool_unsuited",
            f"nvdisasm reads only cubins (device ELF); {path} is a {kind} that is not a cubin",
            path=str(path),
            expected="tool cuobjdump for fatbins, objects, libraries and executables",
        )
    identity = _tool(tool)
    command = [identity.path, "-sass", str(path)] if tool == "cuobjdump" else [identity.path, str(path)]
    with out.open("wb") as sink:
        try:
            done = subprocess.run(
                command, stdout=sink, stderr=subprocess.PIPE, timeout=_TOOL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise InputError(
                "sass_tool_failed", f"{tool} ran longer than {_TOOL_TIMEOUT_S} s on {path}", path=str(path)
            ) from exc
    stderr = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode != 0 or "does not contain device code" in stderr:
        code = "sass_no_device_code" if "does not contain device code" in stderr else "sass_tool_failed"
        raise InputError(
            code,
            f"{tool} could not disassemble {path}: {stderr or f'exit status {done.returncode}'}",
            path=str(path),
            observed=f"exit status {done.returncode}",
        )
    return identity, command


def scan(
    path_or_text: str | os.PathLike[str] | bytes,
    *,
    tool: str = "cuobjdump",
    catalog: str | os.PathLike[str] | None = None,
    evidence_limit: int = 3,
) -> SassScan:
    """Scans a SASS listing, or a binary through ``tool`` (cuobjdump or nvdisasm).

    ``path_or_text`` is a path (``str`` without newlines, or ``PathLike``) or the listing itself
    (``bytes``, or a ``str`` with newlines). A binary (``.cubin``, ``.fatbin``, ``.o``, ``.so``, an
    executable) is disassembled with the tool, whose version and sha256 are recorded in ``source``;
    an absent tool raises ``ToolAbsentError`` (exit 3).
    """
    from gpuopt._tables import to_polars

    catalog_json = read_bounded(catalog, "signature catalog") if catalog is not None else None
    if isinstance(path_or_text, bytes) or (isinstance(path_or_text, str) and "\n" in path_or_text):
        text = path_or_text.encode() if isinstance(path_or_text, str) else path_or_text
        raw = _native.sass_scan_text(text, catalog_json, evidence_limit)
        source = SassSource(kind="text")
    else:
        path = Path(path_or_text)
        regular_size(path)  # a FIFO or device answers not_a_file instead of blocking the magic read
        kind = binary_kind(path)
        if kind is None:
            raw = _native.sass_scan_path(str(path), catalog_json, evidence_limit)
            source = SassSource(kind="listing_file", path=str(path))
        else:
            with tempfile.TemporaryDirectory(prefix="gpuopt-sass-") as tmp:
                listing = Path(tmp) / "listing.sass"
                identity, command = _disassemble(path, tool, kind, listing)
                raw = _native.sass_scan_path(str(listing), catalog_json, evidence_limit)
            source = SassSource(
                kind="binary", path=str(path), binary_kind=kind, tool=identity, command=command
            )
    summary_json, functions, opcodes, signatures = raw
    return SassScan(
        source=source,
        summary=SassSummary.model_validate_json(summary_json),
        functions=to_polars(functions),
        opcodes=to_polars(opcodes),
        signatures=to_polars(signatures),
    )


def builtin_catalog() -> bytes:
    """The signature catalog compiled into this build (``references/sass_signatures.json``)."""
    return _native.sass_builtin_catalog()


# --- documents: what `gpuopt sass ...` prints under `data` ---------------------------------------------

#: The tables of a scan, by the command that shows them (``gpuopt sass functions`` ...).
TABLES = ("functions", "opcodes", "signatures")

Source = str | os.PathLike[str] | bytes


def _scanned(
    source: Source, tool: str, catalog: str | os.PathLike[str] | None, evidence: int = 3
) -> tuple[SassScan, Answer[SassScanReport]]:
    """The scan, and an answer with the files read (none for a listing given as bytes) and what the
    listing held that no fact reads."""
    from gpuopt.answer import Answer
    from gpuopt.provenance import file_identity

    result = scan(source, tool=tool, catalog=catalog, evidence_limit=evidence)
    inputs = []
    if not isinstance(source, bytes) and result.source.path is not None:
        inputs.append(file_identity(Path(source)))
        if catalog is not None:
            inputs.append(file_identity(Path(catalog)))
    return result, Answer(result.report(), inputs, list(result.summary.unmodeled))


def scan_document(
    source: Source, *, tool: str = "cuobjdump", catalog: str | os.PathLike[str] | None = None
) -> Answer[SassScanReport]:
    """``gpuopt sass scan``: architectures, functions, instructions, classes, signature totals (``source``
    as :func:`scan` takes it: a path, or the listing's bytes)."""
    return _scanned(source, tool, catalog)[1]


def table_document(
    source: Source,
    table: str,
    *,
    tool: str = "cuobjdump",
    catalog: str | os.PathLike[str] | None = None,
    evidence: int = 3,
    function: str | None = None,
    signatures: Sequence[str] = (),
    status: Sequence[str] = (),
    limit: int = 50,
    sort: str | None = None,
) -> Answer[SassTableData]:
    """One table of a scan (:data:`TABLES`): ``functions``; ``opcodes`` (only functions whose name contains
    ``function``; by function, most frequent first); ``signatures`` (only the catalog keys in
    ``signatures``, an unknown one being ``sass_signature_unknown``, and the ``status`` values given). The
    document holds the first ``limit`` rows (0: all) in ``sort`` order."""
    import polars as pl

    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.sass import SassTableData

    if table not in TABLES:
        raise InputError("sass_table_unknown", f"no table named {table!r}", expected=", ".join(TABLES))
    result, scanned = _scanned(source, tool, catalog, evidence)
    frame: pl.DataFrame = getattr(result, table)
    if table == "opcodes":
        if function:
            frame = frame.filter(pl.col("function").str.contains(function, literal=True))
        frame = frame.sort(["function_index", "count", "opcode"], descending=[False, True, False])
    if table == "signatures":
        frame = _chosen_signatures(frame, signatures, status)
    name = f"sass_{table}"
    frame = sorted_by(frame, sort)
    data = SassTableData(stage="sass", source=result.source, table=table_data(name, frame, limit))
    return Answer(data, scanned.inputs, scanned.unmodeled, {name: frame}, source=result)


def _chosen_signatures(frame: pl.DataFrame, keys: Sequence[str], status: Sequence[str]) -> pl.DataFrame:
    import polars as pl

    if keys:
        known = set(frame["signature"].unique().to_list())
        unknown = [k for k in keys if k not in known]
        if unknown:
            raise InputError(
                "sass_signature_unknown",
                f"no signature {', '.join(unknown)} in the catalog",
                expected=", ".join(sorted(known)),
            )
        frame = frame.filter(pl.col("signature").is_in(list(keys)))
    if status:
        frame = frame.filter(pl.col("status").is_in(list(status)))
    return frame
