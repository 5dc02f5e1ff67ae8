//! The arithmetic every formula shares: tensor arguments, checked products, sums and bytes, broadcasts.

use crate::torch_trace::flops::args::{numel, Arg, DType};

pub(super) fn tensor(a: &[Arg], i: usize) -> Result<(&[u64], DType), &'static str> {
    a.get(i)
        .and_then(Arg::tensor)
        .ok_or("an input the formula needs is not a tensor with a known dtype")
}

pub(super) fn mul(values: &[u64]) -> Result<u64, &'static str> {
    values
        .iter()
        .try_fold(1_u64, |acc, &v| acc.checked_mul(v))
        .ok_or("the count overflows 64 bits")
}

pub(super) fn add(values: &[u64]) -> Result<u64, &'static str> {
    values
        .iter()
        .try_fold(0_u64, |acc, &v| acc.checked_add(v))
        .ok_or("the count overflows 64 bits")
}

pub(super) fn size(dims: &[u64], dtype: DType) -> Result<u64, &'static str> {
    let n = numel(dims).ok_or("the count overflows 64 bits")?;
    mul(&[n, dtype.bytes])
}

/// Bytes of the optional tensors at `extra` (a bias, a mask): 0 where there is none.
pub(super) fn extra_bytes(a: &[Arg], extra: &[usize]) -> Result<u64, &'static str> {
    let mut total = 0_u64;
    for &i in extra {
        if let Some((dims, dtype)) = a.get(i).and_then(Arg::tensor) {
            total = add(&[total, size(dims, dtype)?])?;
        }
    }
    Ok(total)
}

pub(super) fn disagree() -> &'static str {
    "the shapes do not fit the op's definition"
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
