//! gpuopt's native engines. Everything outside `py/` is free of pyo3 and tested by `cargo test`.

pub mod analyses;
pub mod build_info;
pub mod column;
pub mod comm;
pub mod error;
pub mod fields;
#[cfg(test)]
mod fuzz;
pub mod fxhash;
pub mod identity;
pub mod intervals;
pub mod map;
pub mod names;
pub mod ncu;
pub mod nsys;
pub mod peaks;
pub mod perfetto;
pub mod profile;
pub mod ranks;
pub mod runtime;
pub mod sass;
pub mod shape;
pub mod stats;
pub mod store;
pub mod table;
#[cfg(test)]
pub(crate) mod testdata;
pub mod torch_trace;

#[cfg(feature = "python")]
mod py;
