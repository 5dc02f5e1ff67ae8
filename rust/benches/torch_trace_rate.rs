//! Rate of `gpuopt torch summary` (open + link + every summary breakdown + the JSON document) against
//! sonic-rs parsing the same file alone, each in its own child process, alternating, in the same run
//! (run by hand; no timing assertions anywhere):
//!
//! `cargo bench --bench torch_trace_rate -- FILE [--rounds 5] [--threads 2] [--cpus 0,1] [--baseline EXE]`
//!
//! The peer reads the file and builds sonic-rs's `Value` of the whole document on one thread (sonic-rs
//! has no parallel parse): the parse step a tool built on a SIMD JSON parser cannot avoid. Build it for
//! the machine's SIMD (`RUSTFLAGS="-C target-cpu=native"`, else sonic-rs takes its SSE2 fallback);
//! gpuopt's own code chooses nothing at compile time. `--cpus` pins each child with `taskset`;
//! `--threads` sets `RAYON_NUM_THREADS` for gpuopt. Prints each run, then the medians: wall seconds,
//! MB/s (10^6 bytes), CPU seconds (user + sys, from `/proc/self/stat`), peak RSS as a multiple of the
//! file, and the ratio of the rates. `--baseline EXE` runs another build of this bench (an earlier
//! commit's, say) as a third child in each round and prints its rate beside: old and new measured in
//! the same run. `-- --child gpuopt|sonic|phases FILE` runs one child (`phases`:
//! the read, the link and the summary timed apart, with their CPU seconds and page faults); `-- --child
//! dump FILE` prints the summary document, to compare two builds' answers.

use sonic_rs::{JsonContainerTrait, JsonValueTrait};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// One child's measurement.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    seconds: f64,
    cpu_seconds: f64,
    rss_kib: u64,
}

/// Fields of `/proc/self/stat` after the command name (which may hold spaces, so after the last
/// `)`): `i` counts from the state, field 3 of the whole line.
fn stat_field(i: usize) -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    after
        .split_whitespace()
        .nth(i)
        .and_then(|f| f.parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// User + system CPU seconds of this process so far (`/proc/self/stat`, clock ticks of 1/100 s).
fn cpu_seconds() -> f64 {
    // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the name.
    (stat_field(11) + stat_field(12)) / 100.0
}

/// Minor page faults of this process so far (field 10 of `/proc/self/stat`): each one a fresh page
/// the kernel zeroed, a cost that instruction counts do not show.
fn minor_faults() -> f64 {
    stat_field(7)
}

/// CPU seconds and minor faults since `since` (from [`usage`]), as JSON fields named `name_*`.
fn usage_since(name: &str, since: (f64, f64)) -> String {
    let (cpu, faults) = usage();
    format!(
        "\"{name}_cpu_s\": {:.2}, \"{name}_faults\": {}",
        cpu - since.0,
        faults - since.1
    )
}

fn usage() -> (f64, f64) {
    (cpu_seconds(), minor_faults())
}

/// Peak resident memory of this process (`VmHWM`), KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn child(kind: &str, path: &Path) -> Res<()> {
    let t0 = Instant::now();
    let detail = match kind {
        "gpuopt" => {
            let set = _native::torch_trace::open(path)?;
            let summary = _native::torch_trace::summary::summary(&set, 30_000);
            let doc = serde_json::to_vec(&summary)?;
            format!("\"summary_bytes\": {}", doc.len())
        }
        "phases" => {
            // Read and link alone (timed), then the whole open again and the summary; CPU seconds
            // and minor page faults of each step too.
            let before = usage();
            let read = _native::torch_trace::reader::read_path(path)?;
            let read_s = t0.elapsed().as_secs_f64();
            let read_use = usage_since("read", before);
            let before = usage();
            let links = _native::torch_trace::links::link(&read.events);
            let link_s = t0.elapsed().as_secs_f64() - read_s;
            let link_use = usage_since("link", before);
            drop((read, links));
            let t0 = Instant::now();
            let set = _native::torch_trace::open(path)?;
            let t1 = t0.elapsed().as_secs_f64();
            let before = usage();
            let summary = _native::torch_trace::summary::summary(&set, 30_000);
            let doc = serde_json::to_vec(&summary)?;
            let t2 = t0.elapsed().as_secs_f64();
            let summary_use = usage_since("summary", before);
            format!(
                "\"read_s\": {read_s:.3}, {read_use}, \"link_s\": {link_s:.3}, {link_use}, \"open_s\": {t1:.3}, \"summary_s\": {:.3}, {summary_use}, \"summary_bytes\": {}",
                t2 - t1,
                doc.len()
            )
        }
        "dump" => {
            // The whole summary document, to compare two builds' answers on one file.
            let set = _native::torch_trace::open(path)?;
            let summary = _native::torch_trace::summary::summary(&set, 30_000);
            println!("{}", serde_json::to_string_pretty(&summary)?);
            return Ok(());
        }
        "sonic" => {
            let bytes = std::fs::read(path)?;
            let value: sonic_rs::Value = sonic_rs::from_slice(&bytes)?;
            let events = value
                .get("traceEvents")
                .and_then(|v| v.as_array())
                .map_or(0, |a| a.len());
            format!("\"events\": {events}")
        }
        other => return Err(format!("unknown child {other}").into()),
    };
    let seconds = t0.elapsed().as_secs_f64();
    println!(
        "{{\"seconds\": {seconds:.4}, \"cpu_seconds\": {:.2}, \"rss_kib\": {}, {detail}}}",
        cpu_seconds(),
        peak_rss_kib()
    );
    Ok(())
}

