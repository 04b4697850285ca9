//! Kernels: what an operator computes once the C side (`libascendcl/src/api/op.rs`) has
//! matched its descriptors and attributes, how it runs on a stream, and how a compiled Ascend C
//! kernel's launch runs.
//!
//! Where things live (a new element-wise operator is a new file here; data-format
//! conversions are [`crate::formats`]):
//! - this file: [`enqueue_unary`], one input and one output device range run on a stream;
//!   [`enqueue_tensors`], an operator of several tensors (optional inputs, private formats).
//! - [`cdist_grad`]: `CdistGrad`, the gradient of `torch.cdist` for p in [0, 2] and inf.
//! - [`detection`]: the box coders `BoundingBoxEncode` / `Decode`, `YoloBoxesEncode`,
//!   `AnchorResponseFlags` and `BatchMultiClassNonMaxSuppression`.
//! - [`deformable`]: `DeformableOffsets` / `DeformableOffsetsGrad` (deformable convolution).
//! - [`cast`]: the data type conversion of the "Cast" operator (`aclopCast`).
//! - [`dropout`]: `DropOutGenMaskV3` / `DropOutDoMaskV3`, dropout with a byte mask.
//! - [`dynamic_rnn`]: the LSTM operators `DynamicRNN`, `DynamicRNNV2` and their gradients.
//! - [`dynamic_gru`]: the GRU operator `DynamicGRUV2` and its gradient.
//! - [`roi_align`]: `ROIAlign` and `ROIAlignGrad`.
//! - [`rotated`]: rotated-box intersection and `RotatedNMS`.
//! - [`tensor_ops`]: Transpose, BroadcastTo, Slice, Pad, Swish, Mish, ArgMax/MinWithValue,
//!   ScatterElements (torch_npu's `npu_transpose`, `npu_silu`, `npu_max`, …).
//! - [`iou_family`]: `GIoU`, `DIoU`, `CIoU` and their gradients.
//! - [`launch`]: one launch of a compiled Ascend C kernel, run block by block on a device's
//!   AI cores ([`crate::aicore`]).
//! - [`random`]: the DSA engine's random numbers (`aclrtRandomNumAsync`).

pub mod cast;
pub mod cdist_grad;
pub mod deformable;
pub mod detection;
pub mod dropout;
pub mod dynamic_gru;
pub mod dynamic_rnn;
pub mod iou_family;
pub mod launch;
pub mod random;
pub mod roi_align;
pub mod rotated;
pub mod tensor_ops;

use crate::codes::ACL_ERROR_INTERNAL_ERROR;
use crate::formats::Plan;
use crate::memory::Space;
use crate::ops::{DType, View};
use crate::stream::Stream;
use crate::{Error, Result};
use std::sync::Arc;

/// A device range an operator reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub addr: u64,
    pub len: u64,
}

/// Enqueue `f(input, output)` on `stream`, in order with the stream's other tasks. Both
/// ranges are checked now (live device allocations of this process, no overlap: operators
/// do not run in place) and again when the stream runs the task. Nothing is enqueued when
/// the output is empty. Errors on the stream are reported as "`api` `op` (run on the
/// stream): …"; an error of `f` itself is `ACL_ERROR_INTERNAL_ERROR`.
pub fn enqueue_unary<S>(
    space: &Arc<S>,
    stream: &Stream,
    api: &'static str,
    op: &'static str,
    input: Operand,
    output: Operand,
    f: impl FnOnce(&[u8], &mut [u8]) -> std::result::Result<(), String> + Send + 'static,
) -> Result<()>
where
    S: Space + Send + Sync + 'static,
{
    if output.len == 0 {
        return Ok(());
    }
    let node = space.node();
    node.check(input.addr, input.len, "inputs[0]")?;
    node.check(output.addr, output.len, "outputs[0]")?;
    if input.addr < output.addr + output.len && output.addr < input.addr + input.len {
        return Err(Error::invalid(format!(
            "op type \"{op}\": the output range {:#x}..+{} overlaps the input range \
             {:#x}..+{}: {op} does not run in place",
            output.addr, output.len, input.addr, input.len
        )));
    }
    let space = space.clone();
    stream.enqueue(Box::new(move || {
        let ctx =
            |e: Error| Error::new(e.code, format!("{api} {op} (run on the stream): {}", e.msg));
        let node = space.node();
        let s = node
            .check(input.addr, input.len, "inputs[0]")
            .map_err(ctx)?;
        let d = node
            .check(output.addr, output.len, "outputs[0]")
            .map_err(ctx)?;
        // SAFETY: both ranges were just checked to lie in live allocations and do not
        // overlap (checked at enqueue; allocations do not move).
        let (s, d) = unsafe {
            (
                std::slice::from_raw_parts(s as *const u8, input.len as usize),
                std::slice::from_raw_parts_mut(d, output.len as usize),
            )
        };
        f(s, d).map_err(|e| {
            Error::new(
                ACL_ERROR_INTERNAL_ERROR,
                format!("{api} {op} (run on the stream): {e}"),
            )
        })
    }))
}

