//! What Python hands over, decoded: little-endian buffers into calls, orders and pairs, options from JSON.

use crate::error::{Error, Result};
use crate::stats::compare::{Cases, PairedInput};
use crate::stats::quantile::Calls;
use crate::stats::schedule::Order;
use crate::stats::{codes, CompareOptions};

pub(super) fn invalid(what: &str, message: &str) -> Error {
    Error::input(codes::STATISTICS_INVALID, format!("{what}: {message}"))
        .with_path(what.to_string())
}

fn words<const N: usize>(what: &str, bytes: &[u8]) -> Result<Vec<[u8; N]>> {
    if !bytes.len().is_multiple_of(N) {
        return Err(invalid(
            what,
            &format!("byte length is not a multiple of {N}"),
        ));
    }
    Ok(bytes
        .chunks_exact(N)
        .map(|c| {
            let mut w = [0u8; N];
            w.copy_from_slice(c);
            w
        })
        .collect())
}

pub(super) fn f64s(what: &str, bytes: &[u8]) -> Result<Vec<f64>> {
    Ok(words::<8>(what, bytes)?
        .into_iter()
        .map(f64::from_le_bytes)
        .collect())
}

pub(super) fn calls(what: &str, values: &[u8], offsets: Option<&[u8]>) -> Result<Calls> {
    let values = f64s(what, values)?;
    match offsets {
        None => Ok(Calls::from_values(values)),
        Some(o) => {
            let offsets = words::<8>(what, o)?
                .into_iter()
                .map(|w| usize::try_from(u64::from_le_bytes(w)).unwrap_or(usize::MAX))
                .collect();
            Calls::from_offsets(values, offsets)
        }
    }
}

pub(super) fn options(bytes: &[u8]) -> Result<CompareOptions> {
    serde_json::from_slice(bytes).map_err(|e| invalid("options", &e.to_string()))
}

fn orders(bytes: Option<&[u8]>) -> Result<Option<Vec<Order>>> {
    bytes
        .map(|b| {
            b.iter()
                .map(|&o| match o {
                    0 => Ok(Order::Ab),
                    1 => Ok(Order::Ba),
                    _ => Err(invalid("orders", "each order is 0 (AB) or 1 (BA)")),
                })
                .collect()
        })
        .transpose()
}

/// The per-pair extras of a paired input.
pub(super) struct Extras<'a> {
    pub(super) cases: Option<&'a [u8]>,
    pub(super) case_names: Option<Vec<String>>,
    pub(super) case_weights: Option<Vec<f64>>,
    pub(super) orders: Option<&'a [u8]>,
    pub(super) valid: Option<&'a [u8]>,
}

pub(super) fn paired(baseline: Calls, candidate: Calls, extras: Extras<'_>) -> Result<PairedInput> {
    let cases = match (extras.cases, extras.case_names) {
        (Some(codes_bytes), Some(names)) => Some(Cases {
            case_of: words::<4>("cases", codes_bytes)?
                .into_iter()
                .map(|w| u32::from_le_bytes(w) as usize)
                .collect(),
            names,
            weights: extras.case_weights,
        }),
        (None, None) if extras.case_weights.is_none() => None,
        _ => {
            return Err(invalid(
                "cases",
                "case codes, names (and weights) go together",
            ))
        }
    };
    Ok(PairedInput {
        baseline,
        candidate,
        cases,
        orders: orders(extras.orders)?,
        valid: extras.valid.map(|v| v.iter().map(|&b| b != 0).collect()),
        keys: None,
        blocks: None,
    })
}

pub(super) fn named<T: serde::de::DeserializeOwned>(what: &str, name: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(name.to_string()))
        .map_err(|e| invalid(what, &e.to_string()))
}

pub(super) fn f64_bytes(values: impl Iterator<Item = f64>) -> Vec<u8> {
    values.flat_map(f64::to_le_bytes).collect()
}
