//! The analyses' results as Arrow tables, exactly the columns `super::fields` declares.

use super::activity::Activity;
use super::critical::{Category, Node, Path};
use super::fields;
use super::iterations::{Iterations, Row};
use super::queue::{Level, Queue};
use super::sequences::Pattern;
use crate::error::Result;
use crate::table::Table;
use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
use std::sync::Arc;

fn int(values: Vec<i64>) -> ArrayRef {
    Arc::new(Int64Array::from(values))
}

fn opt_int(values: Vec<Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from(values))
}

fn float(values: Vec<f64>) -> ArrayRef {
    Arc::new(Float64Array::from(values))
}

fn text(values: Vec<Option<String>>) -> ArrayRef {
    Arc::new(StringArray::from(values))
}

fn n(v: usize) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[allow(clippy::cast_precision_loss)]
fn pct(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// One row per iteration or odd stretch, of every source, per device.
pub fn iterations(a: &Activity, it: &Iterations) -> Result<Table> {
    let rows: Vec<&Row> = it.rows.iter().collect();
    let col = |f: &dyn Fn(&Row) -> Option<i64>| opt_int(rows.iter().map(|r| f(r)).collect());
    let txt = |f: &dyn Fn(&Row) -> Option<String>| text(rows.iter().map(|r| f(r)).collect());
    Table::declared(
        fields::ITERATIONS,
        vec![
            ("device_id", col(&|r| Some(r.device))),
            ("source", txt(&|r| Some(r.source_name.to_string()))),
            ("row", col(&|r| Some(n(r.index)))),
            ("iteration", col(&|r| r.iteration.map(n))),
            ("name", txt(&|r| r.name.clone())),
            (
                "thread",
                txt(&|r| r.thread.map(|t| a.thread_label(t).to_string())),
            ),
            ("host_start_ns", col(&|r| r.host_start)),
            ("start_ns", col(&|r| r.m.start)),
            ("end_ns", col(&|r| r.m.end)),
            ("span_ns", col(&|r| r.m.span)),
            ("extent_ns", col(&|r| r.m.extent())),
            ("gpu_busy_ns", col(&|r| Some(r.m.busy))),
            ("kernels", col(&|r| Some(r.m.kernels))),
            ("memory_ops", col(&|r| Some(r.m.memory_ops))),
            ("graph_executions", col(&|r| Some(r.m.graph_executions))),
            ("gpu_ops", col(&|r| Some(n(r.ops.len())))),
            ("odd", txt(&|r| r.odd.map(str::to_string))),
            ("odd_rule", txt(&|r| r.odd_rule.clone())),
        ],
    )
}

/// Per step: the critical path's extent and its time by category.
pub fn critical_summary(paths: &[Path], rows: &[&Row]) -> Result<Table> {
    let row_of = |p: &Path| rows.get(p.row).copied();
    let col = |f: &dyn Fn(&Path) -> Option<i64>| opt_int(paths.iter().map(f).collect());
    let mut columns: Vec<(&str, ArrayRef)> = vec![
        ("device_id", col(&|p| row_of(p).map(|r| r.device))),
        (
            "source",
            text(
                paths
                    .iter()
                    .map(|p| row_of(p).map(|r| r.source_name.to_string()))
                    .collect(),
            ),
        ),
        ("row", col(&|p| row_of(p).map(|r| n(r.index)))),
        (
            "iteration",
            col(&|p| row_of(p).and_then(|r| r.iteration.map(n))),
        ),
        (
            "name",
            text(
                paths
                    .iter()
                    .map(|p| row_of(p).and_then(|r| r.name.clone()))
                    .collect(),
            ),
        ),
        ("start_ns", col(&|p| Some(p.start))),
        ("end_ns", col(&|p| Some(p.end))),
        ("span_ns", col(&|p| Some(p.end - p.start))),
    ];
    let names = [
        "cpu_ns",
        "launch_ns",
        "gpu_compute_ns",
        "gpu_memory_ns",
        "sync_ns",
        "idle_ns",
    ];
    for (name, c) in names.into_iter().zip(Category::ALL) {
        columns.push((name, int(paths.iter().map(|p| p.total(c)).collect())));
    }
    columns.push(("ops_on_path", int(paths.iter().map(|p| n(p.ops)).collect())));
    columns.push((
        "calls_on_path",
        int(paths.iter().map(|p| n(p.calls)).collect()),
    ));
    columns.push(("segments", int(paths.iter().map(|p| n(p.count)).collect())));
    Table::declared(fields::CRITICAL_PATH, columns)
}

/// The stretches the paths kept, in table order, and how many stretches there are in all.
pub fn critical_edges(a: &Activity, paths: &[Path], rows: &[&Row]) -> Result<(Table, usize)> {
    let all: usize = paths.iter().map(|p| p.count).sum();
    let total: usize = paths.iter().map(|p| p.segments.len()).sum();
    let mut device = Vec::with_capacity(total);
    let mut row = Vec::with_capacity(total);
    let mut seq = Vec::with_capacity(total);
    let (mut start, mut end, mut dur) = (
        Vec::with_capacity(total),
        Vec::with_capacity(total),
        Vec::with_capacity(total),
    );
    // Strings straight into the arrays (no String per row: a path can have millions of stretches).
    let texts = || StringBuilder::with_capacity(total, 8 * total);
    let (mut category, mut edge, mut node, mut name, mut thread) =
        (texts(), texts(), texts(), texts(), texts());
    let mut stream = Vec::with_capacity(total);
    for p in paths {
        let r = rows.get(p.row).copied();
        for (k, s) in p.segments.iter().enumerate() {
            device.push(r.map(|r| r.device));
            row.push(r.map(|r| n(r.index)));
            seq.push(n(k));
            start.push(s.start);
            end.push(s.end);
            dur.push(s.end - s.start);
            category.append_value(s.category.as_str());
            edge.append_value(s.edge.as_str());
            let (kind, label, st, th) = describe(a, s.node);
            node.append_value(kind);
            name.append_option(label);
            stream.push(st);
            thread.append_option(th);
        }
    }
    let table = Table::declared(
        fields::CRITICAL_PATH_EDGES,
        vec![
            ("device_id", opt_int(device)),
            ("row", opt_int(row)),
            ("seq", int(seq)),
            ("start_ns", int(start)),
            ("end_ns", int(end)),
            ("duration_ns", int(dur)),
            ("category", Arc::new(category.finish())),
            ("edge", Arc::new(edge.finish())),
            ("node", Arc::new(node.finish())),
            ("name", Arc::new(name.finish())),
            ("stream_id", opt_int(stream)),
            ("thread", Arc::new(thread.finish())),
        ],
    )?;
    Ok((table, all))
}

/// (node kind, name, stream, thread) of a path node.
fn describe(a: &Activity, node: Node) -> (&'static str, Option<&str>, Option<i64>, Option<&str>) {
    match node {
        Node::Op(i) => match a.ops.get(i as usize) {
            Some(op) => (
                op.class.as_str(),
                Some(a.name(op.name)),
                Some(a.lane(op).stream),
                None,
            ),
            None => ("kernel", None, None, None),
        },
        Node::Call(c) => match a.call(c) {
            Some(call) => (
                "call",
                Some(a.name(call.name)),
                None,
                Some(a.thread_label(call.thread)),
            ),
            None => ("call", None, None, None),
        },
        Node::HostGap(t) => ("host", None, None, Some(a.thread_label(t))),
        Node::GpuWait(i) => (
            "gpu_wait",
            a.ops.get(i as usize).map(|o| a.name(o.name)),
            a.ops.get(i as usize).map(|o| a.lane(o).stream),
            None,
        ),
    }
}

/// Queue facts per stream and per device.
pub fn queues(q: &[Queue]) -> Result<Table> {
    let col = |f: &dyn Fn(&Queue) -> i64| int(q.iter().map(f).collect());
    let pc =
        |f: &dyn Fn(&Queue) -> i64| float(q.iter().map(|x| pct(f(x), x.window.len())).collect());
    Table::declared(
        fields::QUEUE,
        vec![
            ("device_id", col(&|x| x.device)),
            ("stream_id", opt_int(q.iter().map(|x| x.stream).collect())),
            ("operations", col(&|x| n(x.operations))),
            ("window_start_ns", col(&|x| x.window.start)),
            ("window_end_ns", col(&|x| x.window.end)),
            ("window_ns", col(&|x| x.window.len())),
            ("busy_ns", col(&|x| x.busy)),
            ("launch_bound_idle_ns", col(&|x| x.launch_bound_idle)),
            ("queued_idle_ns", col(&|x| x.queued_idle)),
            ("host_sync_ns", col(&|x| x.host_sync)),
            ("busy_pct", pc(&|x| x.busy)),
            ("launch_bound_pct", pc(&|x| x.launch_bound_idle)),
            ("queued_idle_pct", pc(&|x| x.queued_idle)),
            ("host_sync_pct", pc(&|x| x.host_sync)),
            ("max_depth", col(&|x| x.max_depth)),
            (
                "mean_depth",
                float(q.iter().map(|x| x.mean_depth).collect()),
            ),
            ("without_call", col(&|x| n(x.without_call))),
        ],
    )
}

/// The depth of each queue over time: stretches of constant depth.
pub fn levels(l: &[Level]) -> Result<Table> {
    Table::declared(
        fields::QUEUE_SERIES,
        vec![
            ("device_id", int(l.iter().map(|x| x.device).collect())),
            ("stream_id", opt_int(l.iter().map(|x| x.stream).collect())),
            ("start_ns", int(l.iter().map(|x| x.start).collect())),
            ("end_ns", int(l.iter().map(|x| x.end).collect())),
            (
                "duration_ns",
                int(l.iter().map(|x| x.end - x.start).collect()),
            ),
            ("depth", int(l.iter().map(|x| x.depth).collect())),
            ("running", int(l.iter().map(|x| x.running).collect())),
        ],
    )
}

/// The patterns, each with its names joined by " → ".
pub fn sequences(a: &Activity, patterns: &[Pattern]) -> Result<Table> {
    let mean = |total: i64, count: usize| {
        #[allow(clippy::cast_precision_loss)]
        if count == 0 {
            0.0
        } else {
            total as f64 / count as f64
        }
    };
    Table::declared(
        fields::SEQUENCES,
        vec![
            (
                "device_id",
                int(patterns.iter().map(|p| p.device).collect()),
            ),
            (
                "kind",
                text(patterns.iter().map(|p| Some(p.kind.to_string())).collect()),
            ),
            (
                "n",
                int(patterns.iter().map(|p| n(p.names.len())).collect()),
            ),
            ("count", int(patterns.iter().map(|p| n(p.count)).collect())),
            (
                "gpu_time_ns",
                int(patterns.iter().map(|p| p.gpu_time).collect()),
            ),
            (
                "gpu_time_per_instance_ns",
                float(patterns.iter().map(|p| mean(p.gpu_time, p.count)).collect()),
            ),
            (
                "span_per_instance_ns",
                float(
                    patterns
                        .iter()
                        .map(|p| mean(p.span_total, p.count))
                        .collect(),
                ),
            ),
            (
                "first_start_ns",
                int(patterns.iter().map(|p| p.first_start).collect()),
            ),
            (
                "kernels",
                text(
                    patterns
                        .iter()
                        .map(|p| {
                            Some(
                                p.names
                                    .iter()
                                    .map(|&i| a.name(i))
                                    .collect::<Vec<_>>()
                                    .join(" → "),
                            )
                        })
                        .collect(),
                ),
            ),
        ],
    )
}

/// `table` with a leading `rank` column holding `rank` (the traces of a Kineto job).
pub fn with_rank(table: Table, rank: i64) -> Result<Table> {
    use arrow_array::RecordBatch;
    use arrow_schema::{DataType, Field, Schema};
    let mut fields = vec![Arc::new(Field::new("rank", DataType::Int64, true))];
    fields.extend(table.schema.fields().iter().cloned());
    let schema = Arc::new(Schema::new(fields));
    let mut batches = Vec::with_capacity(table.batches.len());
    for batch in table.batches {
        let mut columns: Vec<ArrayRef> = vec![int(vec![rank; batch.num_rows()])];
        columns.extend(batch.columns().iter().cloned());
        batches.push(RecordBatch::try_new(schema.clone(), columns).map_err(|e| {
            crate::error::Error::internal(
                "table_invalid",
                format!("cannot add the rank column: {e}"),
            )
        })?);
    }
    Ok(Table { schema, batches })
}

/// The batches of tables with one schema, as one table (None when there are none).
pub fn concat(tables: Vec<Table>) -> Option<Table> {
    let mut iter = tables.into_iter();
    let mut first = iter.next()?;
    for t in iter {
        first.batches.extend(t.batches);
    }
    Some(first)
}
