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

:func:`table_document` is the whole of a many-file table command (``gpuopt nsys kernels 'runs/*.sqlite'``):
the files read by :class:`Readers`, combined, in ``sort`` order, as the ``gpuopt.many.table/v1`` document;
the area modules call it when given several files (``gpuopt.nsys.table_document(["a.sqlite", "b.sqlite"],
"kernels")``).
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuopt._columns import Column
from gpuopt.errors import AbsentError, GpuoptError, InputError, ToolAbsentError

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.models.many import ManyTableData

__all__ = [
    "DASK_TIMEOUT_S",
    "FileResult",
    "Readers",
    "combine",
    "expand",
    "is_many",
    "is_pattern",
    "map_files",
    "read_one",
    "shown_name",
    "table_document",
]

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


def is_many(args: Sequence[str | Path]) -> bool:
    """Whether arguments name several files (more than one, or a glob pattern): one table keyed by file."""
    return len(args) > 1 or any(is_pattern(a) for a in args)


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
    _refuse_a_file_twice(out)
    return out


def _refuse_a_file_twice(paths: Sequence[Path]) -> None:
    """``files_duplicate`` for a file named twice (by a glob and by name, a link, another spelling): its
    rows came twice under one key, and every sum over the table counted it twice."""
    from gpuopt._files import file_key

    seen: dict[tuple[int, int], Path] = {}
    for path in paths:
        key = file_key(path)
        if key is None:  # missing, unreadable or not a file: its own error row
            continue
        if key in seen:
            first = seen[key]
            raise InputError(
                "files_duplicate",
                f"{path} is {'named twice' if str(first) == str(path) else f'the same file as {first}'}: "
                "each file once (a glob and a name can both match it)",
                path=str(path),
                expected="each file once",
                observed=f"{first} and {path}",
            )
        seen[key] = path


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


DASK_TIMEOUT_S = 5.0
"""How long a Dask scheduler has to answer (connect, handshake, identity) before it counts as absent."""


@dataclass(frozen=True)
class Readers:
    """Who reads the files: ``workers`` threads here, or the Dask cluster at ``scheduler``."""

    workers: int = 1
    scheduler: str | None = None
    dask_timeout_s: float = DASK_TIMEOUT_S


def map_files(
    fn: TableFn,
    paths: Sequence[Path],
    *,
    workers: int = 1,
    scheduler: str | None = None,
    dask_timeout_s: float = DASK_TIMEOUT_S,
) -> list[FileResult]:
    """``fn`` over every path, in the order given: in ``workers`` threads, or on the Dask cluster at
    ``scheduler`` (needs the ``dask`` extra; exit 3 without it, or when no scheduler with workers answers
    there within ``dask_timeout_s``; a malformed address is exit 2)."""
    if scheduler is not None:
        return _on_dask(fn, paths, scheduler, dask_timeout_s)
    if workers <= 1 or len(paths) <= 1:
        return [read_one(fn, p) for p in paths]
    from concurrent.futures import ThreadPoolExecutor  # only when files are read on threads

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gpuopt-file") as pool:
        return list(pool.map(lambda p: read_one(fn, p), paths))


def _on_dask(fn: TableFn, paths: Sequence[Path], scheduler: str, timeout_s: float) -> list[FileResult]:
    check_scheduler(scheduler, timeout_s)  # dask_absent first when dask.distributed is not installed
    import distributed

    connect: Any = distributed.Client  # untyped library: its calls are kept to these few lines
    try:
        client: Any = connect(scheduler, set_as_default=False, timeout=timeout_s)
    except Exception as exc:  # the probe answered, so this is a scheduler that went away meanwhile
        why = f"the client could not connect ({type(exc).__name__})"
        raise _unreachable(scheduler, timeout_s, why) from None
    try:
        if not client.nthreads():
            raise AbsentError(
                "dask_cluster_no_workers",
                f"the Dask scheduler at {scheduler} has no workers: the files would wait forever",
                path=scheduler,
                expected="a scheduler with at least one worker",
                observed="0 workers",
            )
        futures = client.map(read_one, [fn] * len(paths), list(paths), pure=False)
        results: list[FileResult] = client.gather(futures)
        return results
    finally:
        client.close(timeout=timeout_s)


