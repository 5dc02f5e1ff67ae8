//! The artifact store of the evaluation core: canonical JSON, content-addressed trees with blob-level dedupe,
//! write-once records, the compare-and-swap pointer and the append-only ledger, all through dirfds that
//! never follow a symbolic link below the root.

pub mod canonical;
pub mod fsx;
pub mod glob;
pub mod ids;
pub mod ledger;
pub mod probe;
pub mod records;
pub mod tree;

/// Stable error codes of the store (spec §3.1, "input" and "store" rows).
pub mod codes {
    pub const JSON_INVALID: &str = "json_invalid";
    pub const ROOT_EXISTS: &str = "root_exists";
    pub const ROOT_NOT_FOUND: &str = "root_not_found";
    pub const STORAGE_UNSUPPORTED: &str = "storage_unsupported";
    pub const PATH_UNSAFE: &str = "path_unsafe";
    pub const OBJECT_SYMLINK: &str = "object_symlink";
    pub const OBJECT_SPECIAL_FILE: &str = "object_special_file";
    pub const OBJECT_CHANGED_DURING_READ: &str = "object_changed_during_read";
    pub const OBJECT_LIMIT_EXCEEDED: &str = "object_limit_exceeded";
    pub const OBJECT_NAME_INVALID: &str = "object_name_invalid";
    pub const OBJECT_CORRUPT: &str = "object_corrupt";
    pub const OBJECT_NOT_FOUND: &str = "object_not_found";
    pub const DESTINATION_EXISTS: &str = "destination_exists";
    pub const RECORD_CHANGED: &str = "record_changed";
    pub const RECORD_INVALID: &str = "record_invalid";
    pub const RECORD_CONFLICT: &str = "record_conflict";
    pub const RECORD_NOT_FOUND: &str = "record_not_found";
    pub const LEDGER_CORRUPT: &str = "ledger_corrupt";
    pub const STALE_REFERENCE: &str = "stale_reference";
    pub const STORE_IO: &str = "store_io_failed";
}
