//! What a rank publishes when it calls an operation, and the message when ranks disagree.
//! Also the HCCL enums the fingerprint speaks about (abi.md §2.4).

use crate::errors::{HResult, HcclError};
use crate::shm::FpEntry;
use std::sync::atomic::Ordering;

/// `HcclDataType` values this emulator moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    I8 = 0,
    I16 = 1,
    I32 = 2,
    F16 = 3,
    F32 = 4,
    I64 = 5,
    U64 = 6,
    U8 = 7,
    U16 = 8,
    U32 = 9,
    F64 = 10,
    BF16 = 11,
    I128 = 12,
    HIF8 = 14,
    FP8E4M3 = 15,
    FP8E5M2 = 16,
    FP8E8M0 = 17,
}

impl Dtype {
    pub fn from_raw(v: i32) -> Option<Dtype> {
        use Dtype::*;
        Some(match v {
            0 => I8,
            1 => I16,
            2 => I32,
            3 => F16,
            4 => F32,
            5 => I64,
            6 => U64,
            7 => U8,
            8 => U16,
            9 => U32,
            10 => F64,
            11 => BF16,
            12 => I128,
            14 => HIF8,
            15 => FP8E4M3,
            16 => FP8E5M2,
            17 => FP8E8M0,
            _ => return None,
        })
    }
    pub fn size(self) -> usize {
        use Dtype::*;
        match self {
            I8 | U8 | HIF8 | FP8E4M3 | FP8E5M2 | FP8E8M0 => 1,
            I16 | U16 | F16 | BF16 => 2,
            I32 | U32 | F32 => 4,
            I64 | U64 | F64 => 8,
            I128 => 16,
        }
    }
    /// Whether CANN reduces this type (its `CheckDataType(…, needReduce)`: not the unsigned
    /// 8/16/32-bit types, INT128, HIF8 or the FP8 types).
    pub fn reducible(self) -> bool {
        !matches!(
            self,
            Dtype::U8
                | Dtype::U16
                | Dtype::U32
                | Dtype::I128
                | Dtype::HIF8
                | Dtype::FP8E4M3
                | Dtype::FP8E5M2
                | Dtype::FP8E8M0
        )
    }
    /// Whether CANN moves this type in an operation that does not reduce (all but INT128).
    pub fn movable(self) -> bool {
        self != Dtype::I128
    }
    /// Whether CANN's PROD supports this type (`CheckReduceOp`).
    pub fn prod_supported(self) -> bool {
        matches!(
            self,
            Dtype::I8 | Dtype::I32 | Dtype::I64 | Dtype::U64 | Dtype::F16 | Dtype::F32 | Dtype::F64
        )
    }
    pub fn name(self) -> &'static str {
        dtype_name(self as i32)
    }
}

pub fn dtype_name(v: i32) -> &'static str {
    match v {
        0 => "HCCL_DATA_TYPE_INT8",
        1 => "HCCL_DATA_TYPE_INT16",
        2 => "HCCL_DATA_TYPE_INT32",
        3 => "HCCL_DATA_TYPE_FP16",
        4 => "HCCL_DATA_TYPE_FP32",
        5 => "HCCL_DATA_TYPE_INT64",
        6 => "HCCL_DATA_TYPE_UINT64",
        7 => "HCCL_DATA_TYPE_UINT8",
        8 => "HCCL_DATA_TYPE_UINT16",
        9 => "HCCL_DATA_TYPE_UINT32",
        10 => "HCCL_DATA_TYPE_FP64",
        11 => "HCCL_DATA_TYPE_BFP16",
        12 => "HCCL_DATA_TYPE_INT128",
        14 => "HCCL_DATA_TYPE_HIF8",
        15 => "HCCL_DATA_TYPE_FP8E4M3",
        16 => "HCCL_DATA_TYPE_FP8E5M2",
        17 => "HCCL_DATA_TYPE_FP8E8M0",
        _ => "unknown HcclDataType",
    }
}

