//! The operator engine: what the aclnn operators of `libopapi.so` compute, on the emulated
//! devices' memory.
//!
//! The C side (`libascendcl/aclnn`) validates the arguments in `aclnnXxxGetWorkspaceSize`,
//! keeps each tensor's [`Layout`] in the executor, and in `aclnnXxx` checks the device
//! ranges through the runtime's address translation and enqueues one task on the caller's
//! stream. The task turns each layout into a [`View`] over the machine's alias of device
//! memory (never a host copy) and calls the functions here, which read and write that
//! memory directly.
//!
//! Where things live:
//! - [`dtype`]: the dtypes, `PromoteType` / `CanCast`;
//! - [`scalar`]: `aclScalar` values;
//! - [`view`]: strided views (shape, strides, offset), broadcasting, scratch tensors;
//! - [`elem`]: compute types and the chunk loaders/storers (dtype conversion, rounding);
//! - [`iter`]: the elementwise engine (broadcast, chunked, split across threads, aliasing);
//! - [`math`]: unary / binary / ternary elementwise operators;
//! - [`reduce`]: sum, mean, max/min (with indices), norms, any/all, cumsum;
//! - [`matmul`]: matrix products through `matrixmultiply`, dot;
//! - [`linalg`]: addmv, ger, addbmm, inverse (Gauss-Jordan, batched), cross, einsum;
//! - [`act`]: ELU/SELU, softplus, hardsigmoid, hardswish, mish, log-sigmoid and backward forms;
//! - [`conv`]: convolution (1-3-D, grouped, dilated, transposed) and its backward, im2col + gemm;
//!   unfold (the Im2col operator);
//! - [`pool`]: 2-D max/avg/adaptive pooling and their backward forms;
//! - [`batchnorm`]: batch normalization and its backward;
//! - [`nn`]: softmax, log-softmax, NLL and MSE losses, layer norm, embedding, instance norm;
//! - [`loss`]: L1, smooth L1, binary cross entropy (on probabilities and on logits) and
//!   their gradients;
//! - [`shape`]: cat, stack, constant pad, arange, narrow, triu/tril, masked select, scatter;
//! - [`sort`]: sort and topk (stable, NaN largest);
//! - [`select`]: index_add, index_fill, take;
//! - [`advindex`]: nonzero, indexing with index tensors, index put, flip;
//! - [`extra`]: repeat, one-hot, linspace, logspace, cumprod, cummax/cummin, nansum, group
//!   norm, nearest upsampling, reflection/replication padding, unique (the operators
//!   torch_npu reaches beyond these);
//! - [`breadth`]: permute, split, gather_v2, index_copy, is_inf, PReLU, GLU, threshold, logit,
//!   logaddexp, sinc, heaviside (operators of the aclnn reference beyond the core families);
//! - [`optim`]: the fused optimizer steps (ApplyAdamWV2, ApplyAdamW, FusedSgd, FusedAdam);
//! - [`sampling`]: normal with tensor mean and std (over [`random`]);
//! - [`fused`]: RMS norm, rotary position embedding, SwiGLU, flash attention and their
//!   backward forms (the fused operators of large-model code);
//! - [`random`]: Philox-based normal, uniform, bernoulli, reproducible per (seed, offset);
//! - [`norm`]: the SyncBatchNorm family (stats, gather with counts, elemt, backward reduce
//!   and elemt), add + RMS norm, the shrink activations.
//! - [`random`]: Philox-based normal, uniform, bernoulli, reproducible per (seed, offset).
//! - [`math_misc`]: diag, diag_flat, signbit, gcd, isin of a scalar, addr, cdist.
//! - [`quant`]: AscendQuant, DynamicQuant, MoE gating top-k softmax (large-model inference);
//! - [`quant31`]: the int4 paths: AscendQuant(V3) into packed INT32 (ND and FRACTAL_NZ),
//!   GroupedMatmul's A4W4 mode;
//! - [`llm`]: AscendAntiQuant, WeightQuantBatchMatmul (V1), ScatterUpdate, top-k/top-p
//!   filtering, MoE token permute/unpermute and their backward forms, and the routing-map
//!   forms (MoeTokenPermute/UnpermuteWithRoutingMap and their gradients);
//! - [`sparse`]: CoalesceSparse (the value sums of sparse COO `coalesce()`);
//! - [`pool3d`]: 3-D max/avg/adaptive pooling and their backward forms, circular padding;
//! - [`grid_sampler`]: 2-D grid sampling (bilinear, nearest, bicubic) and its backward.
//! - [`llm31`]: AttentionUpdate, KvRmsNormRopeCache, the vocabulary-parallel cross entropy
//!   (FusedLinearOnlineMaxSum, FusedCrossEntropyLossWithMaxSum and its gradient), the
//!   recurrent and chunked gated delta rule;
//! - [`mathcv85`]: GroupedBiasAddGrad, ExpSegsum and its backward, AddLora (CANN 8.5 ops-math);
//! - [`mhc`]: MhcPost and MhcPostBackward (the mHC post mapping and its gradient);
//! - [`nn85`]: the ops-nn 8.5 example gaps: BinaryCrossEntropyGradV2, DequantBias,
//!   QuantizedBatchNorm, ExpandIntoJaggedPermute, MaskedSoftmaxWithRelPosBias, FlatQuant,
//!   DynamicBlockQuant (A2 form), ApplyFusedEmaAdam, AdaLayerNormQuant, BatchMatmulQuant;
//! - [`model_ops`]: TransformBiasRescaleQkv, Modulate and AdaLayerNorm (and their backward),
//!   clipped SwiGLU, multi-scale deformable attention, Sinkhorn.
//!
//! Rules every kernel follows:
//! - f16/bf16 compute in f32 and round once when stored; f64 in f64; integers in i64,
//!   wrapping to the stored width; bool results are 0/1 bytes.
//! - Inputs may be non-contiguous, expanded (stride 0) or the output itself (in place).
//! - Errors are `Err(String)`: the task reports them on the stream, at the next
//!   synchronisation, as device errors are.
//!
//! Adding an operator: if it is elementwise, add a variant to [`math::Unary`],
//! [`math::Binary`] or [`math::Ternary`] with its float and integer bodies; otherwise add a
//! function taking `&View`s to the module of its family (or a new module listed here).
//! Then expose it from a file of `libascendcl/aclnn/src/ops/` (see the README there).

