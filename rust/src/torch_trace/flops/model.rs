//! FLOPs and bytes of one op from its recorded shapes (`record_shapes`), by formula. An op whose
//! name has no formula, or whose shapes the formula cannot read, is `unmodeled` with the reason:
//! never a guess. The formulas and conventions are those of `references/flops.md`.
//!
//! Bytes are the least traffic the op must make: every tensor argument read once and every output
//! written once (what a perfect cache would leave), not what the kernels measured.

use super::args::{flag, int_list, numel, Arg, DType, Precision};

/// What kind of work an op is, for its formula and the peak it is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Gemm,
    Conv,
    Attention,
    AttentionBackward,
    Elementwise,
    Reduction,
    Norm,
    Copy,
    Fill,
    /// Views, reshapes and allocations: no kernel, no work.
    View,
    /// Ops whose work is done by the ops they call (`aten::to`, `aten::clone`, ...).
    Composite,
    Unmodeled,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Gemm => "gemm",
            Class::Conv => "conv",
            Class::Attention => "attention",
            Class::AttentionBackward => "attention_backward",
            Class::Elementwise => "elementwise",
            Class::Reduction => "reduction",
            Class::Norm => "norm",
            Class::Copy => "copy",
            Class::Fill => "fill",
            Class::View => "view",
            Class::Composite => "composite",
            Class::Unmodeled => "unmodeled",
        }
    }

    /// Whether the op has a work formula of its own (it then hides the ops inside it from totals).
    pub fn has_work(self) -> bool {
        !matches!(self, Class::View | Class::Composite | Class::Unmodeled)
    }

    /// Matrix work (tensor cores where the dtype allows): what model FLOPs and MFU count.
    pub fn is_matrix(self) -> bool {
        matches!(
            self,
            Class::Gemm | Class::Conv | Class::Attention | Class::AttentionBackward
        )
    }
}

/// The formula's answer for one op and shape record.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub class: Class,
    pub precision: Option<Precision>,
    pub flop: Option<u64>,
    pub bytes: Option<u64>,
    /// Why the op is unmodeled (with `Class::Unmodeled`), or what its bytes leave out.
    pub reason: Option<&'static str>,
}

type Formula = Result<Model, &'static str>;

impl Model {
    pub fn unmodeled(reason: &'static str) -> Model {
        Model {
            class: Class::Unmodeled,
            precision: None,
            flop: None,
            bytes: None,
            reason: Some(reason),
        }
    }

    fn none(class: Class) -> Model {
        let zero = (class == Class::View).then_some(0);
        Model {
            class,
            precision: None,
            flop: zero,
            bytes: zero,
            reason: None,
        }
    }
}

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

fn tensor(a: &[Arg], i: usize) -> Result<(&[u64], DType), &'static str> {
    a.get(i)
        .and_then(Arg::tensor)
        .ok_or("an input the formula needs is not a tensor with a known dtype")
}

fn mul(values: &[u64]) -> Result<u64, &'static str> {
    values
        .iter()
        .try_fold(1_u64, |acc, &v| acc.checked_mul(v))
        .ok_or("the count overflows 64 bits")
}

fn add(values: &[u64]) -> Result<u64, &'static str> {
    values
        .iter()
        .try_fold(0_u64, |acc, &v| acc.checked_add(v))
        .ok_or("the count overflows 64 bits")
}

fn size(dims: &[u64], dtype: DType) -> Result<u64, &'static str> {
    let n = numel(dims).ok_or("the count overflows 64 bits")?;
    mul(&[n, dtype.bytes])
}

/// Bytes of the optional tensors at `extra` (a bias, a mask): 0 where there is none.
fn extra_bytes(a: &[Arg], extra: &[usize]) -> Result<u64, &'static str> {
    let mut total = 0_u64;
    for &i in extra {
        if let Some((dims, dtype)) = a.get(i).and_then(Arg::tensor) {
            total = add(&[total, size(dims, dtype)?])?;
        }
    }
    Ok(total)
}

fn disagree() -> &'static str {
    "the shapes do not fit the op's definition"
}

fn matrix(class: Class, dtype: DType, flop: u64, bytes: Option<u64>) -> Formula {
    Ok(Model {
        class,
        precision: Some(dtype.precision),
        flop: Some(flop),
        bytes,
        reason: None,
    })
}

