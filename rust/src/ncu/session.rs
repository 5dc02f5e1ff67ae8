//! `ncu --csv --page session`: titled blocks of two-column (or device-column) tables. It carries what a
//! raw or details page lacks: the ncu version, the profiler command line and the device attributes.

use super::codes;
use super::csv::{fields, record, split_records};
use super::model::{version_number, ToolInfo};
use crate::error::{Error, Result};
use serde::Serialize;

/// What the session page states.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Session {
    pub tool: ToolInfo,
    pub cuda_version: Option<String>,
    pub host_name: Option<String>,
    pub processes: Vec<(String, String)>,
    /// `(attribute, [value per device])`.
    pub device_attributes: Vec<(String, Vec<String>)>,
}

/// Parses a session page.
pub fn read(data: &[u8]) -> Result<Session> {
    let records = split_records(data)?;
    let mut session = Session {
        tool: ToolInfo {
            version_source: "session-csv".to_string(),
            ..ToolInfo::default()
        },
        ..Session::default()
    };
    let mut block: Option<String> = None;
    let mut saw_table = false;
    let mut after_title = false;
    for i in 0..records.len() {
        let line = record(data, &records, i);
        if line.iter().all(u8::is_ascii_whitespace) {
            block = None;
            continue;
        }
        if !line.starts_with(b"\"") {
            block = Some(String::from_utf8_lossy(line).trim().to_string());
            after_title = true;
            continue;
        }
        let cells: Vec<String> = fields(line)?
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        if after_title {
            after_title = false; // the column header of this block
            saw_table = true;
            continue;
        }
        let key = cells.first().cloned().unwrap_or_default();
        let rest: Vec<String> = cells.get(1..).unwrap_or_default().to_vec();
        let value = rest.first().cloned().unwrap_or_default();
        match block.as_deref() {
            Some("Launch Settings") if key == "Profiler Command Line" => {
                session.tool.command_line = Some(value.trim().to_string());
            }
            Some("Session Info") => match key.as_str() {
                "Nsight Compute Target" => {
                    session.tool.version = version_number(&value);
                    session.tool.version_text = Some(value);
                }
                "CUDA Version" => session.cuda_version = Some(value),
                "Host Name" => session.host_name = Some(value),
                _ => {}
            },
            Some("Processes") => session.processes.push((key, value)),
            Some("Device Attributes") => session.device_attributes.push((key, rest)),
            _ => {}
        }
    }
    if !saw_table {
        return Err(Error::input(
            codes::FORMAT_INVALID,
            "not an ncu session page: no titled tables",
        )
        .with_expected("ncu --csv --page session output (Launch Settings, Session Info, ...)"));
    }
    Ok(session)
}

impl Session {
    /// A device attribute of device `device` (`multiprocessor_count`, `display_name`, ...).
    pub fn device_attribute(&self, name: &str, device: usize) -> Option<&str> {
        self.device_attributes
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, values)| values.get(device))
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_fixture_session_page() {
        let path = crate::testdata::fixtures().join("h200/ncu/kernels_full.session.csv");
        let data = std::fs::read(path).unwrap();
        let s = read(&data).unwrap();
        assert_eq!(s.tool.version.as_deref(), Some("2025.3.1.0"));
        assert_eq!(
            s.tool.version_text.as_deref(),
            Some("2025.3.1.0 (build 36398880) (public-release)")
        );
        assert!(s
            .tool
            .command_line
            .as_deref()
            .unwrap()
            .contains("--clock-control none --set full"));
        assert_eq!(s.cuda_version.as_deref(), Some("13.0"));
        assert_eq!(s.device_attribute("display_name", 0), Some("NVIDIA H200"));
        assert_eq!(s.device_attribute("multiprocessor_count", 0), Some("132"));
        assert_eq!(
            s.processes,
            vec![("562".to_string(), "/tmp/w/kernels_bin".to_string())]
        );
    }

    #[test]
    fn a_raw_page_is_not_a_session_page() {
        let e = read(b"no tables here\n").unwrap_err();
        assert_eq!(e.code, codes::FORMAT_INVALID);
    }
}