/// One tensor of an operator with several: its device range (the bytes as stored), its
/// data type and logical shape, and for a private storage format (FRACTAL_NZ, …) the
/// conversions storage → ND and ND → storage. The operator sees every tensor as a dense ND
/// view: a private input is converted into a host buffer before it runs, a private output is
/// computed into one and converted into device memory after.
#[derive(Clone, Debug)]
pub struct Tensor {
    /// For messages: "inputs[3] (init_h)".
    pub name: String,
    pub operand: Operand,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub private: Option<(Plan, Plan)>,
}

/// A tensor's device bytes at run time, or its ND host copy.
enum Bound {
    Device(View),
    Host {
        buf: Vec<u64>,
        view: View,
        dev: *mut u8,
    },
}

impl Bound {
    fn view(&self) -> &View {
        match self {
            Bound::Device(v) | Bound::Host { view: v, .. } => v,
        }
    }
}

/// Check `t`'s range on the node now and bind it: a view of device memory, or (private
/// format) an ND host buffer, filled from the device for an input.
fn bind(node: &crate::node::Node, t: &Tensor, input: bool) -> std::result::Result<Bound, Error> {
    let p = node.check(t.operand.addr, t.operand.len, &t.name)?;
    let n: usize = t.shape.iter().product();
    let Some((to_nd, _)) = &t.private else {
        let l = crate::ops::Layout::contiguous(t.dtype, &t.shape);
        return Ok(Bound::Device(l.view_at(p)));
    };
    let bytes = n * t.dtype.size();
    let mut buf = vec![0u64; bytes.div_ceil(8).max(1)];
    let view = View {
        ptr: buf.as_mut_ptr() as *mut u8,
        dtype: t.dtype,
        shape: t.shape.clone(),
        strides: crate::ops::view::contiguous_strides(&t.shape),
    };
    if input {
        // SAFETY: `p` is the alias of the checked device range of `operand.len` bytes; `buf`
        // holds at least `bytes` bytes.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(p as *const u8, t.operand.len as usize),
                std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut u8, bytes),
            )
        };
        to_nd
            .run(&src[..to_nd.src_bytes()], dst)
            .map_err(|e| Error::invalid(format!("{}: {e}", t.name)))?;
    }
    Ok(Bound::Host { buf, view, dev: p })
}

