//! The aclnn operators of `libopapi.so`: one file per family, each a list of thin C entry
//! points over the machine's operator engine (`npu_emu::ops`).
//!
//! Shared layer (use it; do not copy it):
//! - [`args`]: `aclTensor*`/`aclScalar*`/`aclIntArray*`/lists → engine values ([`args::T`],
//!   `Scalar`, `Vec<i64>`), the dtype lists of the reference, and the checks every operator
//!   repeats (dtype lists, broadcasting, promotion, castability, dims);
//! - [`launch`]: [`launch::phase1`] (the first call: out-pointers, boundary, messages),
//!   [`launch::Launch`] (inputs, outputs, workspace, kernel closure → executor) and the
//!   `phase2!` macro (the second call, `aclnnXxx(workspace, size, executor, stream)`).
//!
//! Adding an operator family (see the crate README): write `src/ops/<family>.rs` with the
//! `aclnnXxxGetWorkspaceSize` functions (check with `args`, build a `Launch` whose kernel
//! calls `npu_emu::ops`), list the second phases in `crate::phase2!`, add the module below,
//! the functions to `abi/aclnn_functions.tsv`, and run `abi/tools/gen_aclnn_headers.py`.

pub mod args;
pub mod launch;

pub mod act;
pub mod activation;
pub mod advindex;
pub mod amp;
pub mod arith;
pub mod bitwise;
pub mod breadth;
pub mod clamp;
pub mod cnn;
pub mod compare;
pub mod complex;
pub mod convert19;
pub mod ctc;
pub mod cv19;
pub mod embedding_bag;
pub mod experimental;
pub mod extra;
pub mod fake_quant;
pub mod fill;
pub mod foreach;
pub mod fused;
pub mod grid_sampler;
pub mod index;
pub mod index18;
pub mod linalg;
pub mod llm;
pub mod loss;
pub mod math;
pub mod math19;
pub mod mathcv85;
pub mod matmul;
pub mod model_ops;
pub mod moe;
pub mod nn;
pub mod nn18;
pub mod nn_extra;
pub mod norm;
pub mod norm_quant;
pub mod optim;
pub mod pointwise;
pub mod pool3d;
pub mod quant;
pub mod quant31;
pub mod random;
pub mod random2;
pub mod reduce;
pub mod rnn;
pub mod sampling;
pub mod select;
pub mod softmax;
pub mod sort;
pub mod tensor;
pub mod unary;
pub mod upsample;
pub mod upsample3d;

pub mod causal_conv1d;
pub mod llm31;
pub mod llm_infer;
pub mod mc2;
pub mod mhc;
pub mod train16;
pub mod train_extra;
pub mod upsample_aa;

pub mod attention_new;
pub mod gmm_a8w8;
pub mod gmm_extra;
pub mod moe_dist;
pub mod nn_more;

pub mod advance_step;
pub mod attention_nsa;
pub mod mla_prolog;
pub mod moe32;
pub mod moe_ep;
pub mod moe_route;
pub mod moe_routing_map;
pub mod nn85;
pub mod sparse;
pub mod sparse_attention;
pub mod topk_sample;
