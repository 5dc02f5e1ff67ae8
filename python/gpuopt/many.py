"""Many reports at once: one per-file table function over many files, into one table keyed by ``file``.

>>> from functools import partial
>>> from gpuopt import many, nsys
>>> results = many.map_files(partial(nsys.table, fact="kernels"), many.expand(["runs/*.sqlite"]), workers=4)
>>> many.combine(results)            # file, error_code, error, then the table's own columns

Files are read in parallel **in this process** by ``workers`` threads: the native engines release the
GIL, so threads run on separate cores, and each worker holds one report open at a time (what it keeps
is the finished table, not the report), which bounds memory per worker. With ``scheduler`` (a Dask
scheduler address) the same per-file function runs on a ``dask.distributed`` cluster instead (the
``dask`` extra); the function must then be picklable (a module-level function or a
:func:`functools.partial` of one).

A file that fails becomes a row with its typed error (``error_code``, ``error``) and nulls elsewhere; the
others still count.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuopt.errors import GpuoptError, InputError, ToolAbsentError

if TYPE_CHECKING:
    import polars as pl

__all__ = ["FileResult", "combine", "expand", "is_pattern", "map_files", "read_one"]

_GLOB_CHARS = frozenset("*?[")

TableFn = Callable[[Path], "pl.DataFrame"]


@dataclass(frozen=True)
class FileResult:
    """One file's table, or the typed error that stopped it."""

    file: str
    frame: pl.DataFrame | None
    error: dict[str, Any] | None


def is_pattern(arg: str | Path) -> bool:
    """Whether a command-line argument is a glob pattern (``*``, ``?`` or ``[``) rather than a path."""
    return any(c in _GLOB_CHARS for c in str(arg)) and not Path(arg).exists()


def expand(args: Sequence[str | Path]) -> list[Path]:
    """Paths and glob patterns (``runs/*.sqlite``, ``**`` recursive) -> files, in the order given, each
    pattern's matches sorted. A pattern that matches nothing is an input error (exit 2)."""
    out: list[Path] = []
    for arg in args:
        if not is_pattern(arg):
            out.append(Path(arg))
            continue
        matches = sorted(glob.glob(str(arg), recursive=True))
        if not matches:
            raise InputError("files_none_match", f"no file matches {str(arg)!r}", path=str(arg))
        out.extend(Path(m) for m in matches)
    return out


def read_one(fn: TableFn, path: Path) -> FileResult:
    """``fn(path)``, with a failure kept as the file's typed error (an unexpected exception becomes
    ``internal_error``) instead of stopping the other files."""
    try:
        return FileResult(str(path), fn(path), None)
    except GpuoptError as exc:
        return FileResult(str(path), None, exc.to_dict())
    except Exception as exc:  # a defect reading one file must not lose the others' tables
        return FileResult(
            str(path), None, {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}"}
        )


def map_files(
    fn: TableFn, paths: Sequence[Path], *, workers: int = 1, scheduler: str | None = None
) -> list[FileResult]:
    """``fn`` over every path, in the order given: in ``workers`` threads, or on the Dask cluster at
    ``scheduler`` (needs the ``dask`` extra; exit 3 without it)."""
    if scheduler is not None:
        return _on_dask(fn, paths, scheduler)
    if workers <= 1 or len(paths) <= 1:
        return [read_one(fn, p) for p in paths]
    from concurrent.futures import ThreadPoolExecutor  # only when files are read on threads

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gpuopt-file") as pool:
        return list(pool.map(lambda p: read_one(fn, p), paths))


def _on_dask(fn: TableFn, paths: Sequence[Path], scheduler: str) -> list[FileResult]:
    try:
        import distributed
    except ImportError as exc:
        raise ToolAbsentError(
            "dask_absent",
            "--dask-scheduler needs dask.distributed",
            expected="pip install 'gpuopt[dask]'",
        ) from exc
    connect: Any = distributed.Client  # untyped library: its calls are kept to these few lines
    try:
        client: Any = connect(scheduler, set_as_default=False, timeout=30)
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(
            "dask_scheduler_unreachable",
            f"cannot connect to the Dask scheduler at {scheduler}: {exc}",
            expected="a running dask scheduler address, e.g. tcp://host:8786",
        ) from exc
    try:
        futures = client.map(read_one, [fn] * len(paths), list(paths), pure=False)
        results: list[FileResult] = client.gather(futures)
        return results
    finally:
        client.close()


def combine(results: Sequence[FileResult]) -> pl.DataFrame:
    """One table: ``file``, ``error_code``, ``error`` (null for files read), then every file's columns
    (a column some files lack is null in their rows); a failed file is one row of nulls and its error."""
    import polars as pl

    frames: list[pl.DataFrame] = []
    for r in results:
        head = {
            "file": pl.lit(r.file, dtype=pl.String),
            "error_code": pl.lit(r.error["code"] if r.error else None, dtype=pl.String),
            "error": pl.lit(r.error["message"] if r.error else None, dtype=pl.String),
        }
        if r.frame is not None:
            frames.append(r.frame.select(*(v.alias(k) for k, v in head.items()), pl.all()))
        else:
            frames.append(pl.select(*(v.alias(k) for k, v in head.items())))
    if not frames:
        return pl.DataFrame(schema={"file": pl.String, "error_code": pl.String, "error": pl.String})
    return pl.concat(frames, how="diagonal_relaxed")
