//! `/proc` facts: pid, parent, group, session, state and start token (field 22 of `/proc/<pid>/stat`, the
//! start time in clock ticks, which a reused pid cannot repeat).

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
    pub state: char,
    pub start_token: u64,
}

/// Parses the text of `/proc/<pid>/stat`; the command name may hold spaces and parentheses.
pub fn parse_stat(text: &str) -> Option<ProcInfo> {
    let (head, rest) = text.rsplit_once(')')?;
    let pid: i32 = head.split_once('(')?.0.trim().parse().ok()?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (state); field N is fields[N - 3].
    Some(ProcInfo {
        pid,
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgid: fields.get(2)?.parse().ok()?,
        sid: fields.get(3)?.parse().ok()?,
        start_token: fields.get(19)?.parse().ok()?,
    })
}

/// Facts about one process, `None` when it does not exist (or vanished while read).
pub fn read_proc(pid: i32) -> Option<ProcInfo> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// The start token of `pid` as a decimal string.
pub fn start_token(pid: i32) -> Option<String> {
    read_proc(pid).map(|p| p.start_token.to_string())
}

/// Every process visible in `/proc`.
pub fn scan() -> Vec<ProcInfo> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter_map(read_proc)
        .collect()
}

/// Whether `pid`'s initial environment holds exactly the entry `KEY=VALUE` (unreadable = no).
pub fn environ_has(pid: i32, entry: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|env| env.split(|b| *b == 0).any(|e| e == entry.as_bytes()))
        .unwrap_or(false)
}

/// The descendants of `root` among `all` (not `root` itself).
pub fn descendants(all: &[ProcInfo], root: i32) -> Vec<ProcInfo> {
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for p in all.iter().filter(|p| p.ppid == parent && p.pid != root) {
            if !out.iter().any(|o: &ProcInfo| o.pid == p.pid) {
                frontier.push(p.pid);
                out.push(p.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_odd_command_names() {
        let text = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        let p = parse_stat(text).unwrap();
        assert_eq!(
            (p.pid, p.state, p.ppid, p.pgid, p.sid, p.start_token),
            (4242, 'S', 1, 4242, 4242, 987654)
        );
    }
}
