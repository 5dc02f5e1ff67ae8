//! Bindings for the statistics engine. Numbers come in as little-endian byte buffers (float64 values,
//! uint64 call offsets, uint32 case codes, uint8 orders/validity), options as JSON; results go out as
//! JSON documents and Arrow tables.

use super::arrow::ArrowTable;
use super::{json, run};
use crate::error::{Error, Result};
use crate::stats::compare::{self, Cases, PairedInput, UnpairedBlocks, UnpairedInput};
use crate::stats::constraint::{self, GuardrailMode, Limit};
use crate::stats::effect::{Direction, EffectScale};
use crate::stats::estimators::Estimator;
use crate::stats::quantile::{Calls, WithinCall};
use crate::stats::rng::{KeyPrefix, Part, Stream, RNG_NAME};
use crate::stats::sample_file::{self, ReadOptions, SampleFile};
use crate::stats::schedule::{self, Order};
use crate::stats::verdict::LimitOp;
use crate::stats::{codes, noise, resolution, simulate, tables, CompareOptions};
use pyo3::prelude::*;
use serde::Serialize;
use std::path::PathBuf;

fn invalid(what: &str, message: &str) -> Error {
    Error::input(codes::STATISTICS_INVALID, format!("{what}: {message}"))
        .with_path(what.to_string())
}

fn words<const N: usize>(what: &str, bytes: &[u8]) -> Result<Vec<[u8; N]>> {
    if !bytes.len().is_multiple_of(N) {
        return Err(invalid(
            what,
            &format!("byte length is not a multiple of {N}"),
        ));
    }
    Ok(bytes
        .chunks_exact(N)
        .map(|c| {
            let mut w = [0u8; N];
            w.copy_from_slice(c);
            w
        })
        .collect())
}

fn f64s(what: &str, bytes: &[u8]) -> Result<Vec<f64>> {
    Ok(words::<8>(what, bytes)?
        .into_iter()
        .map(f64::from_le_bytes)
        .collect())
}

fn calls(what: &str, values: &[u8], offsets: Option<&[u8]>) -> Result<Calls> {
    let values = f64s(what, values)?;
    match offsets {
        None => Ok(Calls::from_values(values)),
        Some(o) => {
            let offsets = words::<8>(what, o)?
                .into_iter()
                .map(|w| usize::try_from(u64::from_le_bytes(w)).unwrap_or(usize::MAX))
                .collect();
            Calls::from_offsets(values, offsets)
        }
    }
}

fn options(bytes: &[u8]) -> Result<CompareOptions> {
    serde_json::from_slice(bytes).map_err(|e| invalid("options", &e.to_string()))
}

fn orders(bytes: Option<&[u8]>) -> Result<Option<Vec<Order>>> {
    bytes
        .map(|b| {
            b.iter()
                .map(|&o| match o {
                    0 => Ok(Order::Ab),
                    1 => Ok(Order::Ba),
                    _ => Err(invalid("orders", "each order is 0 (AB) or 1 (BA)")),
                })
                .collect()
        })
        .transpose()
}

/// The per-pair extras of a paired input.
struct Extras<'a> {
    cases: Option<&'a [u8]>,
    case_names: Option<Vec<String>>,
    case_weights: Option<Vec<f64>>,
    orders: Option<&'a [u8]>,
    valid: Option<&'a [u8]>,
}

fn paired(baseline: Calls, candidate: Calls, extras: Extras<'_>) -> Result<PairedInput> {
    let cases = match (extras.cases, extras.case_names) {
        (Some(codes_bytes), Some(names)) => Some(Cases {
            case_of: words::<4>("cases", codes_bytes)?
                .into_iter()
                .map(|w| u32::from_le_bytes(w) as usize)
                .collect(),
            names,
            weights: extras.case_weights,
        }),
        (None, None) if extras.case_weights.is_none() => None,
        _ => {
            return Err(invalid(
                "cases",
                "case codes, names (and weights) go together",
            ))
        }
    };
    Ok(PairedInput {
        baseline,
        candidate,
        cases,
        orders: orders(extras.orders)?,
        valid: extras.valid.map(|v| v.iter().map(|&b| b != 0).collect()),
        keys: None,
        blocks: None,
    })
}