/// Parse a `dataType` argument as CANN's `CheckDataType` does: an unknown value, a type a
/// reducing operation (`reduce`) cannot reduce, or INT128 in an operation that does not
/// reduce, is `HCCL_E_NOT_SUPPORT` with the supported list.
pub fn parse_dtype(v: i32, arg: &str, reduce: bool) -> HResult<Dtype> {
    let list = if reduce {
        "INT8, INT16, INT32, INT64, FP16, FP32, BFP16, UINT64, FP64"
    } else {
        "INT8, INT16, INT32, INT64, FP16, FP32, UINT8, UINT16, UINT32, UINT64, FP64, HIF8, FP8E4M3, FP8E5M2, FP8E8M0, BFP16"
    };
    match Dtype::from_raw(v) {
        Some(d) if (reduce && d.reducible()) || (!reduce && d.movable()) => Ok(d),
        Some(d) => Err(HcclError::new(
            HCCL_E_NOT_SUPPORT,
            format!(
                "{arg}={} ({v}) is not supported {}; supported: {list}",
                d.name(),
                if reduce {
                    "by reductions"
                } else {
                    "by this operation"
                }
            ),
        )),
        None => Err(HcclError::new(
            HCCL_E_NOT_SUPPORT,
            format!("{arg}={v} is not a valid HcclDataType; supported: {list}"),
        )),
    }
}

/// `HCCL_E_NOT_SUPPORT`.
const HCCL_E_NOT_SUPPORT: i32 = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedOp {
    Sum = 0,
    Prod = 1,
    Max = 2,
    Min = 3,
}

pub fn redop_name(v: i32) -> &'static str {
    match v {
        0 => "HCCL_REDUCE_SUM",
        1 => "HCCL_REDUCE_PROD",
        2 => "HCCL_REDUCE_MAX",
        3 => "HCCL_REDUCE_MIN",
        _ => "unknown HcclReduceOp",
    }
}

/// Parse an `op` argument for data of type `dt` (already parsed). An unknown op is
/// `HCCL_E_PARA`; PROD on a type CANN's `CheckReduceOp` refuses (INT16, BFP16) is
/// `HCCL_E_NOT_SUPPORT`.
pub fn parse_redop(v: i32, dt: Dtype) -> HResult<RedOp> {
    let op = match v {
        0 => RedOp::Sum,
        1 => RedOp::Prod,
        2 => RedOp::Max,
        3 => RedOp::Min,
        _ => {
            return Err(HcclError::para(format!(
                "op={v} is not a valid HcclReduceOp (HCCL_REDUCE_SUM 0, PROD 1, MAX 2, MIN 3)"
            )))
        }
    };
    if op == RedOp::Prod && !dt.prod_supported() {
        return Err(HcclError::new(
            HCCL_E_NOT_SUPPORT,
            format!(
                "op=HCCL_REDUCE_PROD does not support dataType={}; PROD supports INT8, INT32, INT64, UINT64, FP16, FP32, FP64",
                dt.name()
            ),
        ));
    }
    Ok(op)
}

/// Operation codes (`HcclCMDType` numbering).
pub mod opcode {
    pub const BROADCAST: u32 = 1;
    pub const ALLREDUCE: u32 = 2;
    pub const REDUCE: u32 = 3;
    pub const SEND: u32 = 4;
    pub const RECEIVE: u32 = 5;
    pub const ALLGATHER: u32 = 6;
    pub const REDUCE_SCATTER: u32 = 7;
    pub const ALLTOALLV: u32 = 8;
    pub const ALLTOALLVC: u32 = 9;
    pub const ALLTOALL: u32 = 10;
    pub const SCATTER: u32 = 12;
    pub const BATCH_SEND_RECV: u32 = 13;
    pub const ALLGATHER_V: u32 = 16;
    pub const REDUCE_SCATTER_V: u32 = 17;
    pub const BARRIER: u32 = 103;
}