/// `[M, K] x [K, N]`: 2·M·N·K (a bias adds no FLOPs here, as `torch.utils.flop_counter` counts).
fn gemm(a: &[Arg], x: usize, y: usize, extra: &[usize]) -> Formula {
    let ((ad, at), (bd, bt)) = (tensor(a, x)?, tensor(a, y)?);
    let ([m, k], [k2, n]) = (two(ad)?, two(bd)?);
    if k != k2 {
        return Err(disagree());
    }
    let bytes = add(&[
        size(ad, at)?,
        size(bd, bt)?,
        extra_bytes(a, extra)?,
        mul(&[m, n, at.bytes])?,
    ])?;
    matrix(Class::Gemm, at, mul(&[2, m, n, k])?, Some(bytes))
}

fn two(dims: &[u64]) -> Result<[u64; 2], &'static str> {
    <[u64; 2]>::try_from(dims).map_err(|_| disagree())
}

fn batched(a: &[Arg], x: usize, y: usize, extra: &[usize]) -> Formula {
    let ((ad, at), (bd, bt)) = (tensor(a, x)?, tensor(a, y)?);
    let (Ok([b, m, k]), Ok([b2, k2, n])) = (<[u64; 3]>::try_from(ad), <[u64; 3]>::try_from(bd))
    else {
        return Err(disagree());
    };
    if k != k2 || b != b2 {
        return Err(disagree());
    }
    let bytes = add(&[
        size(ad, at)?,
        size(bd, bt)?,
        extra_bytes(a, extra)?,
        mul(&[b, m, n, at.bytes])?,
    ])?;
    matrix(Class::Gemm, at, mul(&[2, b, m, n, k])?, Some(bytes))
}

/// `x[..., K]` times `w[N, K]`ᵀ: M = the product of x's other dims.
fn linear(a: &[Arg]) -> Formula {
    let ((xd, xt), (wd, wt)) = (tensor(a, 0)?, tensor(a, 1)?);
    let ([n, k], Some((&kx, rows))) = (two(wd)?, xd.split_last()) else {
        return Err(disagree());
    };
    if k != kx {
        return Err(disagree());
    }
    let m = mul(rows)?;
    let bytes = add(&[
        size(xd, xt)?,
        size(wd, wt)?,
        extra_bytes(a, &[2])?,
        mul(&[m, n, xt.bytes])?,
    ])?;
    matrix(Class::Gemm, xt, mul(&[2, m, n, k])?, Some(bytes))
}

/// `torch.matmul`'s cases: 1-D operands gain and lose a dim, batch dims broadcast.
fn matmul(a: &[Arg]) -> Formula {
    let ((ad, at), (bd, bt)) = (tensor(a, 0)?, tensor(a, 1)?);
    let (m, k, a_batch) = match ad {
        [] => return Err(disagree()),
        [k] => (1, *k, &[][..]),
        [batch @ .., m, k] => (*m, *k, batch),
    };
    let (k2, n, b_batch) = match bd {
        [] => return Err(disagree()),
        [k] => (*k, 1, &[][..]),
        [batch @ .., k, n] => (*k, *n, batch),
    };
    if k != k2 {
        return Err(disagree());
    }
    let batch = mul(&broadcast(&[a_batch, b_batch]).ok_or_else(disagree)?)?;
    let bytes = add(&[size(ad, at)?, size(bd, bt)?, mul(&[batch, m, n, at.bytes])?])?;
    matrix(Class::Gemm, at, mul(&[2, batch, m, n, k])?, Some(bytes))
}

fn mv(a: &[Arg], x: usize, y: usize, extra: &[usize]) -> Formula {
    let ((ad, at), (vd, vt)) = (tensor(a, x)?, tensor(a, y)?);
    let ([m, k], [k2]) = (two(ad)?, <[u64; 1]>::try_from(vd).map_err(|_| disagree())?);
    if k != k2 {
        return Err(disagree());
    }
    let bytes = add(&[
        size(ad, at)?,
        size(vd, vt)?,
        extra_bytes(a, extra)?,
        mul(&[m, at.bytes])?,
    ])?;
    matrix(Class::Gemm, at, mul(&[2, m, k])?, Some(bytes))
}

