//! Kernel sequences: the most frequent runs of `n` consecutive kernels in launch order, and the
//! repeating unit of the launch sequence, with counts and time.
//!
//! Per device, kernels and CUDA-graph executions (memcpys and memsets left out) in launch order.
//! Every window of `n` is one instance (windows overlap: `A A A` holds `A A` twice); instances are
//! counted exactly (a hash finds candidates, the names are compared). Per n-gram: instances, GPU time
//! (the instances' kernel durations summed), and span (last end − first start of each instance).
//! The repeating unit is [`super::period::find`] on the same sequence, starting at its first
//! region's start; its instances are the full units of its regions.

use super::activity::{Activity, OpClass};
use super::codes;
use super::period;
use crate::error::{Error, Result};
use std::collections::HashMap;

/// The largest `n` accepted.
pub const MAX_N: usize = 64;

/// One pattern and what its instances took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub device: i64,
    /// `ngram` or `repeating_unit`.
    pub kind: &'static str,
    /// Names (indices into [`Activity::names`]).
    pub names: Vec<u32>,
    pub count: usize,
    pub gpu_time: i64,
    pub span_total: i64,
    pub first_start: i64,
}

/// The kernels (and graph executions) of each device, in launch order, as operation indices.
fn kernels_by_device(a: &Activity) -> Vec<(i64, Vec<u32>)> {
    a.devices()
        .into_iter()
        .map(|d| {
            let ops = a
                .ops_of_device(d)
                .into_iter()
                .filter(|&i| {
                    a.ops
                        .get(i as usize)
                        .is_some_and(|o| matches!(o.class, OpClass::Kernel | OpClass::Graph))
                })
                .collect();
            (d, ops)
        })
        .collect()
}

/// The n-grams of every device (most instances first, then GPU time, then first appearance), after
/// each device's repeating unit (when one repeats).
pub fn sequences(a: &Activity, n: usize) -> Result<Vec<Pattern>> {
    if n == 0 || n > MAX_N {
        return Err(Error::input(
            codes::OPTION_INVALID,
            format!("n-grams of {n} kernels: n must be 1 to {MAX_N}"),
        )
        .with_expected(format!("1..={MAX_N}"))
        .with_observed(n.to_string()));
    }
    let mut out = Vec::new();
    for (device, ops) in kernels_by_device(a) {
        let seq: Vec<u32> = ops
            .iter()
            .filter_map(|&i| a.ops.get(i as usize).map(|o| o.name))
            .collect();
        let times: Vec<(i64, i64)> = ops
            .iter()
            .filter_map(|&i| a.ops.get(i as usize).map(|o| (o.start, o.end)))
            .collect();
        if let Some(unit) = repeating_unit(device, &seq, &times) {
            out.push(unit);
        }
        out.extend(ngrams(device, &seq, &times, n));
    }
    Ok(out)
}

fn instance(times: &[(i64, i64)], from: usize, len: usize) -> (i64, i64, i64) {
    let w = times.get(from..from + len).unwrap_or_default();
    let gpu: i64 = w.iter().map(|(s, e)| e - s).sum();
    let first = w.iter().map(|t| t.0).min().unwrap_or(0);
    let last = w.iter().map(|t| t.1).max().unwrap_or(0);
    (gpu, last - first, first)
}

fn repeating_unit(device: i64, seq: &[u32], times: &[(i64, i64)]) -> Option<Pattern> {
    let r = period::find(seq)?;
    let p = r.period;
    let first = r.regions.first()?;
    let names = seq.get(first.start..first.start + p)?.to_vec();
    let (mut count, mut gpu_time, mut span_total) = (0usize, 0i64, 0i64);
    for region in &r.regions {
        let mut at = region.start;
        while at + p <= region.end {
            let (g, s, _) = instance(times, at, p);
            count += 1;
            gpu_time += g;
            span_total += s;
            at += p;
        }
    }
    let (_, _, first_start) = instance(times, first.start, p);
    Some(Pattern {
        device,
        kind: "repeating_unit",
        names,
        count,
        gpu_time,
        span_total,
        first_start,
    })
}

struct Acc {
    at: usize,
    count: usize,
    gpu_time: i64,
    span_total: i64,
}

fn ngrams(device: i64, seq: &[u32], times: &[(i64, i64)], n: usize) -> Vec<Pattern> {
    if seq.len() < n {
        return Vec::new();
    }
    const B: u64 = 0x9E37_79B9_7F4A_7C15;
    let top = (1..n).fold(1u64, |x, _| x.wrapping_mul(B));
    let mut hash = seq.iter().take(n).fold(0u64, |h, &s| {
        h.wrapping_mul(B).wrapping_add(u64::from(s) + 1)
    });
    let mut buckets: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut grams: Vec<Acc> = Vec::new();
    let last = seq.len() - n;
    for i in 0..=last {
        if i > 0 {
            let out = u64::from(seq.get(i - 1).copied().unwrap_or(0)) + 1;
            let inn = u64::from(seq.get(i + n - 1).copied().unwrap_or(0)) + 1;
            hash = hash
                .wrapping_sub(out.wrapping_mul(top))
                .wrapping_mul(B)
                .wrapping_add(inn);
        }
        let window = seq.get(i..i + n).unwrap_or_default();
        let bucket = buckets.entry(hash).or_default();
        let found = bucket.iter().copied().find(|&g| {
            grams
                .get(g)
                .is_some_and(|acc| seq.get(acc.at..acc.at + n) == Some(window))
        });
        let g = match found {
            Some(g) => g,
            None => {
                bucket.push(grams.len());
                grams.push(Acc {
                    at: i,
                    count: 0,
                    gpu_time: 0,
                    span_total: 0,
                });
                grams.len() - 1
            }
        };
        let (gpu, span, _) = instance(times, i, n);
        if let Some(acc) = grams.get_mut(g) {
            acc.count += 1;
            acc.gpu_time += gpu;
            acc.span_total += span;
        }
    }
    let mut out: Vec<Pattern> = grams
        .into_iter()
        .map(|acc| Pattern {
            device,
            kind: "ngram",
            names: seq.get(acc.at..acc.at + n).unwrap_or_default().to_vec(),
            count: acc.count,
            gpu_time: acc.gpu_time,
            span_total: acc.span_total,
            first_start: instance(times, acc.at, n).2,
        })
        .collect();
    out.sort_by(|x, y| {
        y.count
            .cmp(&x.count)
            .then(y.gpu_time.cmp(&x.gpu_time))
            .then(x.first_start.cmp(&y.first_start))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_windows_count_and_time_by_hand() {
        // A B A B A with durations 1..=5, starting at 0, 10, 20, 30, 40.
        let seq = [0u32, 1, 0, 1, 0];
        let times: Vec<(i64, i64)> = (0..5).map(|i| (10 * i, 10 * i + i + 1)).collect();
        let grams = ngrams(0, &seq, &times, 2);
        let got: Vec<(Vec<u32>, usize, i64, i64)> = grams
            .iter()
            .map(|p| (p.names.clone(), p.count, p.gpu_time, p.span_total))
            .collect();
        // A B at 0 and 20: (1 + 2) + (3 + 4) = 10; spans (12 - 0) + (34 - 20) = 26.
        // B A at 10 and 30: (2 + 3) + (4 + 5) = 14; spans (23 - 10) + (45 - 30) = 28.
        assert_eq!(got, vec![(vec![1, 0], 2, 14, 28), (vec![0, 1], 2, 10, 26)]);
    }
}
