//! The columns of the FLOPs tables (`torch.flops`, `torch.flops_steps`), declared once (see
//! `crate::column`); `Rows::into_table` of `flops` and of `steps` build exactly these.

use crate::column::{Column, Declared, Dtype, Unit};
use crate::torch_trace::fields::RANK;

const GPU_TIME_NS: Column = Column::int(
    "gpu_time_ns",
    Unit::Ns,
    "Summed duration of those events (ns)",
);

/// `torch.flops`
pub const OPS: &[Column] = &[
    RANK,
    Column::text("name", "cpu_op name"),
    Column::text(
        "class",
        "Formula: gemm, conv, attention, attention_backward, elementwise, reduction, norm, copy, \
         fill; view/composite (no work of their own); unmodeled (no formula: see note)",
    ),
    Column::text(
        "precision",
        "Element type the work is done in (bf16, fp16, fp8, fp32, fp64, int, complex)",
    ),
    Column::text("input_dims", "The op's Input Dims as recorded (JSON)"),
    Column::text("input_types", "The op's Input type as recorded (JSON)"),
    Column::flag(
        "counted",
        "True when no enclosing op has a formula: counted rows add up to the trace's FLOPs \
         (aten::linear is counted, the aten::mm inside it is not)",
    ),
    Column::int(
        "instances",
        Unit::Count,
        "Instances with this op name, shapes and counted flag",
    ),
    Column::int(
        "flop",
        Unit::Flop,
        "FLOPs of one instance from the shapes (GEMMs 2·M·N·K); null when unmodeled",
    ),
    Column::int(
        "bytes",
        Unit::Bytes,
        "Least bytes one instance moves: every tensor argument read once, every output written once",
    ),
    Column::new("total_flop", Dtype::Float64, Unit::Flop, "flop x instances"),
    Column::float("total_bytes", Unit::Bytes, "bytes x instances"),
    Column::int(
        "gpu_events",
        Unit::Count,
        "GPU events the instances launched, nested ops' included",
    ),
    GPU_TIME_NS,
    Column::float(
        "achieved_tflop_per_s",
        Unit::TflopPerS,
        "total_flop / gpu_time_ns (TFLOP/s)",
    ),
    Column::float(
        "achieved_gb_per_s",
        Unit::Gbps,
        "total_bytes / gpu_time_ns (GB/s, decimal)",
    ),
    Column::float(
        "arithmetic_intensity_flop_per_byte",
        Unit::FlopPerByte,
        "flop / bytes",
    ),
    Column::text(
        "peak",
        "The datasheet column compared with: bf16_tensor, fp16_tensor, fp8_tensor, fp64_tensor \
         (matrix work), fp32, fp64; null when the datasheet has none for this precision",
    ),
    Column::float(
        "peak_tflop_per_s",
        Unit::TflopPerS,
        "That peak (TFLOP/s, dense)",
    ),
    Column::float(
        "flop_pct_of_peak",
        Unit::Pct,
        "achieved_tflop_per_s / peak_tflop_per_s (%)",
    ),
    Column::float(
        "peak_gb_per_s",
        Unit::Gbps,
        "The GPU's datasheet memory bandwidth (GB/s)",
    ),
    Column::float(
        "bandwidth_pct_of_peak",
        Unit::Pct,
        "achieved_gb_per_s / peak_gb_per_s (%)",
    ),
    Column::text(
        "note",
        "Why the row is unmodeled, what its bytes leave out, or that its rate is above the GPU's peak (its shapes or GPU time are then wrong)",
    ),
];

/// `torch.flops_steps`
pub const STEPS: &[Column] = &[
    RANK,
    Column::text(
        "step",
        "ProfilerStep#N (or (trace) for a trace without steps)",
    ),
    Column::int(
        "start_ns",
        Unit::Ns,
        "Step start (ns from the trace origin)",
    ),
    Column::int(
        "duration_ns",
        Unit::Ns,
        "Step duration on the host (ns)",
    ),
    Column::float(
        "model_flop",
        Unit::Flop,
        "FLOPs of the counted GEMM, convolution and attention ops that start in the step (any \
         thread of its process)",
    ),
    Column::float(
        "total_flop",
        Unit::Flop,
        "FLOPs of every counted op that starts in the step",
    ),
    Column::float(
        "model_tflop_per_s",
        Unit::TflopPerS,
        "model_flop / duration_ns (TFLOP/s)",
    ),
    Column::float(
        "mfu_pct",
        Unit::Pct,
        "Model FLOPs utilisation: sum over precisions of model_flop / (duration x the dense \
         datasheet peak of that precision) (%); null when a precision has no peak or no GPU row was \
         chosen",
    ),
    Column::text(
        "peak_basis",
        "The precisions of the model FLOPs and the datasheet column each was compared with",
    ),
    Column::int(
        "counted_gpu_time_ns",
        Unit::Ns,
        "GPU time launched by the counted ops of the step (ns)",
    ),
    GPU_TIME_NS.meaning("GPU time launched by every runtime call that starts in the step (ns)"),
];

/// The FLOPs tables, by their `gpuopt schema` keys.
pub fn tables() -> Vec<Declared> {
    vec![
        Declared::new("torch.flops", OPS),
        Declared::new("torch.flops_steps", STEPS),
    ]
}
