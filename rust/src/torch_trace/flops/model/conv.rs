//! Convolutions: 2 · output positions · weight elements per output channel group.

use super::shapes::{add, disagree, extra_bytes, mul, size, tensor};
use super::work::{matrix, Class, Formula};
use crate::torch_trace::flops::args::{flag, int_list, Arg};

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
pub(super) fn conv(
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
pub(super) fn conv_cudnn(a: &[Arg]) -> Formula {
    conv_with(a, [3, 2, 4], 5)
}