def check_scheduler(scheduler: str, timeout_s: float = DASK_TIMEOUT_S) -> None:
    """The scheduler's address is one Dask can dial (else exit 2) and a scheduler answers there within
    ``timeout_s`` (else exit 3); ``dask_absent`` (exit 3) without dask.distributed."""
    try:
        import distributed  # noqa: F401  (the address check below uses its parts)
    except ImportError as exc:
        raise ToolAbsentError(
            "dask_absent",
            "--dask-scheduler needs dask.distributed",
            expected="pip install 'gpuopt[dask]'",
        ) from exc
    _check_address(scheduler)
    _refused_at_once(scheduler, timeout_s)
    _probe(scheduler, timeout_s)


def _refused_at_once(scheduler: str, timeout_s: float) -> None:
    """A TCP address whose port refuses is unreachable now: Dask's connect retries a refusal until its
    timeout (6 s for the default 5 s), where nothing can change."""
    import socket

    from distributed.comm.addressing import get_address_host_port, parse_address

    if parse_address(scheduler, strict=False)[0] != "tcp":
        return
    host, port = get_address_host_port(scheduler)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except ConnectionRefusedError:
        raise _unreachable(scheduler, timeout_s, "the connection was refused") from None
    except TimeoutError:  # socket.timeout: nothing answered the connect in the whole time allowed
        raise _unreachable(scheduler, timeout_s, "nothing answered") from None
    except OSError:  # unreachable network, a name not found: the probe says which, within the timeout
        return


def _check_address(scheduler: str) -> None:
    """``dask_scheduler_invalid`` (exit 2) unless ``scheduler`` is an address Dask can dial."""
    from distributed.comm.addressing import get_address_host_port, parse_address
    from distributed.comm.registry import backends

    problem = None
    try:
        scheme, _ = parse_address(scheduler, strict=False)
        if scheme not in backends:
            problem = f"unknown scheme {scheme}://"
        elif scheme != "inproc":
            _, port = get_address_host_port(scheduler)
            if not 0 < port < 65536:
                problem = "a port outside 1..65535"
    except (ValueError, TypeError):
        problem = "no host:port"
    if problem is not None:
        raise InputError(
            "dask_scheduler_invalid",
            f"{scheduler!r} is not a Dask scheduler address: {problem}",
            path="--dask-scheduler",
            expected=f"SCHEME://HOST:PORT with SCHEME one of {', '.join(sorted(backends))}, e.g. tcp://host:8786",
        )


def _probe(scheduler: str, timeout_s: float) -> None:
    """One ``identity`` round trip to the scheduler, all of it within ``timeout_s``: a peer that is closed,
    silent or not a Dask scheduler is ``dask_scheduler_unreachable`` before ``distributed.Client`` sees it
    (its handshake waits forever on a silent peer, and its finalizer another 2 x timeout)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import core

    connect: Any = core.connect  # untyped library, as above

    async def identity() -> Any:
        comm = await connect(scheduler, timeout=timeout_s)
        try:
            await comm.write({"op": "identity"})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded() -> Any:
        return await asyncio.wait_for(identity(), timeout_s)

    # A thread of its own: asyncio.run needs a thread without a running loop (a notebook's has one).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpuopt-dask-probe") as pool:
        try:
            reply = pool.submit(asyncio.run, bounded()).result()
        except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11 on
            raise _unreachable(scheduler, timeout_s, "nothing answered") from None
        except OSError as exc:
            raise _unreachable(scheduler, timeout_s, f"cannot connect ({exc})") from None
        except Exception:  # garbage on the wire: a length prefix that asks for exabytes, a bad frame, ...
            reply = None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise _unreachable(scheduler, timeout_s, "the peer did not answer as a Dask scheduler")


def _unreachable(scheduler: str, timeout_s: float, why: str) -> AbsentError:
    return AbsentError(
        "dask_scheduler_unreachable",
        f"no Dask scheduler at {scheduler} within {timeout_s:g} s: {why}",
        path=scheduler,
        expected="a running Dask scheduler (dask scheduler; tcp://host:8786); --dask-timeout to wait longer",
    )


def shown_name(text: str) -> str:
    """A file name (or a message naming one) as a table holds it: text is UTF-8, so each byte of a name
    that is not UTF-8 (a lone surrogate in Python) is written ``\\xNN``, as the JSON envelope writes it."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


