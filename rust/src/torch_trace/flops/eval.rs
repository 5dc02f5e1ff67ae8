//! Every `cpu_op` of a trace with its model (`model`), whether it enters totals, and the GPU time of
//! the work it launched.
//!
//! An op instance is *counted* when its class has a work formula and no op enclosing it has one:
//! `aten::linear` is counted, the `aten::mm` inside it is not (the same FLOPs would count twice).
//! Views and composites (`aten::to`, `aten::clone`) have no work of their own, so the ops inside
//! them count. GPU time is inclusive: the GPU events launched by the op's calls and by the calls
//! of every op inside it (sums of durations).

use super::args::{self, Arg};
use super::model::{model, Model};
use crate::torch_trace::records::{CpuKind, FastMap, NONE};
use crate::torch_trace::Trace;

/// The models of one trace's ops.
pub struct Evaluated {
    /// Distinct models, keyed by (op name, shape record).
    pub models: Vec<Model>,
    /// Per CPU event: index into `models`, or `NONE` (not a `cpu_op`).
    pub model_of: Vec<u32>,
    /// Per CPU event: it counts in totals.
    pub counted: Vec<bool>,
    /// Per CPU event: inclusive GPU time (ns) and GPU events.
    pub gpu_ns: Vec<i64>,
    pub gpu_events: Vec<u32>,
}

fn idx(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(NONE)
}

/// Models every op once per distinct (name, shape record).
fn models(trace: &Trace) -> (Vec<Model>, Vec<u32>) {
    let ev = &trace.events;
    let mut cache: FastMap<(u32, u32), u32> = FastMap::default();
    let mut parsed: FastMap<u32, Result<Vec<Arg>, args::Unread>> = FastMap::default();
    let mut out: Vec<Model> = Vec::new();
    let mut model_of = vec![NONE; ev.cpu.len()];
    for (i, c) in ev.cpu.iter().enumerate() {
        if c.kind != CpuKind::Op {
            continue;
        }
        let id = *cache.entry((c.name, c.shapes)).or_insert_with(|| {
            let read = parsed.entry(c.shapes).or_insert_with(|| {
                ev.shapes.get(c.shapes).map_or(
                    Err("no Input Dims recorded (record_shapes off)"),
                    args::parse,
                )
            });
            let m = match read {
                Ok(a) => model(trace.name(c.name), Some(a.as_slice()), ""),
                Err(why) => model(trace.name(c.name), None, why),
            };
            out.push(m);
            idx(out.len() - 1)
        });
        if let Some(slot) = model_of.get_mut(i) {
            *slot = id;
        }
    }
    (out, model_of)
}

pub fn evaluate(trace: &Trace) -> Evaluated {
    let ev = &trace.events;
    let parents = &trace.links.cpu_parent;
    let (models, model_of) = models(trace);
    let works = |i: u32| {
        model_of
            .get(i as usize)
            .and_then(|&m| models.get(m as usize))
            .is_some_and(|m| m.class.has_work())
    };
    // covered[i]: some range enclosing i is an op with a work formula (memoised up the chain).
    const UNSET: u8 = 2;
    let mut covered = vec![UNSET; ev.cpu.len()];
    let mut chain: Vec<u32> = Vec::new();
    for i in 0..ev.cpu.len() {
        chain.clear();
        let mut c = idx(i);
        let mut state = 0_u8;
        while chain.len() <= ev.cpu.len() {
            match covered.get(c as usize) {
                Some(&s) if s != UNSET => {
                    state = s;
                    break;
                }
                Some(_) => {
                    chain.push(c);
                    c = parents.get(c as usize).copied().unwrap_or(NONE);
                }
                None => break,
            }
        }
        // `chain` holds i and its uncomputed ancestors; the first computed one (if any) gave
        // `state`: whether it is covered. Walk back down.
        let mut above = state == 1 || (c != NONE && works(c));
        for &e in chain.iter().rev() {
            if let Some(slot) = covered.get_mut(e as usize) {
                *slot = u8::from(above);
            }
            above = above || works(e);
        }
    }
    let counted = (0..ev.cpu.len())
        .map(|i| works(idx(i)) && covered.get(i) == Some(&0))
        .collect();
    let (gpu_ns, gpu_events) = inclusive_gpu(trace);
    Evaluated {
        models,
        model_of,
        counted,
        gpu_ns,
        gpu_events,
    }
}

/// Per CPU event: the GPU time and events launched by its calls and those of the ranges inside it.
fn inclusive_gpu(trace: &Trace) -> (Vec<i64>, Vec<u32>) {
    let n = trace.events.cpu.len();
    let (mut ns, mut events) = (vec![0_i64; n], vec![0_u32; n]);
    for (g, gpu) in trace.events.gpu.iter().enumerate() {
        let dur = gpu.end - gpu.start;
        let mut c = trace.links.gpu_op(g);
        let mut steps = 0;
        while let (Some(t), Some(e)) = (ns.get_mut(c as usize), events.get_mut(c as usize)) {
            *t += dur;
            *e += 1;
            c = trace
                .links
                .cpu_parent
                .get(c as usize)
                .copied()
                .unwrap_or(NONE);
            steps += 1;
            if steps > n {
                break;
            }
        }
    }
    (ns, events)
}