pub mod act;
pub mod advindex;
pub mod amp;
pub mod batchnorm;
pub mod breadth;
pub mod complex;
pub mod conv;
pub mod dtype;
pub mod elem;
pub mod experimental;
pub mod extra;
pub mod fake_quant;
pub mod fused;
pub mod grads;
pub mod iter;
pub mod linalg;
pub mod llm;
pub mod loss;
pub mod math;
pub mod matmul;
pub mod nn;
pub mod nn_extra;
pub mod norm;
pub mod norm_quant;
pub mod optim;
pub mod pool;
pub mod quant;
pub mod quant31;
pub mod random;
pub mod reduce;
pub mod sampling;
pub mod scalar;
pub mod select;
pub mod shape;
pub mod sort;
pub mod view;

pub use dtype::DType;
pub use scalar::Scalar;
pub use view::{Layout, View};
pub mod convert19;
pub mod ctc;
pub mod cv19;
pub mod embedding_bag;
pub mod grid_sampler;
pub mod index18;
pub mod llm31;
pub mod llm_infer;
pub mod math19;
pub mod math_misc;
pub mod mathcv85;
pub mod mhc;
pub mod model_ops;
pub mod moe;
pub mod nn18;
pub mod pool3d;
pub mod random2;
pub mod rnn;
pub mod train16;
pub mod train_extra;
pub mod upsample_aa;

pub mod attention_new;
pub mod gmm_extra;
pub mod moe_dist;
pub mod nn_more;

pub mod advance_step;
pub mod attention_nsa;
pub mod mla_prolog;
pub mod moe32;
pub mod moe_ep;
pub mod moe_route;
pub mod nn85;
pub mod sparse;
pub mod sparse_attention;
pub mod topk_sample;