KEY_COLUMNS: tuple[Column, ...] = (
    Column(
        "file",
        "String",
        "none",
        "The file (or folder) this row comes from, when several files or a glob were read",
    ),
    Column(
        "error_code",
        "String",
        "none",
        "The typed error code when this file could not be read (its only row); null otherwise",
    ),
    Column("error", "String", "none", "That error's message; null otherwise"),
)
"""The key columns :func:`combine` puts before every table when several files are read at once."""


def combine(results: Sequence[FileResult]) -> pl.DataFrame:
    """One table: ``file``, ``error_code``, ``error`` (null for files read), then every file's columns
    (a column some files lack is null in their rows); a failed file is one row of nulls and its error. A
    file name that is not UTF-8 is keyed by :func:`shown_name`."""
    import polars as pl

    frames: list[pl.DataFrame] = []
    for r in results:
        file, code, error = (c.name for c in KEY_COLUMNS)
        head = {
            file: pl.lit(shown_name(r.file), dtype=pl.String),
            code: pl.lit(r.error["code"] if r.error else None, dtype=pl.String),
            error: pl.lit(shown_name(r.error["message"]) if r.error else None, dtype=pl.String),
        }
        if r.frame is not None:
            frames.append(r.frame.select(*(v.alias(k) for k, v in head.items()), pl.all()))
        else:
            frames.append(pl.select(*(v.alias(k) for k, v in head.items())))
    if not frames:
        return pl.DataFrame(schema={c.name: pl.String for c in KEY_COLUMNS})
    return pl.concat(frames, how="diagonal_relaxed")


def table_document(
    name: str,
    files: Sequence[str | Path],
    read: TableFn,
    *,
    readers: Readers | None = None,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[ManyTableData]:
    """``read`` over every file (glob patterns expanded) as one table keyed by ``file``, in ``sort`` order
    (``COLUMN[:asc]``), its first ``limit`` rows (0: all) in the document. The answer is a failure
    (``files_all_failed``) only when every file failed; each failed file's row carries its error."""
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.answer import Answer
    from gpuopt.models.many import ManyTableData
    from gpuopt.provenance import file_identity

    readers = readers or Readers()
    paths = expand(files)
    results = map_files(
        read,
        paths,
        workers=readers.workers,
        scheduler=readers.scheduler,
        dask_timeout_s=readers.dask_timeout_s,
    )
    frame = sorted_by(combine(results), sort)
    failed = sum(1 for r in results if r.error is not None)
    data = ManyTableData(
        report=name,
        files=len(results),
        failed=failed,
        workers=readers.workers,
        dask_scheduler=readers.scheduler,
        table=table_data(name, frame, limit),
    )
    failure = None
    if results and failed == len(results):
        failure = InputError(
            "files_all_failed",
            f"every one of the {failed} files failed (each row carries its error)",
            observed=", ".join(sorted({str(r.error["code"]) for r in results if r.error})),
        )
    inputs = [file_identity(Path(r.file)) for r in results if r.error is None and Path(r.file).is_file()]
    return Answer(data, inputs, tables={name: frame}, failure=failure)
