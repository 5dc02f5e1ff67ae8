//! The scan as Arrow tables: one row per function, per (function, opcode), per (function, signature).

use super::fields;
use super::instruction::CLASSES;
use super::listing::Listing;
use super::signatures::{evaluate, Catalog};
use crate::error::Result;
use crate::table::Table;
use arrow_array::builder::{ListBuilder, StringBuilder, StructBuilder, UInt64Builder};
use arrow_array::{ArrayRef, Int64Array, StringArray, UInt32Array};
use arrow_schema::{DataType, Field, Fields};
use std::sync::Arc;

fn i64s(values: impl Iterator<Item = u64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(
        values.map(|v| i64::try_from(v).unwrap_or(i64::MAX)),
    ))
}

fn opt_i64s(values: impl Iterator<Item = Option<u32>>) -> ArrayRef {
    Arc::new(Int64Array::from_iter(values.map(|v| v.map(i64::from))))
}

fn strings<'a>(values: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

fn opt_strings(values: impl Iterator<Item = Option<String>>) -> ArrayRef {
    Arc::new(StringArray::from_iter(values))
}

/// One row per function: identity, counts, resources (nvdisasm only) and one `<class>_count` per class.
pub fn functions_table(listing: &Listing) -> Result<Table> {
    let fs = &listing.functions;
    let mut columns: Vec<(String, ArrayRef)> = vec![
        (
            "function_index".into(),
            Arc::new(UInt32Array::from_iter_values(
                fs.iter()
                    .map(|f| u32::try_from(f.index).unwrap_or(u32::MAX)),
            )),
        ),
        (
            "cubin_index".into(),
            Arc::new(UInt32Array::from_iter_values(
                fs.iter().map(|f| f.cubin_index),
            )),
        ),
        ("arch".into(), opt_strings(arch_names(listing).into_iter())),
        (
            "function".into(),
            strings(fs.iter().map(|f| f.name.as_str())),
        ),
        (
            "instruction_count".into(),
            i64s(fs.iter().map(|f| f.instruction_count)),
        ),
        (
            "padding_nop_count".into(),
            i64s(fs.iter().map(|f| f.padding_nop_count)),
        ),
        (
            "predicated_count".into(),
            i64s(fs.iter().map(|f| f.predicated_count)),
        ),
        (
            "backward_branch_count".into(),
            i64s(fs.iter().map(|f| f.backward_branch_count)),
        ),
        ("registers".into(), opt_i64s(fs.iter().map(|f| f.registers))),
        (
            "frame_size_bytes".into(),
            opt_i64s(fs.iter().map(|f| f.frame_size_bytes)),
        ),
        (
            "min_stack_size_bytes".into(),
            opt_i64s(fs.iter().map(|f| f.min_stack_size_bytes)),
        ),
        (
            "line_info_count".into(),
            i64s(fs.iter().map(|f| f.line_info_count)),
        ),
        (
            "distinct_opcode_count".into(),
            i64s(fs.iter().map(|f| f.opcode_counts.len() as u64)),
        ),
    ];
    for (slot, (_, name)) in CLASSES.iter().enumerate() {
        columns.push((
            format!("{name}_count"),
            i64s(
                fs.iter()
                    .map(|f| f.class_counts.get(slot).copied().unwrap_or(0)),
            ),
        ));
    }
    columns.push((
        "integer_division_rcp_count".into(),
        i64s(fs.iter().map(|f| f.integer_division_rcp_count)),
    ));
    Table::declared(
        fields::FUNCTIONS,
        columns
            .iter()
            .map(|(n, a)| (n.as_str(), a.clone()))
            .collect(),
    )
}

/// Architecture names per function, computed once (tables repeat them on many rows).
fn arch_names(listing: &Listing) -> Vec<Option<String>> {
    listing
        .functions
        .iter()
        .map(|f| f.arch.map(|a| a.name()))
        .collect()
}

