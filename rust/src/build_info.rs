//! What native code this is: version, source digest, compiler, target. Stamped by `rust/build.rs`.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct BuildInfo {
    pub version: &'static str,
    /// SHA-256 over the crate's sources and manifests (first 16 hex digits name the build).
    pub build_id: &'static str,
    pub source_sha256: &'static str,
    pub profile: &'static str,
    pub target: &'static str,
    pub rustc: &'static str,
}

pub fn build_info() -> BuildInfo {
    let source_sha256 = env!("GPUOPT_SOURCE_SHA256");
    BuildInfo {
        version: env!("CARGO_PKG_VERSION"),
        build_id: source_sha256.get(..16).unwrap_or(source_sha256),
        source_sha256,
        profile: env!("GPUOPT_BUILD_PROFILE"),
        target: env!("GPUOPT_BUILD_TARGET"),
        rustc: env!("GPUOPT_RUSTC_VERSION"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn build_id_is_a_sha256_prefix() {
        let info = super::build_info();
        assert_eq!(info.source_sha256.len(), 64);
        assert!(info.source_sha256.starts_with(info.build_id));
        assert_eq!(info.build_id.len(), 16);
    }
}
