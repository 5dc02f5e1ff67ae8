"""What a comparison or a noise run returns: the pydantic result and its table as a polars DataFrame."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuopt.models.stats import Comparison, NoiseReport, SampleFileFacts

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class ComparisonResult:
    """A comparison and its table: one row per pair (paired) or per call of each side (unpaired)."""

    result: Comparison
    pairs: pl.DataFrame


@dataclass(frozen=True)
class FileComparisonResult(ComparisonResult):
    """A comparison of two sample files, with what was read from each."""

    files: list[SampleFileFacts]


@dataclass(frozen=True)
class NoiseResult:
    """A/A noise facts and the A/A pairs."""

    report: NoiseReport
    pairs: pl.DataFrame
    files: list[SampleFileFacts]