/// `stats_compare(...) -> (bytes, ArrowTable)`: a paired comparison (JSON) and its pairs table.
#[pyfunction]
#[pyo3(signature = (baseline, candidate, options_json, *, baseline_offsets=None, candidate_offsets=None,
    cases=None, case_names=None, case_weights=None, orders=None, valid=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_compare(
    py: Python<'_>,
    baseline: &[u8],
    candidate: &[u8],
    options_json: &[u8],
    baseline_offsets: Option<&[u8]>,
    candidate_offsets: Option<&[u8]>,
    cases: Option<&[u8]>,
    case_names: Option<Vec<String>>,
    case_weights: Option<Vec<f64>>,
    orders: Option<&[u8]>,
    valid: Option<&[u8]>,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    let (doc, table) = run(py, || {
        let opts = options(options_json)?;
        let input = paired(
            calls("baseline", baseline, baseline_offsets)?,
            calls("candidate", candidate, candidate_offsets)?,
            Extras {
                cases,
                case_names,
                case_weights,
                orders,
                valid,
            },
        )?;
        let outcome = compare::compare(&input, &opts)?;
        let table = tables::pairs_table(&input, &outcome)?;
        Ok((outcome.comparison, table))
    })?;
    Ok((json(&doc)?, table.into()))
}

/// `stats_compare_unpaired(...) -> (bytes, ArrowTable)`: two independent samples.
#[pyfunction]
#[pyo3(signature = (baseline, candidate, options_json, *, baseline_offsets=None, candidate_offsets=None))]
pub fn stats_compare_unpaired(
    py: Python<'_>,
    baseline: &[u8],
    candidate: &[u8],
    options_json: &[u8],
    baseline_offsets: Option<&[u8]>,
    candidate_offsets: Option<&[u8]>,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    let (doc, table) = run(py, || {
        let opts = options(options_json)?;
        let input = UnpairedInput {
            baseline: calls("baseline", baseline, baseline_offsets)?,
            candidate: calls("candidate", candidate, candidate_offsets)?,
            blocks: None,
        };
        let outcome = compare::compare_unpaired(&input, &opts)?;
        let table = tables::unpaired_table(&input, &outcome)?;
        Ok((outcome.comparison, table))
    })?;
    Ok((json(&doc)?, table.into()))
}

/// What was read from one sample file.
#[derive(Serialize)]
struct FileFacts {
    path: String,
    format: &'static str,
    value_column: Option<String>,
    rows: usize,
    calls: usize,
    unmodeled_columns: Vec<String>,
}

impl From<&SampleFile> for FileFacts {
    fn from(f: &SampleFile) -> Self {
        Self {
            path: f.path.clone(),
            format: f.format,
            value_column: f.value_column.clone(),
            rows: f.rows,
            calls: f.calls.len(),
            unmodeled_columns: f.unmodeled_columns.clone(),
        }
    }
}

#[derive(Serialize)]
struct FileComparison<T: Serialize> {
    files: Vec<FileFacts>,
    #[serde(flatten)]
    result: T,
}

fn read_options(bytes: &[u8]) -> Result<ReadOptions> {
    serde_json::from_slice(bytes).map_err(|e| invalid("read_options", &e.to_string()))
}

/// `stats_compare_files(baseline, candidate, read_json, options_json, unpaired)`: reads two sample
/// files and compares them; JSON `{files, comparison}` and the pairs (or values) table.
#[pyfunction]
pub fn stats_compare_files(
    py: Python<'_>,
    baseline: PathBuf,
    candidate: PathBuf,
    read_json: &[u8],
    options_json: &[u8],
    unpaired: bool,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    #[derive(Serialize)]
    struct Doc {
        comparison: compare::Comparison,
    }
    let (doc, table) = run(py, || {
        let opts = options(options_json)?;
        let read = read_options(read_json)?;
        let base = sample_file::read(&baseline, &read)?;
        let cand = sample_file::read(&candidate, &read)?;
        let files = vec![FileFacts::from(&base), FileFacts::from(&cand)];
        if unpaired {
            let blocks = match (
                sample_file::blocks(base.blocks.as_deref(), &read),
                sample_file::blocks(cand.blocks.as_deref(), &read),
            ) {
                (Some(baseline), Some(candidate)) => Some(UnpairedBlocks {
                    baseline,
                    candidate,
                }),
                _ => None,
            };
            let input = UnpairedInput {
                baseline: base.calls,
                candidate: cand.calls,
                blocks,
            };
            let outcome = compare::compare_unpaired(&input, &opts)?;
            let table = tables::unpaired_table(&input, &outcome)?;
            return Ok((
                FileComparison {
                    files,
                    result: Doc {
                        comparison: outcome.comparison,
                    },
                },
                table,
            ));
        }
        let labels = base.blocks.clone();
        let mut input = sample_file::pair(base, cand)?;
        input.blocks = sample_file::blocks(labels.as_deref(), &read);
        let outcome = compare::compare(&input, &opts)?;
        let table = tables::pairs_table(&input, &outcome)?;
        Ok((
            FileComparison {
                files,
                result: Doc {
                    comparison: outcome.comparison,
                },
            },
            table,
        ))
    })?;
    Ok((json(&doc)?, table.into()))
}

