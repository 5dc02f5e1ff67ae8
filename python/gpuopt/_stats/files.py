"""Sample files (JSON Lines or CSV) read by the engine, then compared or used for noise."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpuopt import _native
from gpuopt._stats.results import FileComparisonResult, NoiseResult
from gpuopt.models.stats import CompareOptions, FileComparison, FileNoise


def _read_options(
    column: str | None,
    key_column: str | None,
    case_column: str | None,
    order_column: str | None,
    block_column: str | None = None,
    resample_blocks: bool = False,
) -> bytes:
    fields: dict[str, Any] = {"column": column, "key_column": key_column, "case_column": case_column}
    fields |= {"order_column": order_column, "block_column": block_column}
    doc = {k: v for k, v in fields.items() if v is not None}
    if resample_blocks:
        doc["resample_blocks"] = True
    return json.dumps(doc).encode()


#: Columns that name the process, run or worker a row came from: read as blocks for the
#: ``dependent_samples_suspected`` check when no ``block_column`` is given.
BLOCK_LIKE_COLUMNS = ("block", "run", "run_id", "process", "pid", "worker", "session", "rank")


def compare_files(
    baseline: str | Path,
    candidate: str | Path,
    *,
    column: str | None = None,
    key_column: str | None = None,
    case_column: str | None = None,
    order_column: str | None = None,
    block_column: str | None = None,
    unpaired: bool = False,
    options: CompareOptions | None = None,
) -> FileComparisonResult:
    """Reads two JSON Lines or CSV sample files and compares them (see ``gpuopt stats compare --help``).

    Pairs match by ``key_column`` when given (rows sharing a key are one call's samples), else row i
    with row i. ``unpaired=True`` treats the files as independent samples. ``block_column`` names the
    block (process, run) of each row: the CI then resamples whole blocks (unpaired: each side's blocks on
    their own) and ``per_block`` gives each block's effect. Without it, a comparison whose files both
    hold a block-like column (:data:`BLOCK_LIKE_COLUMNS`) reports that column's per-block effects and
    warns ``dependent_samples_suspected`` when they disagree (unpaired: blocks of one side), and
    ``blocks_too_few`` when an unpaired side comes from one block.
    """
    from gpuopt._tables import to_polars

    opts = options or CompareOptions()

    def run(block: str | None, resample: bool) -> FileComparisonResult:
        doc, table = _native.stats_compare_files(
            str(baseline),
            str(candidate),
            _read_options(column, key_column, case_column, order_column, block, resample),
            opts.model_dump_json().encode(),
            unpaired,
        )
        parsed = FileComparison.model_validate_json(doc)
        return FileComparisonResult(result=parsed.comparison, pairs=to_polars(table), files=parsed.files)

    if block_column is not None:
        return run(block_column, True)
    result = run(None, False)
    if case_column is not None and not unpaired:
        return result
    # The block column must be in both files: each side's rows are read with it.
    candidate_columns = set(result.files[1].unmodeled_columns)
    unread = [
        c
        for c in result.files[0].unmodeled_columns
        if c.lower() in BLOCK_LIKE_COLUMNS and c in candidate_columns
    ]
    if not unread:
        return result
    diagnosed = run(unread[0], False)
    return FileComparisonResult(result=diagnosed.result, pairs=diagnosed.pairs, files=result.files)


def noise_file(
    path: str | Path,
    *,
    first_column: str = "a",
    second_column: str = "b",
    key_column: str | None = None,
    order_column: str | None = None,
    at: Sequence[int] = (),
    options: CompareOptions | None = None,
) -> NoiseResult:
    """Noise from one sample file holding both A/A values of each pair in two columns."""
    from gpuopt._tables import to_polars

    opts = options or CompareOptions()
    doc, table = _native.stats_noise_file(
        str(path),
        first_column,
        second_column,
        _read_options(None, key_column, None, order_column),
        opts.model_dump_json().encode(),
        [int(k) for k in at],
    )
    parsed = FileNoise.model_validate_json(doc)
    return NoiseResult(report=parsed.noise, pairs=to_polars(table), files=parsed.files)
