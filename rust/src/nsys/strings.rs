//! `StringIds`, interned: each id maps to one canonical index (equal strings share it), so that rows
//! are grouped by a small integer and a name is materialized once per output row, never per event.

use super::codes;
use super::db;
use super::hash::IdMap;
use super::schema::{Schema, STRING_IDS};
use crate::error::{Error, Result};

/// Largest id for which the id → index lookup is a flat array (ids in nsys exports are dense).
const DENSE_LIMIT: i64 = 1 << 24;
const ABSENT: u32 = u32::MAX;

/// The interned string table of one export.
#[derive(Debug, Clone, Default)]
pub struct Strings {
    dense: Vec<u32>,
    sparse: IdMap<i64, u32>,
    values: Vec<String>,
}

impl Strings {
    pub fn load(schema: &Schema) -> Result<Self> {
        let table = schema
            .table(&STRING_IDS)
            .map(|t| t.actual.clone())
            .unwrap_or_else(|| STRING_IDS.name.to_string());
        let rows = db::query_all(
            &schema.uri,
            &schema.path,
            &format!("SELECT id, value FROM \"{table}\""),
            |row| {
                Ok((
                    db::int(row, 0, &table, "id")?,
                    db::opt_text(row, 1)?.unwrap_or_default(),
                ))
            },
        )?;
        Ok(Self::from_pairs(rows))
    }

    /// Builds the table from `(id, value)` pairs; equal values share one index.
    pub fn from_pairs(rows: Vec<(i64, String)>) -> Self {
        let max_id = rows.iter().map(|(id, _)| *id).max().unwrap_or(-1);
        let min_id = rows.iter().map(|(id, _)| *id).min().unwrap_or(0);
        let dense_ok = min_id >= 0 && max_id < DENSE_LIMIT;
        let mut out = Self {
            dense: if dense_ok {
                vec![ABSENT; usize::try_from(max_id + 1).unwrap_or(0)]
            } else {
                Vec::new()
            },
            ..Self::default()
        };
        let mut by_value: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        for (id, value) in rows {
            let next = u32::try_from(out.values.len()).unwrap_or(ABSENT);
            let idx = *by_value.entry(value.clone()).or_insert_with(|| {
                out.values.push(value);
                next
            });
            if let Some(slot) = usize::try_from(id).ok().and_then(|i| out.dense.get_mut(i)) {
                *slot = idx;
            } else {
                out.sparse.insert(id, idx);
            }
        }
        out
    }

    /// The canonical index of a string id, or None when the id is not in `StringIds`.
    #[inline]
    pub fn index(&self, id: i64) -> Option<u32> {
        let found = match usize::try_from(id).ok().and_then(|i| self.dense.get(i)) {
            Some(&idx) => Some(idx),
            None => self.sparse.get(&id).copied(),
        };
        found.filter(|&idx| idx != ABSENT)
    }

    /// Like [`Strings::index`], but a missing id is a typed error naming where it was referenced.
    #[inline]
    pub fn resolve(&self, id: i64, table: &str, column: &str) -> Result<u32> {
        self.index(id).ok_or_else(|| dangling(id, table, column))
    }

    /// The string at a canonical index.
    pub fn value(&self, idx: u32) -> &str {
        usize::try_from(idx)
            .ok()
            .and_then(|i| self.values.get(i))
            .map_or("", String::as_str)
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// The error for a reference to a string id that `StringIds` lacks.
pub fn dangling(id: i64, table: &str, column: &str) -> Error {
    Error::input(
        codes::STRING_DANGLING,
        format!("{table}.{column} refers to string id {id}, which StringIds does not hold"),
    )
    .with_expected(format!("every {table}.{column} present in StringIds.id"))
    .with_observed(format!("id {id}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_an_index_and_missing_ids_are_none() {
        let s = Strings::from_pairs(vec![
            (0, "a".into()),
            (1, "b".into()),
            (5, "a".into()),
            (-3, "neg".into()),
        ]);
        // A negative id forces the sparse map; lookups still work.
        assert_eq!(s.index(0), s.index(5));
        assert_ne!(s.index(0), s.index(1));
        assert_eq!(s.index(2), None);
        assert_eq!(s.value(s.index(-3).unwrap_or(0)), "neg");
        assert_eq!(s.len(), 3);
        assert_eq!(
            s.resolve(9, "T", "c").map_err(|e| e.code),
            Err(codes::STRING_DANGLING)
        );
    }

    #[test]
    fn dense_table_lookup() {
        let s = Strings::from_pairs(vec![(2, "x".into()), (3, "y".into())]);
        assert_eq!(s.value(s.index(3).unwrap_or(0)), "y");
        assert_eq!(s.index(1), None);
        assert_eq!(s.index(100), None);
    }
}