/// `stats_noise(first, second, options_json, at, ...) -> (bytes, ArrowTable)`: noise from A/A pairs.
#[pyfunction]
#[pyo3(signature = (first, second, options_json, at, *, first_offsets=None, second_offsets=None,
    orders=None, valid=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_noise(
    py: Python<'_>,
    first: &[u8],
    second: &[u8],
    options_json: &[u8],
    at: Vec<usize>,
    first_offsets: Option<&[u8]>,
    second_offsets: Option<&[u8]>,
    orders: Option<&[u8]>,
    valid: Option<&[u8]>,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    let (doc, table) = run(py, || {
        let opts = options(options_json)?;
        let input = paired(
            calls("first", first, first_offsets)?,
            calls("second", second, second_offsets)?,
            Extras {
                cases: None,
                case_names: None,
                case_weights: None,
                orders,
                valid,
            },
        )?;
        noise_with_table(&input, &opts, &at)
    })?;
    Ok((json(&doc)?, table.into()))
}

fn noise_with_table(
    input: &PairedInput,
    opts: &CompareOptions,
    at: &[usize],
) -> Result<(noise::NoiseReport, crate::table::Table)> {
    let outcome = noise::noise(input, opts, at)?;
    let rows = compare::PairedOutcome {
        comparison: outcome.report.aa.clone(),
        rows: outcome.rows,
    };
    let table = tables::pairs_table(input, &rows)?;
    Ok((outcome.report, table))
}

/// `stats_noise_file(path, first_column, second_column, read_json, options_json, at)`: noise from one
/// file holding both A/A values of each pair in two columns.
#[pyfunction]
pub fn stats_noise_file(
    py: Python<'_>,
    path: PathBuf,
    first_column: String,
    second_column: String,
    read_json: &[u8],
    options_json: &[u8],
    at: Vec<usize>,
) -> PyResult<(Vec<u8>, ArrowTable)> {
    #[derive(Serialize)]
    struct Doc {
        noise: noise::NoiseReport,
    }
    let (doc, table) = run(py, || {
        let opts = options(options_json)?;
        let read = read_options(read_json)?;
        let first = sample_file::read(
            &path,
            &ReadOptions {
                column: Some(first_column),
                ..read.clone()
            },
        )?;
        let second = sample_file::read(
            &path,
            &ReadOptions {
                column: Some(second_column.clone()),
                ..read
            },
        )?;
        let mut facts = FileFacts::from(&first);
        facts.unmodeled_columns.retain(|c| *c != second_column);
        let input = sample_file::pair(first, second)?;
        let (report, table) = noise_with_table(&input, &opts, &at)?;
        Ok((
            FileComparison {
                files: vec![facts],
                result: Doc { noise: report },
            },
            table,
        ))
    })?;
    Ok((json(&doc)?, table.into()))
}

/// `stats_simulate(options_json) -> bytes`: the honesty harness's report.
#[pyfunction]
pub fn stats_simulate(py: Python<'_>, options_json: &[u8]) -> PyResult<Vec<u8>> {
    let report = run(py, || {
        let opts: simulate::SimulationOptions = serde_json::from_slice(options_json)
            .map_err(|e| invalid("simulation options", &e.to_string()))?;
        simulate::run(&opts)
    })?;
    json(&report)
}

