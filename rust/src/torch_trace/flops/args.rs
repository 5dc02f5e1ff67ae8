//! An op's `record_shapes` arguments, read from the JSON texts the trace keeps (`Input Dims`,
//! `Input type`, `Concrete Inputs`): one [`Arg`] per position, and the element types Kineto names.

use crate::torch_trace::interned::ShapeRecord;
use serde_json::Value;

/// What a floating-point element type is computed as, for the peak it is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Precision {
    Fp64,
    Fp32,
    Bf16,
    Fp16,
    Fp8,
    /// Integers and booleans: no FLOP peak applies.
    Int,
    Complex,
}

impl Precision {
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp64 => "fp64",
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
            Precision::Fp8 => "fp8",
            Precision::Int => "int",
            Precision::Complex => "complex",
        }
    }
}

/// A tensor element type as Kineto prints it (`Input type`), with its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DType {
    pub bytes: u64,
    pub precision: Precision,
    /// PyTorch's promotion category: 0 bool, 1 integer, 2 floating, 3 complex.
    pub category: u8,
}

/// The element type of a Kineto type name, or `None` for anything that is not a tensor dtype
/// (`Scalar`, `ScalarList`, `TensorList`, `''` for None, ...).
pub fn dtype(name: &str) -> Option<DType> {
    let (bytes, precision, category) = match name {
        "double" => (8, Precision::Fp64, 2),
        "float" => (4, Precision::Fp32, 2),
        "c10::BFloat16" => (2, Precision::Bf16, 2),
        "c10::Half" => (2, Precision::Fp16, 2),
        "c10::Float8_e4m3fn"
        | "c10::Float8_e5m2"
        | "c10::Float8_e4m3fnuz"
        | "c10::Float8_e5m2fnuz"
        | "c10::Float8_e8m0fnu" => (1, Precision::Fp8, 2),
        "long int" | "int64_t" => (8, Precision::Int, 1),
        "int" => (4, Precision::Int, 1),
        "short int" => (2, Precision::Int, 1),
        "signed char" | "unsigned char" => (1, Precision::Int, 1),
        "bool" => (1, Precision::Int, 0),
        "c10::complex<float>" => (8, Precision::Complex, 3),
        "c10::complex<double>" => (16, Precision::Complex, 3),
        "c10::complex<c10::Half>" => (4, Precision::Complex, 3),
        _ => return None,
    };
    Some(DType {
        bytes,
        precision,
        category,
    })
}

/// One argument position.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A tensor: its dims (empty for a 0-d tensor) and element type.
    Tensor { dims: Vec<u64>, dtype: DType },
    /// Anything else, with its type name and concrete value text (`''` when not recorded).
    Other { kind: String, value: String },
}

impl Arg {
    pub fn tensor(&self) -> Option<(&[u64], DType)> {
        match self {
            Arg::Tensor { dims, dtype } => Some((dims, *dtype)),
            Arg::Other { .. } => None,
        }
    }

    /// The concrete value text of a non-tensor argument.
    pub fn value(&self) -> Option<&str> {
        match self {
            Arg::Other { value, .. } => Some(value),
            Arg::Tensor { .. } => None,
        }
    }
}

/// Elements of a tensor with `dims`; `None` on overflow.
pub fn numel(dims: &[u64]) -> Option<u64> {
    dims.iter().try_fold(1_u64, |acc, &d| acc.checked_mul(d))
}

/// Why a record could not be read as arguments.
pub type Unread = &'static str;

fn texts(text: Option<&str>) -> Result<Option<Vec<Value>>, Unread> {
    let Some(text) = text else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => Ok(Some(items)),
        _ => Err("a record_shapes argument is not a JSON array"),
    }
}

fn dims_of(value: &Value) -> Option<Vec<u64>> {
    value
        .as_array()?
        .iter()
        .map(Value::as_u64)
        .collect::<Option<Vec<u64>>>()
}

/// The arguments of a record: a tensor where the type names a dtype and the dims are integers.
pub fn parse(record: &ShapeRecord) -> Result<Vec<Arg>, Unread> {
    let Some(dims) = texts(record.dims.as_deref())? else {
        return Err("no Input Dims recorded (record_shapes off)");
    };
    let types = texts(record.types.as_deref())?.unwrap_or_default();
    let concrete = texts(record.concrete.as_deref())?.unwrap_or_default();
    let text_at = |items: &[Value], i: usize| -> String {
        items
            .get(i)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    Ok(dims
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let kind = text_at(&types, i);
            match (dtype(&kind), dims_of(d)) {
                (Some(dtype), Some(dims)) => Arg::Tensor { dims, dtype },
                _ => Arg::Other {
                    kind,
                    value: text_at(&concrete, i),
                },
            }
        })
        .collect())
}

/// A `ScalarList` value such as `[1, 1]`.
pub fn int_list(text: &str) -> Option<Vec<i64>> {
    serde_json::from_str::<Vec<i64>>(text).ok()
}

/// A boolean `Scalar` value (`True`/`False`).
pub fn flag(text: &str) -> Option<bool> {
    match text {
        "True" | "true" | "1" => Some(true),
        "False" | "false" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(dims: &str, types: &str, concrete: &str) -> ShapeRecord {
        ShapeRecord {
            dims: Some(dims.into()),
            types: Some(types.into()),
            concrete: Some(concrete.into()),
        }
    }

    #[test]
    fn tensors_scalars_and_nones() {
        let r = record(
            "[[4, 256, 1], [], []]",
            r#"["float", "double", "Scalar"]"#,
            r#"["", "", "1"]"#,
        );
        let args = parse(&r).unwrap();
        assert_eq!(args[0].tensor().unwrap().0, &[4, 256, 1]);
        assert_eq!(args[1].tensor().unwrap().0, &[] as &[u64]);
        assert_eq!(args[1].tensor().unwrap().1.precision, Precision::Fp64);
        assert_eq!(args[2].value(), Some("1"));
        assert_eq!(int_list("[1, 2]"), Some(vec![1, 2]));
        assert_eq!(flag("False"), Some(false));
    }

    #[test]
    fn records_without_dims_are_unread() {
        let r = ShapeRecord {
            dims: None,
            types: Some("[]".into()),
            concrete: None,
        };
        assert!(parse(&r).is_err());
        assert!(parse(&record("{}", "[]", "[]")).is_err());
    }
}
