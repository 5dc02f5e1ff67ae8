"""What the library answers: the document a command prints, with what its envelope says beside it.

Every ``*_document`` function of the area modules (``gpuopt.nsys.table_document``,
``gpuopt.profile.diff_document``, ...) returns an :class:`Answer`::

    >>> from gpuopt import nsys
    >>> answer = nsys.table_document("profile.sqlite", "kernels", nvtx="step_3", limit=10)
    >>> answer.data            # the pydantic document `gpuopt nsys kernels --json` prints under `data`
    >>> answer.table           # the whole table (polars), in --sort order; data holds its first 10 rows
    >>> answer.inputs          # the files read (size, BLAKE3): the envelope's provenance.inputs

The CLI only renders answers; a Python user gets every fact a command prints without the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # neither pydantic nor polars is imported with this module (start-up time)
    import polars as pl
    from pydantic import BaseModel

    from gpuopt.errors import GpuoptError
    from gpuopt.models.envelope import FileIdentity, UnmodeledItem

D = TypeVar("D", bound="BaseModel")


@dataclass(frozen=True)
class Answer(Generic[D]):
    """A document (``data``), the files it was read from, what they held that no fact reads, and the
    whole tables whose first rows the document carries."""

    #: The document: what ``--json`` prints under ``data`` (``gpuopt schema`` describes it).
    data: D
    #: Identity of every file read (the envelope's ``provenance.inputs``).
    inputs: list[FileIdentity] = field(default_factory=list)
    #: Content recognised but not turned into facts (the envelope's ``unmodeled``).
    unmodeled: list[UnmodeledItem] = field(default_factory=list)
    #: Every table of the document, whole and in its order, by the name its ``TableData`` carries; the
    #: first is the document's main table (what ``--out`` writes).
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    #: Set when the answer is itself a failure (every file of a many-file table failed): the document is
    #: still whole, and the command exits with this error's status.
    failure: GpuoptError | None = None
    #: The opened input the facts were read from (``gpuopt.ncu.NcuReport``, ``gpuopt.nsys.Report``,
    #: ``gpuopt.torch_trace.TorchTrace``; None for several files), for what is said beside the document.
    source: Any = None

    @property
    def table(self) -> pl.DataFrame:
        """The main table, whole (``KeyError`` for a document without tables)."""
        if not self.tables:
            raise KeyError(f"{type(self.data).__name__} holds no table")
        return next(iter(self.tables.values()))