/// `stats_schedule(pairs, seed) -> bytes`: a seeded balanced AB/BA schedule.
#[pyfunction]
pub fn stats_schedule(py: Python<'_>, pairs: usize, seed: u64) -> PyResult<Vec<u8>> {
    #[derive(Serialize)]
    struct Doc {
        rng: &'static str,
        seed: u64,
        pairs: usize,
        orders: Vec<Order>,
    }
    let doc = run(py, || {
        if seed > crate::stats::rng::MAX_EXACT_INT {
            return Err(invalid("seed", "0 to 2^53 − 1"));
        }
        if pairs > 10_000_000 {
            return Err(invalid("pairs", "at most 10000000"));
        }
        Ok(Doc {
            rng: RNG_NAME,
            seed,
            pairs,
            orders: schedule::balanced(pairs, seed),
        })
    })?;
    json(&doc)
}

/// `stats_rng_draws(tag, parts_json, count) -> bytes`: JSON `{rng, key, draws}`, the first `count`
/// 64-bit outputs of the stream (tag, parts) — for cross-checking `gpuopt.rng/v1` elsewhere.
#[pyfunction]
pub fn stats_rng_draws(
    py: Python<'_>,
    tag: &str,
    parts_json: &[u8],
    count: usize,
) -> PyResult<Vec<u8>> {
    #[derive(Serialize)]
    struct Doc {
        rng: &'static str,
        key: u64,
        draws: Vec<u64>,
    }
    let doc = run(py, || {
        let parts: Vec<serde_json::Value> =
            serde_json::from_slice(parts_json).map_err(|e| invalid("parts", &e.to_string()))?;
        let mut prefix = KeyPrefix::new(tag, &[]);
        for p in &parts {
            match p {
                serde_json::Value::String(s) => prefix.push(Part::Str(s)),
                serde_json::Value::Number(n) => match n.as_u64() {
                    Some(v) if v <= crate::stats::rng::MAX_EXACT_INT => prefix.push(Part::Int(v)),
                    _ => return Err(invalid("parts", "integers must be 0 to 2^53 − 1")),
                },
                _ => return Err(invalid("parts", "each part is a string or an integer")),
            }
        }
        let key = prefix.key();
        let mut stream = Stream::from_key(key);
        let draws = (0..count.min(1_000_000))
            .map(|_| stream.next_u64())
            .collect();
        Ok(Doc {
            rng: RNG_NAME,
            key,
            draws,
        })
    })?;
    json(&doc)
}

/// `stats_constraint(baseline, candidate, options_json, limit_json, ...) -> bytes`: a relative or
/// absolute non-inferiority constraint (JSON `ConstraintResult`).
#[pyfunction]
#[pyo3(signature = (baseline, candidate, options_json, limit_json, *, baseline_offsets=None,
    candidate_offsets=None, valid=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_constraint(
    py: Python<'_>,
    baseline: &[u8],
    candidate: &[u8],
    options_json: &[u8],
    limit_json: &[u8],
    baseline_offsets: Option<&[u8]>,
    candidate_offsets: Option<&[u8]>,
    valid: Option<&[u8]>,
) -> PyResult<Vec<u8>> {
    let result = run(py, || {
        let opts = options(options_json)?;
        let limit: Limit =
            serde_json::from_slice(limit_json).map_err(|e| invalid("limit", &e.to_string()))?;
        let input = paired(
            calls("baseline", baseline, baseline_offsets)?,
            calls("candidate", candidate, candidate_offsets)?,
            Extras {
                cases: None,
                case_names: None,
                case_weights: None,
                orders: None,
                valid,
            },
        )?;
        constraint::constraint(&input, &opts, limit)
    })?;
    json(&result)
}

/// `stats_guardrail(candidate, options_json, op, limit, mode, ...) -> bytes`: an absolute guardrail on
/// the candidate's values (JSON `GuardrailResult`).
#[pyfunction]
#[pyo3(signature = (candidate, options_json, op, limit, mode, *, candidate_offsets=None, valid=None))]
#[allow(clippy::too_many_arguments)]
pub fn stats_guardrail(
    py: Python<'_>,
    candidate: &[u8],
    options_json: &[u8],
    op: &str,
    limit: f64,
    mode: &str,
    candidate_offsets: Option<&[u8]>,
    valid: Option<&[u8]>,
) -> PyResult<Vec<u8>> {
    let result = run(py, || {
        let opts = options(options_json)?;
        let op = match op {
            "le" => LimitOp::Le,
            "ge" => LimitOp::Ge,
            _ => return Err(invalid("op", "le or ge")),
        };
        let mode = match mode {
            "every_call" => GuardrailMode::EveryCall,
            "ci" => GuardrailMode::Ci,
            _ => return Err(invalid("mode", "every_call or ci")),
        };
        let cand = calls("candidate", candidate, candidate_offsets)?;
        let valid: Option<Vec<bool>> = valid.map(|v| v.iter().map(|&b| b != 0).collect());
        if let Some(v) = &valid {
            if v.len() != cand.len() {
                return Err(invalid("valid", "one flag per call"));
            }
        }
        constraint::guardrail(&cand, valid.as_deref(), &opts, op, limit, mode)
    })?;
    json(&result)
}

