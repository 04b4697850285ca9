//! Element types of the operator engine: the `aclDataType` values it computes on, their
//! sizes and names, and the promotion and cast rules of the aclnn reference (`PromoteType`
//! and `CanCast` of CANN's opdev, which are PyTorch's `promoteTypes` / `canCast`).

use std::fmt;

/// A dtype the engine reads and writes. The discriminant is the `aclDataType` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum DType {
    F32 = 0,
    F16 = 1,
    I8 = 2,
    I32 = 3,
    U8 = 4,
    I16 = 6,
    U16 = 7,
    U32 = 8,
    I64 = 9,
    U64 = 10,
    F64 = 11,
    Bool = 12,
    BF16 = 27,
}

/// Every dtype the engine knows, in `aclDataType` order.
pub const ALL: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::I8,
    DType::I32,
    DType::U8,
    DType::I16,
    DType::U16,
    DType::U32,
    DType::I64,
    DType::U64,
    DType::F64,
    DType::Bool,
    DType::BF16,
];

/// How an element type computes: floats narrower than f64 in f32 (rounded once when
/// stored), f64 in f64, integers and bool in i64 (wrapping to the stored width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    F32,
    F64,
    Int,
}

impl DType {
    /// The engine dtype of an `aclDataType` value, if it computes on it.
    pub fn from_acl(v: i32) -> Option<DType> {
        ALL.iter().copied().find(|d| *d as i32 == v)
    }

    pub fn acl(self) -> i32 {
        self as i32
    }

    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        !self.is_float() && self != DType::Bool
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    pub fn class(self) -> Class {
        match self {
            DType::F32 | DType::F16 | DType::BF16 => Class::F32,
            DType::F64 => Class::F64,
            _ => Class::Int,
        }
    }

    /// The ACL spelling, for messages (`ACL_FLOAT`).
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "ACL_FLOAT",
            DType::F16 => "ACL_FLOAT16",
            DType::I8 => "ACL_INT8",
            DType::I32 => "ACL_INT32",
            DType::U8 => "ACL_UINT8",
            DType::I16 => "ACL_INT16",
            DType::U16 => "ACL_UINT16",
            DType::U32 => "ACL_UINT32",
            DType::I64 => "ACL_INT64",
            DType::U64 => "ACL_UINT64",
            DType::F64 => "ACL_DOUBLE",
            DType::Bool => "ACL_BOOL",
            DType::BF16 => "ACL_BF16",
        }
    }

    /// Rank among the floating types (f16 and bf16 share one: together they give f32).
    fn float_rank(self) -> u8 {
        match self {
            DType::F16 | DType::BF16 => 1,
            DType::F32 => 2,
            _ => 3,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A readable list of dtypes (`ACL_FLOAT, ACL_FLOAT16`).
pub fn names(list: &[DType]) -> String {
    list.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
}

fn signed_of_size(bytes: usize) -> Option<DType> {
    Some(match bytes {
        1 => DType::I8,
        2 => DType::I16,
        4 => DType::I32,
        8 => DType::I64,
        _ => return None,
    })
}

/// The common type of two operands (`PromoteType`), or None when they cannot promote
/// (a 64-bit unsigned integer with a signed one, or two different unsigned types).
pub fn promote(a: DType, b: DType) -> Option<DType> {
    use DType::*;
    if a == b {
        return Some(a);
    }
    if a == Bool {
        return Some(b);
    }
    if b == Bool {
        return Some(a);
    }
    match (a.is_float(), b.is_float()) {
        (true, true) => {
            let (ra, rb) = (a.float_rank(), b.float_rank());
            Some(if ra == rb {
                // f16 with bf16
                F32
            } else if ra > rb {
                a
            } else {
                b
            })
        }
        (true, false) => Some(a),
        (false, true) => Some(b),
        (false, false) => match (a.is_unsigned(), b.is_unsigned()) {
            (false, false) => Some(if a.size() >= b.size() { a } else { b }),
            (true, true) => {
                // uint8 is the only unsigned type PyTorch promotes; the wider unsigned
                // types promote only with themselves.
                None
            }
            _ => {
                let (u, s) = if a.is_unsigned() { (a, b) } else { (b, a) };
                if u != U8 && u.size() >= s.size() {
                    return None;
                }
                signed_of_size(s.size().max(u.size() * 2))
            }
        },
    }
}

/// Whether a value of `from` may be stored as `to` by an operator (`CanCast`): no float to
/// integral or bool, nothing but bool to bool.
pub fn can_cast(from: DType, to: DType) -> bool {
    if from.is_float() && !to.is_float() {
        return false;
    }
    if from != DType::Bool && to == DType::Bool {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::DType::*;
    use super::*;

    #[test]
    fn promotion_follows_pytorch() {
        assert_eq!(promote(F16, F32), Some(F32));
        assert_eq!(promote(F16, BF16), Some(F32));
        assert_eq!(promote(BF16, F64), Some(F64));
        assert_eq!(promote(I32, F16), Some(F16));
        assert_eq!(promote(U8, I8), Some(I16));
        assert_eq!(promote(U8, I16), Some(I16));
        assert_eq!(promote(U8, I64), Some(I64));
        assert_eq!(promote(I32, I64), Some(I64));
        assert_eq!(promote(Bool, I8), Some(I8));
        assert_eq!(promote(Bool, Bool), Some(Bool));
        assert_eq!(promote(U64, I32), None);
        assert_eq!(promote(U16, U8), None);
        for &d in ALL {
            assert_eq!(promote(d, d), Some(d));
            assert_eq!(DType::from_acl(d.acl()), Some(d));
        }
        assert!(DType::from_acl(13).is_none());
    }

    #[test]
    fn casts() {
        assert!(can_cast(I32, F32));
        assert!(!can_cast(F32, I32));
        assert!(!can_cast(I32, Bool));
        assert!(can_cast(Bool, F16));
        assert!(can_cast(F64, F16));
    }
}
