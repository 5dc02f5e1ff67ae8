//! What a formula answers: the kind of work an op is, and its FLOPs, bytes and precision.

use crate::torch_trace::flops::args::{DType, Precision};

/// What kind of work an op is, for its formula and the peak it is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Gemm,
    Conv,
    Attention,
    AttentionBackward,
    Elementwise,
    Reduction,
    Norm,
    Copy,
    Fill,
    /// Views, reshapes and allocations: no kernel, no work.
    View,
    /// Ops whose work is done by the ops they call (`aten::to`, `aten::clone`, ...).
    Composite,
    Unmodeled,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Gemm => "gemm",
            Class::Conv => "conv",
            Class::Attention => "attention",
            Class::AttentionBackward => "attention_backward",
            Class::Elementwise => "elementwise",
            Class::Reduction => "reduction",
            Class::Norm => "norm",
            Class::Copy => "copy",
            Class::Fill => "fill",
            Class::View => "view",
            Class::Composite => "composite",
            Class::Unmodeled => "unmodeled",
        }
    }

    /// Whether the op has a work formula of its own (it then hides the ops inside it from totals).
    pub fn has_work(self) -> bool {
        !matches!(self, Class::View | Class::Composite | Class::Unmodeled)
    }

    /// Matrix work (tensor cores where the dtype allows): what model FLOPs and MFU count.
    pub fn is_matrix(self) -> bool {
        matches!(
            self,
            Class::Gemm | Class::Conv | Class::Attention | Class::AttentionBackward
        )
    }
}

/// The formula's answer for one op and shape record.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub class: Class,
    pub precision: Option<Precision>,
    pub flop: Option<u64>,
    pub bytes: Option<u64>,
    /// Why the op is unmodeled (with `Class::Unmodeled`), or what its bytes leave out.
    pub reason: Option<&'static str>,
}

pub(super) type Formula = Result<Model, &'static str>;

impl Model {
    pub fn unmodeled(reason: &'static str) -> Model {
        Model {
            class: Class::Unmodeled,
            precision: None,
            flop: None,
            bytes: None,
            reason: Some(reason),
        }
    }

    pub(super) fn none(class: Class) -> Model {
        let zero = (class == Class::View).then_some(0);
        Model {
            class,
            precision: None,
            flop: zero,
            bytes: zero,
            reason: None,
        }
    }
}

pub(super) fn matrix(class: Class, dtype: DType, flop: u64, bytes: Option<u64>) -> Formula {
    Ok(Model {
        class,
        precision: Some(dtype.precision),
        flop: Some(flop),
        bytes,
        reason: None,
    })
}
