//! Per-element work: elementwise ops (with PyTorch's type promotion), norms, copies, fills, reductions.

use super::shapes::{add, broadcast, disagree, mul, size, tensor};
use super::work::{Class, Formula, Model};
use crate::torch_trace::flops::args::{int_list, numel, Arg, DType};

/// Layer norm: per element mean 1, variance 3 (subtract, square, add), normalise 1, and 1 each for
/// the weight and the bias when given; RMS norm: square 1, sum 1, normalise 1, weight 1.
pub(super) fn norm(a: &[Arg], per_element: u64, bias: bool) -> Formula {
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

pub(super) fn copy(a: &[Arg]) -> Formula {
    let ((dd, dt), (sd, st)) = (tensor(a, 0)?, tensor(a, 1)?);
    Ok(Model {
        class: Class::Copy,
        precision: Some(dt.precision),
        flop: Some(0),
        bytes: Some(add(&[size(dd, dt)?, size(sd, st)?])?),
        reason: None,
    })
}

pub(super) fn fill(a: &[Arg]) -> Formula {
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
pub(super) fn reduce(a: &[Arg], op: &str, index: bool) -> Formula {
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
            out = crate::torch_trace::flops::args::dtype(if d.bytes >= 4 {
                "double"
            } else {
                "float"
            })?;
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
        crate::torch_trace::flops::args::dtype(match best {
            0 => "bool",
            1 => "long int",
            3 => "c10::complex<float>",
            _ => "float",
        })
    }
}

/// One FLOP per output element; output shape = the tensors' broadcast shape.
pub(super) fn elementwise(a: &[Arg], op: &str, boolean: bool) -> Formula {
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
        crate::torch_trace::flops::args::dtype("bool")
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
