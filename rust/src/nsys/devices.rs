//! Which device each process and CUDA context ran work on, from the GPU activity rows themselves
//! (kernels, memcpys, memsets: every row names its `deviceId`, `contextId` and process).
//!
//! This is how per-device facts attribute CPU-side events: an API call belongs to the device of its
//! process, and a synchronization to the device of the context it waited on. The export's
//! `SYNCHRONIZATION.deviceId` is not used: nsys writes 0 there for every process (seen in the public
//! 2-GPU H100 exports, where the second process's context 2 runs on device 1).

use super::db;
use super::hash::{IdMap, IdSet};
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
    pub fn load(schema: &Schema) -> Result<Self> {
        let mut map = Self::default();
        for source in [&KERNEL, &MEMCPY, &MEMSET] {
            let Some(table) = schema.table(source) else {
                continue;
            };
            let name = table.actual.clone();
            let context = if schema.has_column(source, "contextId") {
                "contextId"
            } else {
                "NULL"
            };
            let sql = format!("SELECT DISTINCT globalPid, {context}, deviceId FROM \"{name}\"");
            let rows = db::query_all(&schema.uri, &schema.path, &sql, |row| {
                Ok((
                    db::opt_int(row, 0, &name, "globalPid")?.unwrap_or(0) & PID_MASK,
                    db::opt_int(row, 1, &name, "contextId")?,
                    db::int(row, 2, &name, "deviceId")?,
                ))
            })?;
            for (pid, ctx, device) in rows {
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

    /// The processes (pid bits) that ran GPU work on `device`.
    pub fn processes_of(&self, device: i64) -> IdSet<i64> {
        self.by_process
            .iter()
            .filter(|(_, devices)| devices.contains(&device))
            .map(|(pid, _)| *pid)
            .collect()
    }
}
