//! Which device each process and CUDA context ran work on, from the GPU activity rows themselves
//! (kernels, memcpys, memsets: every row names its `deviceId`, `contextId` and process).
//!
//! This is how per-device facts attribute CPU-side events: an API call belongs to the device of its
//! process, and a synchronization to the device of the context it waited on. The export's
//! `SYNCHRONIZATION.deviceId` is not used: nsys writes 0 there for every process (seen in the public
//! 2-GPU H100 exports, where the second process's context 2 runs on device 1).

use super::hash::{IdMap, IdSet};
use super::scan;
use super::schema::{Schema, KERNEL, MEMCPY, MEMSET, PID_MASK};
use crate::error::Result;
use std::collections::BTreeSet;

/// `(process bits, contextId) -> deviceId`, and the devices each process used.
#[derive(Debug, Default, Clone)]
pub struct DeviceMap {
    by_context: IdMap<(i64, i64), i64>,
    by_process: IdMap<i64, BTreeSet<i64>>,
}

impl DeviceMap {
    /// Reads the `(process, context, device)` triples of the GPU tables through the page reader (a
    /// scan, no SQL: this runs once per export and was, through SQLite, most of opening a small one).
    pub fn load(schema: &Schema) -> Result<Self> {
        let mut map = Self::default();
        for source in [&KERNEL, &MEMCPY, &MEMSET] {
            let Some(table) = schema.table(source) else {
                continue;
            };
            let with_context = schema.has_column(source, "contextId");
            let columns: &[&str] = if with_context {
                &["globalPid", "deviceId", "contextId"]
            } else {
                &["globalPid", "deviceId"]
            };
            let parts = scan::scan(schema, table, columns, BTreeSet::new, |seen, row| {
                let context = if with_context { row.opt_int(2)? } else { None };
                seen.insert((
                    row.opt_int(0)?.unwrap_or(0) & PID_MASK,
                    context,
                    row.int(1)?,
                ));
                Ok(())
            })?;
            let triples: BTreeSet<(i64, Option<i64>, i64)> = parts.into_iter().flatten().collect();
            for (pid, ctx, device) in triples {
                if let Some(ctx) = ctx {
                    map.by_context.insert((pid, ctx), device);
                }
                map.by_process.entry(pid).or_default().insert(device);
            }
        }
        Ok(map)
    }

    /// Every device that ran GPU work, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let all: BTreeSet<i64> = self.by_process.values().flatten().copied().collect();
        all.into_iter().collect()
    }

    /// The device of a context of a process (None when no GPU row names that context).
    pub fn of_context(&self, global_pid: i64, context: i64) -> Option<i64> {
        self.by_context
            .get(&(global_pid & PID_MASK, context))
            .copied()
    }

    /// The one device a process ran GPU work on (None when it used none or several).
    pub fn only_device_of(&self, global_pid: i64) -> Option<i64> {
        match self.by_process.get(&(global_pid & PID_MASK)) {
            Some(devices) if devices.len() == 1 => devices.first().copied(),
            _ => None,
        }
    }

    /// The processes (pid bits) that ran GPU work on `device`.
    pub fn processes_of(&self, device: i64) -> IdSet<i64> {
        self.by_process
            .iter()
            .filter(|(_, devices)| devices.contains(&device))
            .map(|(pid, _)| *pid)
            .collect()
    }
}