fn named<T: serde::de::DeserializeOwned>(what: &str, name: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(name.to_string()))
        .map_err(|e| invalid(what, &e.to_string()))
}

fn f64_bytes(values: impl Iterator<Item = f64>) -> Vec<u8> {
    values.flat_map(f64::to_le_bytes).collect()
}

/// `stats_summarize(values, offsets, within_call) -> bytes`: each call's within-call summary (float64,
/// the value a pair holds for that call).
#[pyfunction]
pub fn stats_summarize(
    py: Python<'_>,
    values: &[u8],
    offsets: &[u8],
    within_call: &str,
) -> PyResult<Vec<u8>> {
    run(py, || {
        let how: WithinCall = named("within_call", within_call)?;
        let calls = calls("values", values, Some(offsets))?;
        Ok(f64_bytes(
            (0..calls.len()).map(|i| how.summarize(calls.call(i)).unwrap_or(f64::NAN)),
        ))
    })
}

/// `stats_pair_effects(reference, candidate, direction, effect_scale) -> bytes`: each pair's effect
/// (float64, > 0 = candidate better); NaN where a value is not finite and positive.
#[pyfunction]
pub fn stats_pair_effects(
    py: Python<'_>,
    reference: &[u8],
    candidate: &[u8],
    direction: &str,
    effect_scale: &str,
) -> PyResult<Vec<u8>> {
    run(py, || {
        let direction: Direction = named("direction", direction)?;
        let scale: EffectScale = named("effect_scale", effect_scale)?;
        let reference = f64s("reference", reference)?;
        let candidate = f64s("candidate", candidate)?;
        if reference.len() != candidate.len() {
            return Err(invalid("candidate", "as many values as the reference"));
        }
        let usable = |v: f64| v.is_finite() && v > 0.0;
        Ok(f64_bytes(reference.iter().zip(&candidate).map(
            |(&r, &c)| {
                if usable(r) && usable(c) {
                    scale.pair_effect(direction, r, c)
                } else {
                    f64::NAN
                }
            },
        )))
    })
}

/// `stats_mde_pct(sd_log, n, estimator, confidence, power) -> float`: the minimum detectable effect at
/// n pairs that an A/A SD predicts, as a percentage (the noise report's normal approximation).
#[pyfunction]
pub fn stats_mde_pct(
    py: Python<'_>,
    sd_log: f64,
    n: usize,
    estimator: &str,
    confidence: f64,
    power: f64,
) -> PyResult<f64> {
    run(py, || {
        let estimator: Estimator = named("estimator", estimator)?;
        if !(sd_log.is_finite() && sd_log >= 0.0) {
            return Err(invalid("sd_log", "a finite number >= 0"));
        }
        if !(confidence > 0.0 && confidence < 1.0 && power > 0.0 && power < 1.0) {
            return Err(invalid("confidence", "confidence and power in (0, 1)"));
        }
        let mde = resolution::Resolving::new(sd_log, estimator, confidence, power).mde(n);
        Ok(EffectScale::LogRatio.to_pct(mde))
    })
}

/// `stats_input_seed(plan_seed, pair_index, case_id) -> int`: the 53-bit seed a workload driver receives
/// for one call, `key("input", seed, pair_index, case_id) >> 11` of `gpuopt.rng/v1`.
#[pyfunction]
pub fn stats_input_seed(
    py: Python<'_>,
    plan_seed: u64,
    pair_index: u64,
    case_id: &str,
) -> PyResult<u64> {
    run(py, || {
        if plan_seed > crate::stats::rng::MAX_EXACT_INT
            || pair_index > crate::stats::rng::MAX_EXACT_INT
        {
            return Err(invalid("seed", "0 to 2^53 − 1"));
        }
        Ok(crate::stats::rng::input_seed(
            plan_seed, pair_index, case_id,
        ))
    })
}
