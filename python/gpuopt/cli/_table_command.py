"""The one path of every table command: options -> the area's ``table_document`` -> the Outcome.

A table command is a declaration, its options and one call::

    @nsys.command("kernels")
    @files_argument(NSYS_FILE)
    ...
    @table_options
    @command(TABLE_SCHEMA)
    def kernels(files: tuple[Path, ...], **options: Any) -> Outcome:
        \"\"\"Kernel time by name ...\"\"\"
        return table_command("nsys", "kernels", files, **options)

:func:`table_command` asks the area's library for the table (``gpuopt.nsys.table_document``, ...: one
input gives the area's own document; several files or a glob give one table keyed by ``file``, read by
``--workers`` or ``--dask-scheduler``), hands ``--sort`` and ``--limit`` to it, and renders the answer the
area's way (``render_table`` of the area's render module) or as the many-file table.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuopt.cli._many import MANY_SCHEMA, readers, render_many
from gpuopt.cli._output import Outcome
from gpuopt.cli._tables import answered, current_sort
from gpuopt.many import check_scheduler, is_many

if TYPE_CHECKING:
    from collections.abc import Callable

    from gpuopt.answer import Answer


@dataclass(frozen=True)
class _Area:
    #: The library module whose ``table_document(source, table, *, limit, sort, ...)`` answers.
    library: str
    #: The module whose ``render_table(answer, limit)`` draws one input's table for people.
    render: str
    #: Its ``table_document`` takes ``whole``: it may keep only the rows the document shows, unless the
    #: whole table is wanted (``--out``).
    whole: bool = False


_AREAS = {
    "nsys": _Area("gpuopt.nsys", "gpuopt.cli._nsys_render", whole=True),
    "torch": _Area("gpuopt.torch_trace", "gpuopt.cli._torch_render"),
    "ncu": _Area("gpuopt.ncu", "gpuopt.cli._tables"),
    "sass": _Area("gpuopt.sass", "gpuopt.cli._sass_render"),
}


def _as_list(source: Any) -> list[Any]:
    """The command's input argument as a list of paths (``FILE...`` is a tuple; some take one path)."""
    return list(source) if isinstance(source, (list, tuple)) else [source]


def table_command(
    area: str,
    table: str,
    source: Any,
    *,
    limit: int,
    out: Path | None,
    workers: int | None = None,
    dask_scheduler: str | None = None,
    render: Callable[[Answer[Any], int], str] | None = None,
    **options: Any,
) -> Outcome:
    """``table`` of ``source`` (the command's input argument) through ``area``'s library, with the
    command's other options passed on by name; ``workers`` and ``dask_scheduler`` (the many-file options)
    become the library's ``readers``. ``render`` draws one input's answer instead of the area's
    ``render_table`` (several files are always the many-file table)."""
    from gpuopt.models.many import ManyTableData

    spec = _AREAS[area]
    if workers is not None:
        options["readers"] = readers(workers, dask_scheduler)
    if dask_scheduler is not None and not is_many(_as_list(source)):
        # One file is read here, not shipped to a cluster; the scheduler named is still checked, so a
        # bad address is its error rather than passing unnoticed.
        check_scheduler(dask_scheduler, options["readers"].dask_timeout_s)
    if spec.whole:
        options["whole"] = out is not None
    library = importlib.import_module(spec.library)
    answer: Answer[Any] = library.table_document(source, table, limit=limit, sort=current_sort(), **options)
    if isinstance(answer.data, ManyTableData):
        return answered(answer, lambda: render_many(answer, limit), out=out, schema=MANY_SCHEMA)
    draw: Callable[[Answer[Any], int], str] = render or importlib.import_module(spec.render).render_table
    return answered(answer, lambda: draw(answer, limit), out=out)