pub fn op_name(op: u32) -> &'static str {
    use opcode::*;
    match op {
        BROADCAST => "HcclBroadcast",
        ALLREDUCE => "HcclAllReduce",
        REDUCE => "HcclReduce",
        SEND => "HcclSend",
        RECEIVE => "HcclRecv",
        ALLGATHER => "HcclAllGather",
        REDUCE_SCATTER => "HcclReduceScatter",
        ALLTOALLV => "HcclAlltoAllV",
        ALLTOALLVC => "HcclAlltoAllVC",
        ALLTOALL => "HcclAlltoAll",
        SCATTER => "HcclScatter",
        BATCH_SEND_RECV => "HcclBatchSendRecv",
        ALLGATHER_V => "HcclAllGatherV",
        REDUCE_SCATTER_V => "HcclReduceScatterV",
        BARRIER => "HcclBarrier",
        0 => "nothing",
        _ => "unknown operation",
    }
}

/// A fingerprint. Fields an operation does not use are 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fp {
    pub seq: u64,
    pub op: u32,
    pub count: u64,
    pub dtype: u32,
    pub redop: u32,
    pub root: u32,
    /// recvCount (AlltoAll)
    pub count2: u64,
    /// recvType (AlltoAll*)
    pub dtype2: u32,
    /// Hash of arrays every rank must pass identically (AllGatherV recvCounts,
    /// ReduceScatterV sendCounts, AlltoAllVC matrix).
    pub extra: u64,
}

const NOT_USED: u32 = u32::MAX;

impl Fp {
    pub fn new(op: u32) -> Fp {
        Fp {
            op,
            redop: NOT_USED,
            root: NOT_USED,
            dtype2: NOT_USED,
            ..Default::default()
        }
    }

    pub fn store(&self, e: &FpEntry) {
        e.op.store(self.op, Ordering::Relaxed);
        e.count.store(self.count, Ordering::Relaxed);
        e.dtype.store(self.dtype, Ordering::Relaxed);
        e.redop.store(self.redop, Ordering::Relaxed);
        e.root.store(self.root, Ordering::Relaxed);
        e.count2.store(self.count2, Ordering::Relaxed);
        e.dtype2.store(self.dtype2, Ordering::Relaxed);
        e.extra.store(self.extra, Ordering::Relaxed);
        e.seq.store(self.seq, Ordering::Release);
    }

    pub fn load(e: &FpEntry) -> Fp {
        let seq = e.seq.load(Ordering::Acquire);
        Fp {
            seq,
            op: e.op.load(Ordering::Relaxed),
            count: e.count.load(Ordering::Relaxed),
            dtype: e.dtype.load(Ordering::Relaxed),
            redop: e.redop.load(Ordering::Relaxed),
            root: e.root.load(Ordering::Relaxed),
            count2: e.count2.load(Ordering::Relaxed),
            dtype2: e.dtype2.load(Ordering::Relaxed),
            extra: e.extra.load(Ordering::Relaxed),
        }
    }