fn dot(a: &[Arg]) -> Formula {
    let ((ad, at), (bd, bt)) = (tensor(a, 0)?, tensor(a, 1)?);
    let ([k], [k2]) = (
        <[u64; 1]>::try_from(ad).map_err(|_| disagree())?,
        <[u64; 1]>::try_from(bd).map_err(|_| disagree())?,
    );
    if k != k2 {
        return Err(disagree());
    }
    let bytes = add(&[size(ad, at)?, size(bd, bt)?, at.bytes])?;
    matrix(Class::Gemm, at, mul(&[2, k])?, Some(bytes))
}

/// FP8 GEMM: its output dtype is an argument the trace records as a number, so bytes are left out.
fn scaled_mm(a: &[Arg]) -> Formula {
    let ((ad, at), (bd, _)) = (tensor(a, 0)?, tensor(a, 1)?);
    let ([m, k], [k2, n]) = (two(ad)?, two(bd)?);
    if k != k2 {
        return Err(disagree());
    }
    Ok(Model {
        class: Class::Gemm,
        precision: Some(at.precision),
        flop: Some(mul(&[2, m, n, k])?),
        bytes: None,
        reason: Some("bytes: the output dtype is not among the recorded shapes"),
    })
}

/// Broadcast shape of several dims lists (numpy rules), or `None` when they do not broadcast.
pub fn broadcast(shapes: &[&[u64]]) -> Option<Vec<u64>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1_u64; rank];
    for s in shapes {
        let offset = rank - s.len();
        for (i, &d) in s.iter().enumerate() {
            let slot = out.get_mut(offset + i)?;
            if *slot == 1 {
                *slot = d;
            } else if d != 1 && d != *slot {
                return None;
            }
        }
    }
    Some(out)
}

/// A `ScalarList` argument of a convolution, stretched to `n` spatial dims.
fn spatial(a: &[Arg], i: usize, n: usize) -> Result<Vec<i64>, &'static str> {
    let text = a.get(i).and_then(Arg::value).unwrap_or("");
    let list = int_list(text)
        .ok_or("a convolution's stride/padding/dilation is not recorded as numbers")?;
    match list.as_slice() {
        [one] => Ok(vec![*one; n]),
        l if l.len() == n => Ok(list),
        _ => Err(disagree()),
    }
}

fn conv_with(a: &[Arg], params: [usize; 3], groups: usize) -> Formula {
    let ((xd, xt), (wd, wt)) = (tensor(a, 0)?, tensor(a, 1)?);
    let spatial_dims = wd
        .len()
        .checked_sub(2)
        .filter(|&n| n >= 1)
        .ok_or_else(disagree)?;
    // Unbatched input: [C, spatial...].
    let (batch, x_spatial) = match xd.len() {
        l if l == spatial_dims + 2 => {
            (xd.first().copied().unwrap_or(1), xd.get(2..).unwrap_or(&[]))
        }
        l if l == spatial_dims + 1 => (1, xd.get(1..).unwrap_or(&[])),
        _ => return Err(disagree()),
    };
    let [stride, padding, dilation] = params.map(|i| spatial(a, i, spatial_dims));
    let (stride, padding, dilation) = (stride?, padding?, dilation?);
    let g = a
        .get(groups)
        .and_then(Arg::value)
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(1);
    let channels = xd
        .len()
        .checked_sub(spatial_dims + 1)
        .and_then(|i| xd.get(i))
        .copied()
        .unwrap_or(0);
    if wd.get(1).copied().and_then(|c| c.checked_mul(g)) != Some(channels) {
        return Err(disagree());
    }
    let mut out = Vec::with_capacity(spatial_dims);
    for (i, &x) in x_spatial.iter().enumerate() {
        let k = i64::try_from(*wd.get(i + 2).ok_or_else(disagree)?).map_err(|_| disagree())?;
        let x = i64::try_from(x).map_err(|_| disagree())?;
        let (s, p, d) = (
            *stride.get(i).ok_or_else(disagree)?,
            *padding.get(i).ok_or_else(disagree)?,
            *dilation.get(i).ok_or_else(disagree)?,
        );
        let span = x + 2 * p - d * (k - 1) - 1;
        if s <= 0 || span < 0 {
            return Err(disagree());
        }
        out.push(u64::try_from(span / s + 1).map_err(|_| disagree())?);
    }
    let cout = wd.first().copied().unwrap_or(0);
    let out_numel = mul(&[batch, cout, mul(&out)?])?;
    let flop = mul(&[2, batch, mul(&out)?, mul(wd)?])?;
    let bytes = add(&[
        size(xd, xt)?,
        size(wd, wt)?,
        extra_bytes(a, &[2])?,
        mul(&[out_numel, xt.bytes])?,
    ])?;
    matrix(Class::Conv, xt, flop, Some(bytes))
}

