"""Documents of the Nsight Compute area: what a report is and how its facts were read, and a collection."""

from __future__ import annotations

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.doctor import NvidiaIdentity, ToolIdentity
from gpuopt.models.envelope import FileIdentity
from gpuopt.models.table import TableData


class NcuToolInfo(Model):
    version: str | None = Field(description="ncu version that made the report, e.g. 2025.3.1.0")
    version_text: str | None = None
    version_source: str = Field(description="ncu-rep, session-csv or none (a CSV without its session page)")
    command_line: str | None = Field(default=None, description="The profiler command line the report records")


class NcuFactSource(Model):
    fact: str
    unit: str
    source: str | None = Field(description="The metric expression the fact was read from; null when absent")


class NcuRooflineCoverage(Model):
    precision: str
    available: bool
    missing_metrics: list[str]


class NcuProfilerOption(Model):
    value: str
    source: str = Field(description="command line, or ncu default when the command line does not set it")


class NcuReportInfo(Model):
    """What a report is, how it was read and where each fact comes from."""

    path: str
    source_format: str = Field(description="ncu-csv-raw, ncu-csv-details or ncu-rep")
    reader: str = Field(description="gpuopt-native-csv, ncu_report <version>, or ncu --import <version>")
    tool: NcuToolInfo
    launches: int
    kernels: int = Field(description="Distinct (kernel name, grid, block) groups")
    metrics: int
    devices: list[str]
    archs: list[str]
    unit_table: str
    alias_table: str
    alias_table_verified: bool = Field(
        description="True when the ncu version and every arch are ones the alias table was verified on"
    )
    alias_table_verified_on: list[str]
    fact_sources: list[NcuFactSource]
    clock_control: NcuProfilerOption | None = Field(
        description="--clock-control of the collection; base locks clocks: durations are not production ones"
    )
    cache_control: NcuProfilerOption | None = Field(
        description="--cache-control of the collection; all flushes caches before every replay pass"
    )
    roofline: list[NcuRooflineCoverage]
    rules: int
    sections: int
    instruction_mix_rows: int


class NcuSummary(Model):
    """``gpuopt ncu summary``: the report's description and its per-kernel aggregates."""

    report: NcuReportInfo
    kernels: TableData


class NcuCollection(Model):
    """``gpuopt ncu collect``: what was run, with what, on what, and what it produced."""

    out_dir: str
    report_path: str | None = Field(description="The .ncu-rep written, or null when ncu produced none")
    argv: list[str] = Field(description="The exact ncu command, as executed (no shell)")
    command_line: str = Field(description="argv joined with shell quoting, for a person to rerun")
    exit_code: int
    clock_control: str
    ncu: ToolIdentity
    gpus: NvidiaIdentity | None
    gpu_note: str | None = None
    stdout_path: str
    stderr_path: str
    files: list[FileIdentity] = Field(default_factory=list)