    /// The call as a user would have written it, e.g.
    /// `HcclAllReduce(count=1024, dataType=HCCL_DATA_TYPE_FP32, op=HCCL_REDUCE_SUM)`.
    pub fn describe(&self) -> String {
        use opcode::*;
        let dt = dtype_name(self.dtype as i32);
        let rop = redop_name(self.redop as i32);
        let args = match self.op {
            ALLREDUCE => format!("count={}, dataType={dt}, op={rop}", self.count),
            REDUCE => format!(
                "count={}, dataType={dt}, op={rop}, root={}",
                self.count, self.root
            ),
            BROADCAST => format!("count={}, dataType={dt}, root={}", self.count, self.root),
            ALLGATHER => format!("sendCount={}, dataType={dt}", self.count),
            ALLGATHER_V => format!(
                "sendCount={}, dataType={dt}, recvCounts#{:016x}",
                self.count, self.extra
            ),
            REDUCE_SCATTER => format!("recvCount={}, dataType={dt}, op={rop}", self.count),
            REDUCE_SCATTER_V => {
                format!(
                    "recvCount={}, dataType={dt}, op={rop}, sendCounts#{:016x}",
                    self.count, self.extra
                )
            }
            SCATTER => format!(
                "recvCount={}, dataType={dt}, root={}",
                self.count, self.root
            ),
            ALLTOALL => format!(
                "sendCount={}, sendType={dt}, recvCount={}, recvType={}",
                self.count,
                self.count2,
                dtype_name(self.dtype2 as i32)
            ),
            ALLTOALLV => format!("sendType={dt}, recvType={}", dtype_name(self.dtype2 as i32)),
            ALLTOALLVC => format!(
                "sendType={dt}, recvType={}, sendCountMatrix#{:016x}",
                dtype_name(self.dtype2 as i32),
                self.extra
            ),
            _ => String::new(),
        };
        format!("{}({args})", op_name(self.op))
    }
}

/// The first field in which `b` differs from `a`, by the name a user knows.
pub fn differing_field(a: &Fp, b: &Fp) -> Option<&'static str> {
    use opcode::*;
    if a.op != b.op {
        return Some("operation");
    }
    let count_name = match a.op {
        ALLGATHER | ALLTOALL => "sendCount",
        REDUCE_SCATTER | SCATTER => "recvCount",
        _ => "count",
    };
    if a.dtype != b.dtype {
        return Some(if matches!(a.op, ALLTOALL | ALLTOALLV | ALLTOALLVC) {
            "sendType"
        } else {
            "dataType"
        });
    }
    if a.dtype2 != b.dtype2 {
        return Some("recvType");
    }
    // AllGatherV's and ReduceScatterV's per-rank counts legitimately differ.
    if a.count != b.count && !matches!(a.op, ALLGATHER_V | REDUCE_SCATTER_V) {
        return Some(count_name);
    }
    if a.count2 != b.count2 {
        return Some("recvCount");
    }
    if a.redop != b.redop {
        return Some("op (reduce operation)");
    }
    if a.root != b.root {
        return Some("root");
    }
    if a.extra != b.extra {
        return Some(match a.op {
            ALLGATHER_V => "recvCounts",
            REDUCE_SCATTER_V => "sendCounts",
            ALLTOALLVC => "sendCountMatrix",
            _ => "arguments",
        });
    }
    None
}

/// Hash of a `u64` array (FNV-1a), for [`Fp::extra`].
pub fn hash_u64s(v: &[u64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in v {
        for b in x.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

/// The mismatch message: each rank's call and the differing field. `None` if all agree.
pub fn check_all(fps: &[Fp]) -> Option<String> {
    let first = &fps[0];
    let mut field = None;
    for f in &fps[1..] {
        if let Some(d) = differing_field(first, f) {
            field = Some(d);
            break;
        }
    }
    let field = field?;
    let mut msg = format!(
        "ranks called different operations at collective #{} of this communicator; they differ in {field}:",
        first.seq
    );
    for (r, f) in fps.iter().enumerate() {
        msg.push_str(&format!("\n    rank {r}: {}", f.describe()));
    }
    Some(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn mismatch_names_field() {
        let mut a = Fp::new(opcode::ALLREDUCE);
        a.count = 10;
        a.dtype = 4;
        a.redop = 0;
        let mut b = a;
        assert!(check_all(&[a, b]).is_none());
        b.count = 11;
        let m = check_all(&[a, b]).unwrap();
        assert!(m.contains("differ in count"), "{m}");
        assert!(m.contains("rank 1: HcclAllReduce(count=11"), "{m}");
        b = a;
        b.op = opcode::BROADCAST;
        assert!(check_all(&[a, b]).unwrap().contains("differ in operation"));
    }
}