/// One row per (function, full opcode): the histogram, padding excluded.
pub fn opcodes_table(listing: &Listing) -> Result<Table> {
    let archs = arch_names(listing);
    // Per distinct opcode, once: (text, base, class, width).
    let per_opcode: Vec<(&str, &str, Option<&'static str>, Option<u32>)> = listing
        .opcodes
        .iter()
        .map(|i| {
            let class = i.class_names().first().copied();
            (
                i.text.as_str(),
                i.base(),
                class,
                i.width_bits.map(u32::from),
            )
        })
        .collect();
    let rows: Vec<(usize, usize, u64)> = listing
        .functions
        .iter()
        .enumerate()
        .flat_map(|(k, f)| {
            f.opcode_counts
                .iter()
                .map(move |(id, n)| (k, *id as usize, *n))
        })
        .collect();
    let op = |id: usize| per_opcode.get(id).copied().unwrap_or(("", "", None, None));
    let function = |k: usize| listing.functions.get(k);
    Table::declared(
        fields::OPCODES,
        vec![
            (
                "function_index",
                Arc::new(UInt32Array::from_iter_values(rows.iter().map(
                    |(k, _, _)| {
                        function(*k)
                            .map_or(u32::MAX, |f| u32::try_from(f.index).unwrap_or(u32::MAX))
                    },
                ))) as ArrayRef,
            ),
            (
                "arch",
                Arc::new(StringArray::from_iter(
                    rows.iter()
                        .map(|(k, _, _)| archs.get(*k).and_then(|a| a.as_deref())),
                )),
            ),
            (
                "function",
                strings(
                    rows.iter()
                        .map(|(k, _, _)| function(*k).map_or("", |f| f.name.as_str())),
                ),
            ),
            ("opcode", strings(rows.iter().map(|(_, id, _)| op(*id).0))),
            ("base", strings(rows.iter().map(|(_, id, _)| op(*id).1))),
            (
                "class",
                Arc::new(StringArray::from_iter(
                    rows.iter().map(|(_, id, _)| op(*id).2),
                )),
            ),
            (
                "width_bits",
                opt_i64s(rows.iter().map(|(_, id, _)| op(*id).3)),
            ),
            ("count", i64s(rows.iter().map(|(_, _, n)| *n))),
        ],
    )
}

/// One row per (function, signature): status, which patterns matched or not, and evidence lines.
pub fn signatures_table(listing: &Listing, catalog: &Catalog) -> Result<Table> {
    let archs = arch_names(listing);
    let displays: Vec<Vec<String>> = catalog
        .signatures
        .iter()
        .map(|s| {
            s.patterns
                .iter()
                .map(super::signatures::Pattern::display)
                .collect()
        })
        .collect();
    let mut index = Vec::new();
    let mut arch = Vec::new();
    let mut function = Vec::new();
    let mut key = Vec::new();
    let mut mechanism = Vec::new();
    let mut require = Vec::new();
    let mut status = Vec::new();
    let mut match_count = Vec::new();
    let mut matched = ListBuilder::new(StringBuilder::new());
    let mut missing = ListBuilder::new(StringBuilder::new());
    let evidence_fields = Fields::from(vec![
        Field::new("address", DataType::UInt64, false),
        Field::new("pattern", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
    ]);
    let mut evidence =
        ListBuilder::new(StructBuilder::from_fields(evidence_fields.clone(), 0)).with_field(
            Arc::new(Field::new("item", DataType::Struct(evidence_fields), true)),
        );
    for (k, f) in listing.functions.iter().enumerate() {
        let arch_name = archs.get(k).and_then(|a| a.as_deref());
        for (si, sig) in catalog.signatures.iter().enumerate() {
            let (st, counts) = evaluate(sig, f.arch, &f.hits);
            let shown = displays.get(si);
            index.push(u32::try_from(f.index).unwrap_or(u32::MAX));
            arch.push(arch_name);
            function.push(f.name.as_str());
            key.push(sig.key.as_str());
            mechanism.push(sig.mechanism.as_str());
            require.push(match sig.require {
                super::signatures::Require::Any => "any",
                super::signatures::Require::All => "all",
            });
            status.push(st.name());
            match_count.push(counts.iter().sum::<u64>());
            for (j, count) in counts.iter().enumerate() {
                let name = shown.and_then(|d| d.get(j)).map_or("", String::as_str);
                if *count > 0 {
                    matched.values().append_value(name);
                } else {
                    missing.values().append_value(name);
                }
            }
            matched.append(true);
            missing.append(true);
            for j in 0..sig.patterns.len() {
                let idx = sig.first_pattern + j;
                let Some(hit) = f.hits.iter().find(|h| usize::from(h.pattern) == idx) else {
                    continue;
                };
                let name = shown.and_then(|d| d.get(j)).map_or("", String::as_str);
                for e in &hit.evidence {
                    let item = evidence.values();
                    if let Some(b) = item.field_builder::<UInt64Builder>(0) {
                        b.append_value(e.address);
                    }
                    if let Some(b) = item.field_builder::<StringBuilder>(1) {
                        b.append_value(name);
                    }
                    if let Some(b) = item.field_builder::<StringBuilder>(2) {
                        b.append_value(&e.text);
                    }
                    item.append(true);
                }
            }
            evidence.append(true);
        }
    }
    Table::declared(
        fields::SIGNATURES,
        vec![
            (
                "function_index",
                Arc::new(UInt32Array::from(index)) as ArrayRef,
            ),
            ("arch", Arc::new(StringArray::from(arch))),
            ("function", Arc::new(StringArray::from(function))),
            ("signature", Arc::new(StringArray::from(key))),
            ("mechanism", Arc::new(StringArray::from(mechanism))),
            ("require", Arc::new(StringArray::from(require))),
            ("status", Arc::new(StringArray::from(status))),
            ("match_count", i64s(match_count.into_iter())),
            ("matched_patterns", Arc::new(matched.finish())),
            ("missing_patterns", Arc::new(missing.finish())),
            ("evidence", Arc::new(evidence.finish())),
        ],
    )
}
