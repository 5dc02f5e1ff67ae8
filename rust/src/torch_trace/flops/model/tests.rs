//! Formulas on shape records copied from the decode trace (`gpuopt/h200/decode`), counted by hand.

use super::*;
use crate::torch_trace::flops::args::{parse, Precision};
use crate::torch_trace::interned::ShapeRecord;

fn of(name: &str, dims: &str, types: &str, concrete: &str) -> Model {
    let record = ShapeRecord {
        dims: Some(dims.into()),
        types: Some(types.into()),
        concrete: Some(concrete.into()),
    };
    let args = parse(&record).unwrap();
    model(name, Some(&args), "unread")
}

const BF: &str = "c10::BFloat16";

#[test]
fn linear_is_two_m_n_k() {
    // [4, 256, 1024] x [1024, 1024]^T: M = 1024 rows, N = K = 1024.
    let m = of(
        "aten::linear",
        "[[4, 256, 1024], [1024, 1024], []]",
        &format!(r#"["{BF}", "{BF}", ""]"#),
        r#"["", "", ""]"#,
    );
    assert_eq!(m.class, Class::Gemm);
    assert_eq!(m.flop, Some(2 * 1024 * 1024 * 1024));
    assert_eq!(m.bytes, Some((1024 * 1024 * 3) * 2));
    assert_eq!(m.precision, Some(Precision::Bf16));
    let mm = of(
        "aten::mm",
        "[[1024, 1024], [1024, 1024]]",
        &format!(r#"["{BF}", "{BF}"]"#),
        r#"["", ""]"#,
    );
    assert_eq!(mm.flop, m.flop);
}

#[test]
fn matmul_cases() {
    let f = |a: &str, b: &str| {
        of(
            "aten::matmul",
            &format!("[{a}, {b}]"),
            r#"["float", "float"]"#,
            r#"["", ""]"#,
        )
        .flop
    };
    assert_eq!(
        f("[4, 256, 1024]", "[1024, 512]"),
        Some(2 * 1024 * 512 * 1024)
    );
    assert_eq!(f("[8]", "[8]"), Some(16));
    assert_eq!(f("[3, 8]", "[8]"), Some(2 * 3 * 8));
    assert_eq!(f("[2, 1, 3, 8]", "[5, 8, 4]"), Some(2 * 10 * 3 * 4 * 8));
    assert_eq!(f("[3, 8]", "[7, 4]"), None);
}

#[test]
fn grouped_query_attention_counts_the_query_heads() {
    let m = of(
        "aten::scaled_dot_product_attention",
        "[[4, 16, 256, 64], [4, 4, 274, 64], [4, 4, 274, 64], [1, 1, 256, 274], [], [], [], []]",
        &format!(r#"["{BF}", "{BF}", "{BF}", "bool", "Scalar", "Scalar", "", "Scalar"]"#),
        r#"["", "", "", "", "0.", "False", "", "True"]"#,
    );
    assert_eq!(m.class, Class::Attention);
    assert_eq!(m.flop, Some(4 * 4 * 16 * 256 * 274 * 64));
    let qkv = (4 * 16 * 256 * 64 + 2 * 4 * 4 * 274 * 64) * 2;
    assert_eq!(m.bytes, Some(qkv + 256 * 274 + 4 * 16 * 256 * 64 * 2));
}

#[test]
fn elementwise_broadcasts_and_promotes() {
    let m = of(
        "aten::mul",
        "[[4, 256, 1024], [4, 256, 1]]",
        &format!(r#"["{BF}", "{BF}"]"#),
        r#"["", ""]"#,
    );
    assert_eq!(m.flop, Some(4 * 256 * 1024));
    assert_eq!(m.bytes, Some((4 * 256 * 1024 * 2 + 4 * 256) * 2));
    let add = of(
        "aten::add",
        "[[4, 256, 1], [], []]",
        r#"["float", "double", "Scalar"]"#,
        r#"["", "", "1"]"#,
    );
    assert_eq!(add.precision, Some(Precision::Fp32));
    assert_eq!(add.bytes, Some(4 * 256 * 4 + 8 + 4 * 256 * 4));
    let cmp = of(
        "aten::le",
        "[[274], []]",
        r#"["long int", "Scalar"]"#,
        r#"["", "260"]"#,
    );
    assert_eq!(cmp.bytes, Some(274 * 8 + 274));
    let unknown_scalar = of(
        "aten::mul",
        "[[4], []]",
        r#"["long int", "Scalar"]"#,
        r#"["", ""]"#,
    );
    assert_eq!(unknown_scalar.flop, Some(4));
    assert_eq!(unknown_scalar.bytes, None);
}

#[test]
fn reductions_norms_copies_views() {
    let mean = of(
        "aten::mean",
        "[[4, 256, 1024], [], [], []]",
        r#"["float", "ScalarList", "Scalar", ""]"#,
        r#"["", "[-1]", "True", ""]"#,
    );
    assert_eq!(mean.flop, Some(4 * 256 * 1024));
    assert_eq!(mean.bytes, Some((4 * 256 * 1024 + 4 * 256) * 4));
    let argmax = of(
        "aten::argmax",
        "[[4, 1, 32000], [], []]",
        &format!(r#"["{BF}", "Scalar", "Scalar"]"#),
        r#"["", "-1", "False"]"#,
    );
    assert_eq!(argmax.bytes, Some(4 * 32000 * 2 + 4 * 8));
    let ln = of(
        "aten::layer_norm",
        "[[2, 8], [], [8], [8], [], []]",
        r#"["float", "ScalarList", "float", "float", "Scalar", "Scalar"]"#,
        r#"["", "[8]", "", "", "1e-05", "True"]"#,
    );
    assert_eq!(ln.flop, Some(16 * 7));
    let copy = of(
        "aten::copy_",
        "[[4, 256, 1024], [4, 256, 1024], []]",
        &format!(r#"["float", "{BF}", "Scalar"]"#),
        r#"["", "", "False"]"#,
    );
    assert_eq!(copy.bytes, Some(4 * 256 * 1024 * 6));
    assert_eq!(copy.flop, Some(0));
    assert_eq!(model("aten::view", None, "unread").class, Class::View);
    assert_eq!(model("aten::to", None, "unread").class, Class::Composite);
    let none = model("aten::mm", None, "no shapes");
    assert_eq!(
        (none.class, none.reason),
        (Class::Unmodeled, Some("no shapes"))
    );
    assert_eq!(
        model("aten::index_select", Some(&[]), "x").reason,
        Some("no formula for this op")
    );
}

#[test]
fn convolution_output_size_from_stride_padding_dilation() {
    // 1x3x32x32 input, 8x3x3x3 weight, stride 2, padding 1: 16x16 outputs.
    let m = of(
        "aten::convolution",
        "[[1, 3, 32, 32], [8, 3, 3, 3], [8], [], [], [], [], [], []]",
        r#"["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"]"#,
        r#"["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"]"#,
    );
    assert_eq!(m.flop, Some(2 * 16 * 16 * 8 * 3 * 3 * 3));
    assert_eq!(m.bytes, Some((3 * 32 * 32 + 8 * 27 + 8 + 8 * 16 * 16) * 4));
}