/// `convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
/// groups)` and `conv{1,2,3}d(input, weight, bias, stride, padding, dilation, groups)`: 2 · output
/// positions · weight elements per output channel group.
fn conv(
    a: &[Arg],
    stride: usize,
    padding: usize,
    dilation: usize,
    transposed: Option<usize>,
    groups: usize,
) -> Formula {
    if let Some(t) = transposed {
        match a.get(t).and_then(Arg::value).and_then(flag) {
            Some(false) => {}
            Some(true) => return Err("transposed convolution: no formula"),
            None => return Err("a convolution's `transposed` flag is not recorded"),
        }
    }
    conv_with(a, [stride, padding, dilation], groups)
}

/// `cudnn_convolution(self, weight, padding, stride, dilation, groups, ...)`.
fn conv_cudnn(a: &[Arg]) -> Formula {
    conv_with(a, [3, 2, 4], 5)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `[..., heads, length, embedding]` (the SDPA API).
    Bhle,
    /// `[batch, length, heads, embedding]` (flash/efficient kernels' own forward).
    Blhe,
}

/// `(batch, heads, length, embedding)` of a q/k/v tensor.
fn bhle(dims: &[u64], layout: Layout) -> Result<[u64; 4], &'static str> {
    match (layout, dims) {
        (Layout::Bhle, [batch @ .., h, l, e]) => Ok([mul(batch)?, *h, *l, *e]),
        (Layout::Blhe, [b, l, h, e]) => Ok([*b, *h, *l, *e]),
        _ => Err(disagree()),
    }
}

/// q, k, v: `(batch, q heads, q length, k length, qk embedding, v embedding)`.
fn qkv(a: &[Arg], at: usize, layout: Layout) -> Result<[u64; 6], &'static str> {
    let (q, k, v) = (tensor(a, at)?, tensor(a, at + 1)?, tensor(a, at + 2)?);
    let [bq, hq, lq, eq] = bhle(q.0, layout)?;
    let [bk, hk, lk, ek] = bhle(k.0, layout)?;
    let [bv, hv, lv, ev] = bhle(v.0, layout)?;
    let grouped = hk != 0 && hq % hk == 0;
    if bq != bk || bk != bv || eq != ek || lk != lv || hk != hv || !grouped {
        return Err(disagree());
    }
    Ok([bq, hq, lq, lk, eq, ev])
}

/// Dense attention: 2·B·H·Lq·Lk·E (Q·Kᵀ) + 2·B·H·Lq·Lk·Ev (P·V), as `torch.utils.flop_counter`
/// counts it; a causal mask is not discounted.
fn attention(a: &[Arg], layout: Layout, mask: Option<usize>) -> Formula {
    let [b, h, lq, lk, e, ev] = qkv(a, 0, layout)?;
    let q = tensor(a, 0)?;
    let flop = add(&[mul(&[2, b, h, lq, lk, e])?, mul(&[2, b, h, lq, lk, ev])?])?;
    let inputs = add(&[
        size(q.0, q.1)?,
        size(tensor(a, 1)?.0, tensor(a, 1)?.1)?,
        size(tensor(a, 2)?.0, tensor(a, 2)?.1)?,
        extra_bytes(a, mask.as_slice())?,
    ])?;
    let bytes = add(&[inputs, mul(&[b, h, lq, ev, q.1.bytes])?])?;
    matrix(Class::Attention, q.1, flop, Some(bytes))
}

/// Attention backward (grad_out, q, k, v, ...): the five products of `torch.utils.flop_counter`'s
/// `sdpa_backward_flop_count`, 2·B·H·Lq·Lk·(3·E + 2·Ev).
fn attention_backward(a: &[Arg]) -> Formula {
    let [b, h, lq, lk, e, ev] = qkv(a, 1, Layout::Bhle)?;
    let q = tensor(a, 1)?;
    let flop = mul(&[2, b, h, lq, lk, add(&[mul(&[3, e])?, mul(&[2, ev])?])?])?;
    let mut bytes = 0_u64;
    for arg in a {
        if let Some((dims, dtype)) = arg.tensor() {
            bytes = add(&[bytes, size(dims, dtype)?])?;
        }
    }
    // The gradients of q, k and v are written.
    for i in 1..=3 {
        let (dims, dtype) = tensor(a, i)?;
        bytes = add(&[bytes, size(dims, dtype)?])?;
    }
    matrix(Class::AttentionBackward, q.1, flop, Some(bytes))
}

