/* Operation numbers shared by vec_ops.cpp (kernels) and icpu_vec.cpp (host). */
#ifndef VEC_OPS_H
#define VEC_OPS_H

enum VecOp {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_ADDS, OP_MULS, OP_MAXS, OP_MINS,
    OP_EXP, OP_LN, OP_ABS, OP_SQRT, OP_RELU, OP_RSQRT, OP_RECIP, OP_LEAKY, OP_DUP,
    OP_AND, OP_OR, OP_NOT, OP_COUNT
};

enum CastKind { CAST_F32_F16, CAST_F32_S32, CAST_F32_F32, CAST_F16_F32, CAST_F16_S32, CAST_S32_F32, CAST_F32_BF16 };

#endif
