//! FLOPs and bytes of one op from its recorded shapes (`record_shapes`), by formula. An op whose
//! name has no formula, or whose shapes the formula cannot read, is `unmodeled` with the reason:
//! never a guess. The formulas and conventions are those of `references/flops.md`.
//!
//! Bytes are the least traffic the op must make: every tensor argument read once and every output
//! written once (what a perfect cache would leave), not what the kernels measured.
//!
//! One job per file, bottom up: `work` (the answer), `shapes` (the shared arithmetic), then the
//! formulas by kind of work (`matrix`, `conv`, `attention`, `elementwise`); this file names the ops
//! and sends each to its formula.

mod attention;
mod conv;
mod elementwise;
mod matrix;
mod shapes;
mod work;

use super::args::Arg;
use attention::{attention, attention_backward, Layout};
use conv::{conv, conv_cudnn};
use elementwise::{copy, elementwise, fill, norm, reduce};
use matrix::{batched, dot, gemm, linear, matmul, mv, scaled_mm};
use work::Formula;

pub use elementwise::promote;
pub use shapes::broadcast;
pub use work::{Class, Model};

const VIEWS: &[&str] = &[
    "view",
    "reshape",
    "_unsafe_view",
    "_reshape_alias",
    "as_strided",
    "transpose",
    "t",
    "permute",
    "expand",
    "expand_as",
    "slice",
    "select",
    "narrow",
    "unsqueeze",
    "squeeze",
    "flatten",
    "unflatten",
    "split",
    "split_with_sizes",
    "chunk",
    "unbind",
    "detach",
    "detach_",
    "alias",
    "lift_fresh",
    "view_as",
    "movedim",
    "diagonal",
    "empty",
    "empty_like",
    "empty_strided",
    "resize_",
    "result_type",
];

const COMPOSITES: &[&str] = &["to", "_to_copy", "clone", "contiguous", "type_as"];

const UNARY: &[&str] = &[
    "abs",
    "neg",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sigmoid",
    "tanh",
    "relu",
    "gelu",
    "silu",
    "sin",
    "cos",
    "erf",
    "sign",
    "sgn",
    "floor",
    "ceil",
    "round",
    "trunc",
    "square",
    "hardtanh",
    "leaky_relu",
    "elu",
    "hardswish",
    "hardsigmoid",
    "mish",
    "softplus",
    "clamp",
    "clamp_min",
    "clamp_max",
    "nan_to_num",
    "threshold",
];

const BINARY: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "rsub",
    "pow",
    "maximum",
    "minimum",
    "remainder",
    "fmod",
    "atan2",
    "where",
    "lerp",
    "addcmul",
    "addcdiv",
    "masked_fill",
    "copysign",
    "hypot",
    "xlogy",
    "floor_divide",
];

const COMPARE: &[&str] = &[
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_not",
    "isnan",
    "isinf",
];

/// The model of `name` (as the trace spells it) with these arguments (`None`: no shapes recorded).
pub fn model(name: &str, args: Option<&[Arg]>, unread: &'static str) -> Model {
    let Some(op) = name.strip_prefix("aten::") else {
        return Model::unmodeled("not an aten op: no formula");
    };
    if VIEWS.contains(&op) {
        return Model::none(Class::View);
    }
    if COMPOSITES.contains(&op) {
        return Model::none(Class::Composite);
    }
    let Some(args) = args else {
        return Model::unmodeled(unread);
    };
    formula(op, args).unwrap_or_else(Model::unmodeled)
}

fn formula(op: &str, a: &[Arg]) -> Formula {
    let base = op.strip_suffix('_').unwrap_or(op);
    match op {
        "mm" => gemm(a, 0, 1, &[]),
        "addmm" => gemm(a, 1, 2, &[0]),
        "bmm" => batched(a, 0, 1, &[]),
        "baddbmm" => batched(a, 1, 2, &[0]),
        "linear" => linear(a),
        "matmul" => matmul(a),
        "mv" => mv(a, 0, 1, &[]),
        "addmv" => mv(a, 1, 2, &[0]),
        "dot" | "vdot" => dot(a),
        "_scaled_mm" => scaled_mm(a),
        "convolution" | "_convolution" => conv(a, 3, 4, 5, Some(6), 8),
        "conv1d" | "conv2d" | "conv3d" => conv(a, 3, 4, 5, None, 6),
        "cudnn_convolution" => conv_cudnn(a),
        "scaled_dot_product_attention"
        | "_scaled_dot_product_efficient_attention"
        | "_scaled_dot_product_cudnn_attention"
        | "_cudnn_attention_forward" => attention(a, Layout::Bhle, Some(3)),
        "_scaled_dot_product_flash_attention"
        | "_scaled_dot_product_flash_attention_for_cpu"
        | "_scaled_dot_product_fused_attention_overrideable" => attention(a, Layout::Bhle, None),
        "_flash_attention_forward" => attention(a, Layout::Blhe, None),
        "_efficient_attention_forward" => attention(a, Layout::Blhe, Some(3)),
        "_scaled_dot_product_flash_attention_backward"
        | "_scaled_dot_product_efficient_attention_backward"
        | "_scaled_dot_product_cudnn_attention_backward" => attention_backward(a),
        "layer_norm" | "native_layer_norm" => norm(a, 5, true),
        "rms_norm" | "_fused_rms_norm" => norm(a, 3, false),
        "copy_" => copy(a),
        "fill_" | "zero_" => fill(a),
        "sum" | "mean" | "amax" | "amin" => reduce(a, op, false),
        "argmax" | "argmin" => reduce(a, op, true),
        _ if COMPARE.contains(&base) => elementwise(a, op, true),
        _ if UNARY.contains(&base) || BINARY.contains(&base) => elementwise(a, op, false),
        _ => Err("no formula for this op"),
    }
}

#[cfg(test)]
mod tests;