/// Layer norm: per element mean 1, variance 3 (subtract, square, add), normalise 1, and 1 each for
/// the weight and the bias when given; RMS norm: square 1, sum 1, normalise 1, weight 1.
fn norm(a: &[Arg], per_element: u64, bias: bool) -> Formula {
    let (xd, xt) = tensor(a, 0)?;
    let n = numel(xd).ok_or("the count overflows 64 bits")?;
    let weight = a.get(2).and_then(Arg::tensor);
    let bias_t = if bias {
        a.get(3).and_then(Arg::tensor)
    } else {
        None
    };
    let per = per_element + u64::from(weight.is_some()) + u64::from(bias_t.is_some());
    let extra = add(&[
        weight.map_or(Ok(0), |(d, t)| size(d, t))?,
        bias_t.map_or(Ok(0), |(d, t)| size(d, t))?,
    ])?;
    Ok(Model {
        class: Class::Norm,
        precision: Some(xt.precision),
        flop: Some(mul(&[n, per])?),
        bytes: Some(add(&[mul(&[2, size(xd, xt)?])?, extra])?),
        reason: None,
    })
}

fn copy(a: &[Arg]) -> Formula {
    let ((dd, dt), (sd, st)) = (tensor(a, 0)?, tensor(a, 1)?);
    Ok(Model {
        class: Class::Copy,
        precision: Some(dt.precision),
        flop: Some(0),
        bytes: Some(add(&[size(dd, dt)?, size(sd, st)?])?),
        reason: None,
    })
}

fn fill(a: &[Arg]) -> Formula {
    let (d, t) = tensor(a, 0)?;
    Ok(Model {
        class: Class::Fill,
        precision: Some(t.precision),
        flop: Some(0),
        bytes: Some(size(d, t)?),
        reason: None,
    })
}

/// The dims a reduction removes, from its `dim` argument (`None` or empty: all of them; the
/// `sum(self, dtype)` / `mean(self, dtype)` overloads reduce everything).
fn reduced(a: &[Arg], rank: usize, op: &str) -> Result<Vec<usize>, &'static str> {
    if matches!(op, "sum" | "mean") && a.len() <= 2 {
        return Ok((0..rank).collect());
    }
    let text = a.get(1).and_then(Arg::value).unwrap_or("");
    let kind = match a.get(1) {
        Some(Arg::Other { kind, .. }) => kind.as_str(),
        _ => "",
    };
    let dims: Vec<i64> = match kind {
        "ScalarList" => int_list(text).ok_or("a reduction's dims are not recorded")?,
        "Scalar" => vec![text
            .parse()
            .map_err(|_| "a reduction's dim is not recorded")?],
        _ => Vec::new(),
    };
    if dims.is_empty() {
        return Ok((0..rank).collect());
    }
    let r = i64::try_from(rank).map_err(|_| disagree())?;
    dims.iter()
        .map(|&d| {
            let d = if d < 0 { d + r } else { d };
            usize::try_from(d)
                .ok()
                .filter(|&d| d < rank)
                .ok_or_else(disagree)
        })
        .collect()
}

/// One FLOP per input element; `sum(self, dtype)` and a `dtype=` argument leave bytes unknown.
fn reduce(a: &[Arg], op: &str, index: bool) -> Formula {
    let (xd, xt) = tensor(a, 0)?;
    let n = numel(xd).ok_or("the count overflows 64 bits")?;
    let mut out = n;
    for d in reduced(a, xd.len(), op)? {
        let size = xd.get(d).copied().unwrap_or(1);
        out = out.checked_div(size).unwrap_or(0);
    }
    let dtype_given = a.get(3).and_then(Arg::value).is_some_and(|v| !v.is_empty())
        || (op == "sum"
            && a.len() == 2
            && a.get(1).and_then(Arg::value).is_some_and(|v| !v.is_empty()));
    let out_bytes = if index {
        Some(8)
    } else if dtype_given {
        None
    } else if xt.category < 2 && op == "sum" {
        Some(8)
    } else {
        Some(xt.bytes)
    };
    Ok(Model {
        class: Class::Reduction,
        precision: Some(xt.precision),
        flop: Some(n),
        bytes: out_bytes
            .map(|b| add(&[size(xd, xt)?, mul(&[out, b])?]))
            .transpose()?,
        reason: out_bytes
            .is_none()
            .then_some("bytes: the output dtype is an argument the shapes do not name"),
    })
}

