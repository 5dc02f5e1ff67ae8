//! Attention, forward and backward, in the SDPA and the flash/efficient layouts.

use super::shapes::{add, disagree, extra_bytes, mul, size, tensor};
use super::work::{matrix, Class, Formula};
use crate::torch_trace::flops::args::Arg;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
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
pub(super) fn attention(a: &[Arg], layout: Layout, mask: Option<usize>) -> Formula {
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
pub(super) fn attention_backward(a: &[Arg]) -> Formula {
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
