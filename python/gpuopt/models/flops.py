"""Documents of ``gpuopt torch flops`` and the datasheet peak table (``gpuopt.flops``)."""

from __future__ import annotations

from pydantic import Field

from gpuopt.models._base import Model
from gpuopt.models.table import TableData


class GpuPeaks(Model):
    """One row of the datasheet peak table (``rust/src/peaks/gpu_peaks.json``): dense TFLOP/s, GB/s."""

    key: str = Field(description="The row's key (--gpu KEY)")
    label: str = Field(description="The GPU model and form factor")
    device_names: list[str] = Field(description="Device names (as CUDA reports them) matched exactly")
    fp64: float | None = Field(description="FP64 TFLOP/s (null: not in the datasheet)")
    fp64_tensor: float | None = Field(description="FP64 Tensor Core TFLOP/s")
    fp32: float | None = Field(description="FP32 TFLOP/s")
    tf32_tensor: float | None = Field(description="TF32 Tensor Core TFLOP/s, dense")
    bf16_tensor: float | None = Field(description="BF16 Tensor Core TFLOP/s, dense")
    fp16_tensor: float | None = Field(description="FP16 Tensor Core TFLOP/s, dense")
    fp8_tensor: float | None = Field(description="FP8 Tensor Core TFLOP/s, dense")
    memory_gb_per_s: float = Field(description="GPU memory bandwidth (GB/s, decimal)")
    source: str = Field(description="The NVIDIA document the numbers come from")
    date: str = Field(description="The document's date")


class GpuChoice(Model):
    """Which datasheet row a trace's peaks come from, and how it was chosen."""

    rank: int = Field(description="The trace's rank")
    device_names: list[str] = Field(description="Device names in the trace's deviceProperties")
    key: str | None = Field(description="The datasheet row used; null: no peak and no % of peak")
    label: str | None = Field(description="The row's GPU model")
    source: str | None = Field(description="The row's NVIDIA document")
    date: str | None = Field(description="The document's date")
    how: str = Field(description="device_name (matched exactly), --gpu, or why no row was chosen")


class TorchFlopsData(Model):
    """``gpuopt torch flops``: per-op FLOPs, bytes and rates, per-step MFU, the peaks used."""

    table: TableData = Field(description="Per op, shape and counted flag (gpuopt schema torch.flops)")
    steps: TableData = Field(description="Per ProfilerStep (gpuopt schema torch.flops_steps)")
    gpus: list[GpuChoice] = Field(description="The datasheet row chosen per rank")
    scope: str | None = Field(
        default=None, description="'steps FIRST:LAST' or 'window START:END' when restricted; null otherwise"
    )


class PerfettoExport(Model):
    """``gpuopt nsys|torch export perfetto``: the file written and what it holds."""

    out: str = Field(description="The Perfetto trace written (protobuf TracePacket stream)")
    format: str = Field(description="perfetto-protobuf (perfetto.protos.Trace)")
    packets: int = Field(description="TracePackets written")
    tracks: int = Field(description="Tracks (TrackDescriptor packets)")
    slices: int = Field(description="Slices (begin/end track event pairs)")
    instants: int = Field(description="Instant events")
    counters: int = Field(description="Counter values")
    flows: int = Field(description="Flows from a launching call to its first GPU operation")
    bytes: int = Field(description="Size of the file written (bytes)")
    fact_tracks: list[str] = Field(description="gpuopt's fact tracks asked for besides the built-in ones")
    flagged_keys: int = Field(description="Keys of the profile diff given (--diff) that it flagged")
