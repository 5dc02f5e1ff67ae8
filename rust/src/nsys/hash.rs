//! The id maps of the nsys scans, on the crate's one hasher ([`crate::fxhash`]).

pub type IdMap<K, V> = crate::fxhash::FxHashMap<K, V>;
pub type IdSet<K> = crate::fxhash::FxHashSet<K>;
