//! Matrix products: mm, addmm, bmm, linear, matmul, mv, dot and FP8 scaled GEMM.

use super::shapes::{add, broadcast, disagree, extra_bytes, mul, size, tensor};
use super::work::{matrix, Class, Formula, Model};
use crate::torch_trace::flops::args::Arg;

/// `[M, K] x [K, N]`: 2·M·N·K (a bias adds no FLOPs here, as `torch.utils.flop_counter` counts).
pub(super) fn gemm(a: &[Arg], x: usize, y: usize, extra: &[usize]) -> Formula {
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

pub(super) fn batched(a: &[Arg], x: usize, y: usize, extra: &[usize]) -> Formula {
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
pub(super) fn linear(a: &[Arg]) -> Formula {
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
pub(super) fn matmul(a: &[Arg]) -> Formula {
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

pub(super) fn mv(a: &[Arg], x: usize, y: usize, extra: &[usize]) -> Formula {
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

pub(super) fn dot(a: &[Arg]) -> Formula {
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
pub(super) fn scaled_mm(a: &[Arg]) -> Formula {
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
