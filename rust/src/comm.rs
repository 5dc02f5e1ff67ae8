//! Communication vs. compute on one device: which kernels are collectives, and the union arithmetic
//! that says how much communication time compute hid. Shared by the nsys and PyTorch-trace engines so
//! that "exposed communication" means the same thing in both.
//!
//! Per device: `comm_busy` is the union of the communication kernels' intervals, `compute_busy` the
//! union of every other kernel's; `overlap = |comm ∩ compute|`; `exposed = comm_busy − overlap` (time
//! the device only communicated). Copies are neither.

use crate::column::{Column, Unit};
use crate::intervals::{self, Span};
use serde::Serialize;

/// The columns of the communication table, the same in both engines (`nsys comm`; `torch comm` puts
/// the trace's `rank` first).
pub const COLUMNS: &[Column] = &[
    Column::int("device", Unit::Id, "Device id"),
    Column::int(
        "stream",
        Unit::Id,
        "Communication stream; null for the device row (all streams)",
    ),
    Column::int(
        "kernels",
        Unit::Count,
        "Kernels of the device (device row) or stream (stream row)",
    ),
    Column::int(
        "comm_kernels",
        Unit::Count,
        "Communication kernels: names starting nccl/rccl or containing gloo:",
    ),
    Column::int(
        "comm_time_ns",
        Unit::Ns,
        "Summed duration of the communication kernels (ns; overlapping ones each count)",
    ),
    Column::int(
        "comm_busy_ns",
        Unit::Ns,
        "Union of the communication kernels' intervals (ns)",
    ),
    Column::int(
        "compute_busy_ns",
        Unit::Ns,
        "Union of the device's other kernels' intervals (ns); copies are neither",
    ),
    Column::int(
        "overlap_ns",
        Unit::Ns,
        "Time communication and compute ran at once: |comm union ∩ compute union| (ns)",
    ),
    Column::int(
        "exposed_comm_ns",
        Unit::Ns,
        "Communication not hidden by compute: comm_busy_ns - overlap_ns (ns)",
    ),
    Column::float(
        "overlap_pct",
        Unit::Pct,
        "overlap_ns / comm_busy_ns (%; 0 without communication)",
    ),
];

/// A collective/communication kernel by its name: NCCL and RCCL (`nccl…`, `rccl…`, including
/// `ncclDevKernel_*` and `ncclKernel_*`) and Gloo's GPU work (`gloo:`).
pub fn is_communication(name: &str) -> bool {
    name.starts_with("nccl") || name.starts_with("rccl") || name.contains("gloo:")
}

/// Communication/compute facts of one set of kernels (one device, or one stream against its device).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CommOverlap {
    pub comm_kernels: u64,
    /// Sum of communication kernel durations.
    pub comm_time_ns: i64,
    /// Union of communication kernel intervals.
    pub comm_busy_ns: i64,
    /// Union of compute (non-communication) kernel intervals.
    pub compute_busy_ns: i64,
    /// Time both communication and compute ran.
    pub overlap_ns: i64,
    /// Communication time not hidden by compute: `comm_busy_ns − overlap_ns`.
    pub exposed_comm_ns: i64,
}

impl CommOverlap {
    /// From the communication spans (any order, may overlap) and the compute union of the device.
    pub fn of(comm: &[Span], compute_union: &[Span]) -> Self {
        let comm_union = intervals::union(comm.to_vec());
        let busy = intervals::total(&comm_union);
        let overlap = intervals::intersection_len(&comm_union, compute_union);
        Self {
            comm_kernels: u64::try_from(comm.len()).unwrap_or(u64::MAX),
            comm_time_ns: comm.iter().map(Span::len).sum(),
            comm_busy_ns: busy,
            compute_busy_ns: intervals::total(compute_union),
            overlap_ns: overlap,
            exposed_comm_ns: busy - overlap,
        }
    }

    /// Overlap as a percentage of communication busy time (0 when there is none).
    pub fn overlap_pct(&self) -> f64 {
        if self.comm_busy_ns == 0 {
            0.0
        } else {
            self.overlap_ns as f64 * 100.0 / self.comm_busy_ns as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_collectives() {
        assert!(is_communication(
            "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)"
        ));
        assert!(is_communication("ncclKernel_AllReduce_RING_LL_Sum_float"));
        assert!(is_communication("rccl_AllReduce"));
        assert!(!is_communication(
            "void at::native::vectorized_elementwise_kernel"
        ));
    }

    #[test]
    fn overlap_and_exposed_by_union() {
        // comm [0,10) and [5,20) -> union [0,20); compute [15,30) -> overlap 5, exposed 15.
        let comm = [Span::new(0, 10), Span::new(5, 20)];
        let compute = intervals::union(vec![Span::new(15, 30)]);
        let o = CommOverlap::of(&comm, &compute);
        assert_eq!(o.comm_kernels, 2);
        assert_eq!(o.comm_time_ns, 25);
        assert_eq!(o.comm_busy_ns, 20);
        assert_eq!(o.compute_busy_ns, 15);
        assert_eq!(o.overlap_ns, 5);
        assert_eq!(o.exposed_comm_ns, 15);
        assert!((o.overlap_pct() - 25.0).abs() < 1e-12);
    }
}
