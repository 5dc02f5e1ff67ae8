//! gpuopt's native engines. Everything outside `py/` is free of pyo3 and tested by `cargo test`.

pub mod build_info;
pub mod error;
pub mod identity;
pub mod intervals;
pub mod nsys;
pub mod table;

#[cfg(feature = "python")]
mod py;