fn number(line: &str, key: &str) -> f64 {
    line.split(&format!("\"{key}\": "))
        .nth(1)
        .and_then(|rest| rest.split([',', '}']).next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::NAN)
}

/// Runs one child of `exe` (this bench, or `--baseline`'s build of it).
fn spawn(
    exe: &Path,
    kind: &str,
    path: &Path,
    threads: &str,
    cpus: Option<&str>,
) -> Res<(Run, String)> {
    let mut cmd = match cpus {
        Some(cpus) => {
            let mut c = Command::new("taskset");
            c.args(["-c", cpus]).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    cmd.args(["--child", kind]).arg(path);
    cmd.env("RAYON_NUM_THREADS", threads);
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!(
            "{kind} child failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let run = Run {
        seconds: number(&line, "seconds"),
        cpu_seconds: number(&line, "cpu_seconds"),
        rss_kib: number(&line, "rss_kib") as u64,
    };
    Ok((run, line))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if let (Some("--child"), Some(kind), Some(path)) =
        (args.first().map(String::as_str), args.get(1), args.get(2))
    {
        return child(kind, Path::new(path));
    }
    let mut path = None;
    let (mut rounds, mut threads, mut cpus, mut peer) = (5_usize, "2".to_owned(), None, true);
    let mut baseline: Option<std::path::PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--rounds" => rounds = it.next().ok_or("--rounds N")?.parse()?,
            "--threads" => threads = it.next().ok_or("--threads N")?.clone(),
            "--cpus" => cpus = Some(it.next().ok_or("--cpus LIST")?.clone()),
            "--no-peer" => peer = false,
            "--baseline" => baseline = Some(it.next().ok_or("--baseline EXE")?.into()),
            other => path = Some(other.to_owned()),
        }
    }
    let path = path.ok_or(
        "usage: torch_trace_rate FILE [--rounds N] [--threads N] [--cpus 0,1] [--baseline EXE]",
    )?;
    let exe = std::env::current_exe()?;
    let path = Path::new(&path);
    let mb = std::fs::metadata(path)?.len() as f64 / 1e6;
    println!(
        "{} ({mb:.0} MB), {rounds} rounds, gpuopt with {threads} threads, cpus {}, load {} (before)",
        path.display(),
        cpus.as_deref().unwrap_or("any"),
        load_average()
    );
    let mut mine = Vec::new();
    let mut before = Vec::new();
    let mut theirs = Vec::new();
    for round in 0..rounds {
        let (run, _) = spawn(&exe, "gpuopt", path, &threads, cpus.as_deref())?;
        println!(
            "  round {round}: gpuopt {:.3} s ({:.0} MB/s), CPU {:.2} s, RSS {:.2}x file",
            run.seconds,
            mb / run.seconds,
            run.cpu_seconds,
            run.rss_kib as f64 * 1024.0 / 1e6 / mb
        );
        mine.push(run);
        if let Some(other) = &baseline {
            let (run, _) = spawn(other, "gpuopt", path, &threads, cpus.as_deref())?;
            println!(
                "  round {round}: baseline {:.3} s ({:.0} MB/s), CPU {:.2} s, RSS {:.2}x file",
                run.seconds,
                mb / run.seconds,
                run.cpu_seconds,
                run.rss_kib as f64 * 1024.0 / 1e6 / mb
            );
            before.push(run);
        }
        if peer {
            let (run, _) = spawn(&exe, "sonic", path, &threads, cpus.as_deref())?;
            println!(
                "  round {round}: sonic-rs {:.3} s ({:.0} MB/s), CPU {:.2} s, RSS {:.2}x file",
                run.seconds,
                mb / run.seconds,
                run.cpu_seconds,
                run.rss_kib as f64 * 1024.0 / 1e6 / mb
            );
            theirs.push(run);
        }
    }
    let summarize = |label: &str, runs: &[Run]| -> f64 {
        let secs = median(runs.iter().map(|r| r.seconds).collect());
        let cpu = median(runs.iter().map(|r| r.cpu_seconds).collect());
        let rss = runs.iter().map(|r| r.rss_kib).max().unwrap_or(0) as f64 * 1024.0 / 1e6;
        println!(
            "{label:<8} median {secs:.3} s, {:.0} MB/s, CPU {cpu:.2} s, peak RSS {:.2}x file",
            mb / secs,
            rss / mb
        );
        mb / secs
    };
    let mine_rate = summarize("gpuopt", &mine);
    if baseline.is_some() {
        let before_rate = summarize("baseline", &before);
        println!(
            "ratio    gpuopt / baseline (the same summary, the build given): {:.2}x",
            mine_rate / before_rate
        );
    }
    if peer {
        let their_rate = summarize("sonic-rs", &theirs);
        println!(
            "ratio    gpuopt summary / sonic-rs parse alone: {:.2}x (load {} after)",
            mine_rate / their_rate,
            load_average()
        );
    }
    Ok(())
}
