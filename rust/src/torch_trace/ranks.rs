//! The ranks of a trace set for [`crate::ranks::compare`]: one rank per trace, its NCCL kernels
//! (absolute trace times, so that ranks compare) and its `ProfilerStep#N` ranges.

use super::kernels::is_communication;
use super::records::GpuKind;
use super::TraceSet;
use crate::error::Result;
use crate::intervals::Span;
use crate::ranks::{self, Collective, Rank, Tables};

pub fn compare(set: &TraceSet) -> Result<Tables> {
    let all: Vec<Rank> = set
        .traces
        .iter()
        .map(|t| Rank {
            rank: t.rank,
            label: t.path.clone(),
            collectives: t
                .events
                .gpu
                .iter()
                .filter(|e| e.kind == GpuKind::Kernel && is_communication(t.name(e.name)))
                .map(|e| Collective {
                    name: t.name(e.name).to_string(),
                    start: e.start,
                    end: e.end,
                })
                .collect(),
            steps: t
                .events
                .cpu
                .iter()
                .filter(|e| t.name(e.name).starts_with("ProfilerStep#"))
                .map(|e| Span::new(e.start, e.end))
                .collect(),
        })
        .collect();
    ranks::compare(&all)
}