/// The category of a `Scalar` argument from its recorded value, or `None` when it is not recorded.
fn scalar_category(value: &str) -> Option<u8> {
    match value {
        "" => None,
        "True" | "False" => Some(0),
        v if v.parse::<i64>().is_ok() => Some(1),
        v if v.contains('j') => Some(3),
        _ => Some(2),
    }
}

/// The dtype of several tensors of one category (bf16 with fp16 makes fp32, else the widest).
fn widest(dtypes: &[DType]) -> Option<DType> {
    let first = *dtypes.first()?;
    let mut out = first;
    for d in dtypes.iter().skip(1) {
        if *d == out {
            continue;
        }
        if d.bytes == out.bytes && d.category == 2 {
            // bf16 + fp16 (or two fp8 formats): PyTorch promotes to the next wider float.
            out = super::args::dtype(if d.bytes >= 4 { "double" } else { "float" })?;
        } else if d.bytes > out.bytes {
            out = *d;
        }
    }
    Some(out)
}

/// PyTorch's result type for an elementwise op's arguments: dimensioned tensors first, then 0-d
/// tensors, then Python scalars, each only when of a higher category than those before.
pub fn promote(a: &[Arg]) -> Option<DType> {
    let tensors: Vec<(&[u64], DType)> = a.iter().filter_map(Arg::tensor).collect();
    let dimmed: Vec<DType> = tensors
        .iter()
        .filter(|t| !t.0.is_empty())
        .map(|t| t.1)
        .collect();
    let zero: Vec<DType> = tensors
        .iter()
        .filter(|t| t.0.is_empty())
        .map(|t| t.1)
        .collect();
    let mut scalar_cat: Option<u8> = None;
    for arg in a {
        if let Arg::Other { kind, value } = arg {
            if kind == "Scalar" {
                scalar_cat = Some(scalar_category(value)?.max(scalar_cat.unwrap_or(0)));
            }
        }
    }
    let top = |list: &[DType]| list.iter().map(|d| d.category).max();
    let (cd, cz) = (top(&dimmed), top(&zero));
    let best = [cd, cz, scalar_cat].into_iter().flatten().max()?;
    let of = |list: &[DType]| -> Option<DType> {
        let same: Vec<DType> = list
            .iter()
            .copied()
            .filter(|d| d.category == best)
            .collect();
        widest(&same)
    };
    if cd == Some(best) {
        of(&dimmed)
    } else if cz == Some(best) {
        of(&zero)
    } else {
        super::args::dtype(match best {
            0 => "bool",
            1 => "long int",
            3 => "c10::complex<float>",
            _ => "float",
        })
    }
}

/// One FLOP per output element; output shape = the tensors' broadcast shape.
fn elementwise(a: &[Arg], op: &str, boolean: bool) -> Formula {
    let tensors: Vec<(&[u64], DType)> = a.iter().filter_map(Arg::tensor).collect();
    if tensors.is_empty() {
        return Err("an input the formula needs is not a tensor with a known dtype");
    }
    let shapes: Vec<&[u64]> = tensors.iter().map(|t| t.0).collect();
    let out = broadcast(&shapes).ok_or_else(disagree)?;
    let n = numel(&out).ok_or("the count overflows 64 bits")?;
    let compute = promote(a);
    let in_place = op.ends_with('_');
    let out_dtype = if in_place {
        tensors.first().map(|t| t.1)
    } else if boolean {
        super::args::dtype("bool")
    } else {
        compute
    };
    let mut read = 0_u64;
    for (dims, dtype) in &tensors {
        read = add(&[read, size(dims, *dtype)?])?;
    }
    let bytes = out_dtype
        .map(|d| add(&[read, mul(&[n, d.bytes])?]))
        .transpose()?;
    Ok(Model {
        class: Class::Elementwise,
        precision: compute
            .or(tensors.first().map(|t| t.1))
            .map(|d| d.precision),
        flop: Some(n),
        bytes,
        reason: bytes.is_none().then_some(
            "bytes: a scalar argument's value is not recorded, so the output dtype is unknown",
        ),
    })
}

#[cfg(test)]
mod tests;
