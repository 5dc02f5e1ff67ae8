"""Documents of the Nsight Compute area: what a report is and how its facts were read, and a collection."""

from __future__ import annotations

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.doctor import NvidiaIdentity, ToolIdentity
from gpuopt.models.table import TableData


class NcuToolInfo(Model):
    version: str | None = Field(description="ncu version that made the report, e.g. 2025.3.1.0")
    version_text: str | None = Field(
        default=None, description="The version as ncu printed it, when it differs from version"
    )
    version_source: str = Field(description="ncu-rep, session-csv or none (a CSV without its session page)")
    command_line: str | None = Field(default=None, description="The profiler command line the report records")


class NcuFactSource(Model):
    fact: str = Field(description="A fact column of ncu launches")
    unit: str = Field(description="Its base unit")
    source: str | None = Field(description="The metric expression the fact was read from; null when absent")


class NcuRooflineCoverage(Model):
    precision: str = Field(description="fp64, fp32, fp16 or a tensor_* path")
    available: bool = Field(description="True when the report carries every metric this precision needs")
    missing_metrics: list[str] = Field(description="The metrics it lacks")


class NcuProfilerOption(Model):
    value: str = Field(description="The option's value (none, base, all, ...)")
    source: str = Field(description="command line, or ncu default when the command line does not set it")


class NcuReportInfo(Model):
    """What a report is, how it was read and where each fact comes from."""

    path: str = Field(description="The report read")
    source_format: str = Field(description="ncu-csv-raw, ncu-csv-details or ncu-rep")
    reader: str = Field(description="gpuopt-native-csv, ncu_report <version>, or ncu --import <version>")
    tool: NcuToolInfo = Field(description="The ncu that made the report")
    launches: int = Field(description="Profiled launches")
    kernels: int = Field(description="Distinct (kernel name, grid, block) groups")
    metrics: int = Field(description="Distinct metrics in the report")
    devices: list[str] = Field(description="Device names of the launches")
    archs: list[str] = Field(description="SM architectures of the launches")
    unit_table: str = Field(description="Version of gpuopt's unit table used to convert values to base units")
    alias_table: str = Field(description="Version of gpuopt's alias table (which metric each fact reads)")
    alias_table_verified: bool = Field(
        description="True when the ncu version and every arch are ones the alias table was verified on"
    )
    alias_table_verified_on: list[str] = Field(
        description="ncu versions and archs the alias table was checked on"
    )
    fact_sources: list[NcuFactSource] = Field(
        description="For every fact: the metric it was read from, or null when absent"
    )
    clock_control: NcuProfilerOption | None = Field(
        description="--clock-control of the collection; base locks clocks: durations are not production ones"
    )
    cache_control: NcuProfilerOption | None = Field(
        description="--cache-control of the collection; all flushes caches before every replay pass"
    )
    roofline: list[NcuRooflineCoverage] = Field(
        description="Per precision: whether a roofline point can be computed"
    )
    rules: int = Field(description="Rule results in the report (ncu table rules)")
    sections: int = Field(description="Sections collected (ncu table sections)")
    instruction_mix_rows: int = Field(description="Rows of the instruction mix (ncu table instruction_mix)")


class NcuSummary(Model):
    """``gpuopt ncu summary``: the report's description and its per-kernel aggregates."""

    report: NcuReportInfo = Field(description="What the report is and how its facts were read")
    kernels: TableData = Field(description="Per (kernel, grid, block) aggregates (gpuopt schema ncu.kernels)")


class WrittenFile(Model):
    """A file ``gpuopt ncu collect`` wrote, named by SHA-256 in its record (the record is kept beside the
    report and read again later, so its form stays the one it was first written in)."""

    path: str = Field(description="The file's path")
    size_bytes: int = Field(description="Size of the file as written (bytes)")
    sha256: str = Field(description="SHA-256 of its content")
    from_cache: bool = Field(default=False, description="Always false: hashed when it was written")


class NcuCollection(Model):
    """``gpuopt ncu collect``: what was run, with what, on what, and what it produced."""

    out_dir: str = Field(description="The folder written")
    report_path: str | None = Field(description="The .ncu-rep written, or null when ncu produced none")
    argv: list[str] = Field(description="The exact ncu command, as executed (no shell)")
    command_line: str = Field(description="argv joined with shell quoting, for a person to rerun")
    exit_code: int = Field(description="ncu's exit code")
    clock_control: str = Field(description="--clock-control passed to ncu (none or base)")
    ncu: ToolIdentity = Field(description="The ncu executable: path, version, sha256")
    gpus: NvidiaIdentity | None = Field(description="The GPUs from NVML or nvidia-smi; null when unreadable")
    gpu_note: str | None = Field(default=None, description="Why gpus is null, when it is")
    stdout_path: str = Field(description="ncu's stdout, saved")
    stderr_path: str = Field(description="ncu's stderr, saved")
    files: list[WrittenFile] = Field(default_factory=list, description="Identities of the files written")