/// Enqueue `f(inputs, outputs)` on `stream`, in order with the stream's other tasks: an
/// operator of several tensors, inputs optional (None: the operator's optional input is
/// absent). Every range is checked now and again when the task runs (live device
/// allocations of this process); an output may not overlap another tensor, except that with
/// `in_place` (an element-wise operator) an output may be exactly an input's range. Errors
/// are reported as for [`enqueue_unary`].
#[allow(clippy::too_many_arguments)]
pub fn enqueue_tensors<S>(
    space: &Arc<S>,
    stream: &Stream,
    api: &'static str,
    op: &'static str,
    in_place: bool,
    inputs: Vec<Option<Tensor>>,
    outputs: Vec<Tensor>,
    f: impl FnOnce(&[Option<&View>], &[View]) -> std::result::Result<(), String> + Send + 'static,
) -> Result<()>
where
    S: Space + Send + Sync + 'static,
{
    let node = space.node();
    for t in inputs.iter().flatten().chain(&outputs) {
        node.check(t.operand.addr, t.operand.len, &t.name)?;
    }
    for (k, o) in outputs.iter().enumerate() {
        let (a, n) = (o.operand.addr, o.operand.len);
        let others = inputs.iter().flatten().chain(outputs.iter().skip(k + 1));
        if let Some(t) = others.into_iter().find(|t| {
            let (b, m) = (t.operand.addr, t.operand.len);
            let same = in_place && a == b && n == m && t.private.is_none();
            n > 0 && m > 0 && a < b + m && b < a + n && !same
        }) {
            return Err(Error::invalid(format!(
                "op type \"{op}\": {} ({:#x}..+{n}) overlaps {} ({:#x}..+{}); {op} does not \
                 run in place",
                o.name, a, t.name, t.operand.addr, t.operand.len
            )));
        }
    }
    let space = space.clone();
    stream.enqueue(Box::new(move || {
        let ctx =
            |e: Error| Error::new(e.code, format!("{api} {op} (run on the stream): {}", e.msg));
        let node = space.node();
        let ins = inputs
            .iter()
            .map(|t| t.as_ref().map(|t| bind(node, t, true)).transpose())
            .collect::<Result<Vec<_>>>()
            .map_err(ctx)?;
        let outs = outputs
            .iter()
            .map(|t| bind(node, t, false))
            .collect::<Result<Vec<_>>>()
            .map_err(ctx)?;
        let in_views: Vec<Option<&View>> =
            ins.iter().map(|b| b.as_ref().map(Bound::view)).collect();
        let out_views: Vec<View> = outs.iter().map(|b| b.view().clone()).collect();
        f(&in_views, &out_views).map_err(|e| {
            Error::new(
                ACL_ERROR_INTERNAL_ERROR,
                format!("{api} {op} (run on the stream): {e}"),
            )
        })?;
        for (b, t) in outs.iter().zip(&outputs) {
            if let (Bound::Host { buf, dev, .. }, Some((_, from_nd))) = (b, &t.private) {
                // SAFETY: `dev` is the alias of the output's device range (checked when bound,
                // allocations do not move); `buf` holds the ND result.
                let (src, dst) = unsafe {
                    (
                        std::slice::from_raw_parts(buf.as_ptr() as *const u8, from_nd.src_bytes()),
                        std::slice::from_raw_parts_mut(*dev, t.operand.len as usize),
                    )
                };
                from_nd
                    .run(src, &mut dst[..from_nd.dst_bytes()])
                    .map_err(|e| ctx(Error::invalid(format!("{}: {e}", t.name))))?;
            }
        }
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::testing::TestSpace;

    #[test]
    fn unary_operands_are_checked_and_run_on_the_stream() {
        let sp = TestSpace::new("kernels-unary", 1);
        let a = sp.alloc(0, 64);
        sp.write(a, &[3u8; 64]);
        let s = Stream::new("kernels-test").unwrap();
        let (input, output) = (
            Operand { addr: a, len: 32 },
            Operand {
                addr: a + 32,
                len: 32,
            },
        );
        enqueue_unary(&sp, &s, "api", "Twice", input, output, |i, o| {
            o.iter_mut().zip(i).for_each(|(o, i)| *o = i * 2);
            Ok(())
        })
        .unwrap();
        s.synchronize(None).unwrap();
        assert_eq!(sp.read(a + 32, 32), vec![6u8; 32]);

        let overlapping = Operand {
            addr: a + 16,
            len: 32,
        };
        let e =
            enqueue_unary(&sp, &s, "api", "Twice", input, overlapping, |_, _| Ok(())).unwrap_err();
        assert!(e.msg.contains("does not run in place"), "{}", e.msg);
        let past = Operand {
            addr: a + 48,
            len: 32,
        };
        let e = enqueue_unary(&sp, &s, "api", "Twice", input, past, |_, _| Ok(())).unwrap_err();
        assert!(e.msg.contains("outputs[0]"), "{}", e.msg);

        enqueue_unary(&sp, &s, "api", "Fails", input, output, |_, _| {
            Err("no".into())
        })
        .unwrap();
        let e = s.synchronize(None).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_INTERNAL_ERROR);
        assert_eq!(e.msg, "api Fails (run on the stream): no");
    }

    /// A tensor's private format is converted on the way in and out: ND → FRACTAL_NZ by an
    /// identity operator, then back, gives the input again; an output overlapping an input
    /// is refused.
    #[test]
    fn tensors_in_private_formats_round_trip_and_outputs_may_not_overlap() {
        use crate::formats::{self, C0Rule, Request, FORMAT_FRACTAL_NZ, FORMAT_ND};
        let sp = TestSpace::new("kernels-tensors", 1);
        let shape = [3usize, 5];
        let dims = [3i64, 5];
        let req = |sf, ss: &[i64], df, ds: &[i64]| {
            formats::plan(&Request {
                src_format: sf,
                src_shape: ss,
                dst_format: df,
                dst_shape: Some(ds),
                dtype: 0,
                groups: 1,
                rule: C0Rule::Ge,
            })
            .unwrap()
        };
        let fwd = formats::plan(&Request {
            src_format: FORMAT_ND,
            src_shape: &dims,
            dst_format: FORMAT_FRACTAL_NZ,
            dst_shape: None,
            dtype: 0,
            groups: 1,
            rule: C0Rule::Ge,
        })
        .unwrap();
        let nz_shape = fwd.dst_shape().to_vec();
        let nz = (
            req(FORMAT_FRACTAL_NZ, &nz_shape, FORMAT_ND, &dims),
            req(FORMAT_ND, &dims, FORMAT_FRACTAL_NZ, &nz_shape),
        );
        let nd_bytes = 15 * 4;
        let nz_bytes = fwd.dst_bytes() as u64;
        let (a, z, back) = (sp.alloc(0, 64), sp.alloc(0, nz_bytes), sp.alloc(0, 64));
        let vals: Vec<u8> = (0..15).flat_map(|i| (i as f32).to_le_bytes()).collect();
        sp.write(a, &vals);
        let t = |name: &str, addr, len, private| Tensor {
            name: name.into(),
            operand: Operand { addr, len },
            dtype: DType::F32,
            shape: shape.to_vec(),
            private,
        };
        let copy = |i: &[Option<&View>], o: &[View]| crate::ops::iter::copy(i[0].unwrap(), &o[0]);
        let s = Stream::new("kernels-tensors").unwrap();
        let (ta, tz) = (
            t("in", a, nd_bytes, None),
            t("nz", z, nz_bytes, Some(nz.clone())),
        );
        enqueue_tensors(
            &sp,
            &s,
            "api",
            "Id",
            false,
            vec![Some(ta), None],
            vec![tz.clone()],
            copy,
        )
        .unwrap();
        let tb = t("back", back, nd_bytes, None);
        enqueue_tensors(&sp, &s, "api", "Id", false, vec![Some(tz)], vec![tb], copy).unwrap();
        s.synchronize(None).unwrap();
        assert_ne!(
            sp.read(z, nd_bytes as usize),
            vals,
            "NZ differs from ND for [3, 5]"
        );
        assert_eq!(sp.read(back, nd_bytes as usize), vals);

        let e = enqueue_tensors(
            &sp,
            &s,
            "api",
            "Id",
            false,
            vec![Some(t("in", a, nd_bytes, None))],
            vec![t("out", a + 4, nd_bytes, None)],
            copy,
        )
        .unwrap_err();
        assert!(e.msg.contains("overlaps in"), "{}", e.msg);
    }
}
