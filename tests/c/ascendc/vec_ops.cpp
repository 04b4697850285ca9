/* One vector operation on n elements per block: z = op(x, y) (or op(x), op(x, scalar)).
 * Inputs and outputs move with DataCopyPad, so n need not fill 32-byte blocks. One kernel per
 * element type; `op` numbers are listed in vec_ops.h. C++17 (if constexpr skips the operations
 * an element type does not have). */
#include "kernel_operator.h"
#include "vec_ops.h"

#include <type_traits>

using namespace AscendC;

template <typename T> struct is_fp : std::integral_constant<bool, std::is_same<T, half>::value || std::is_same<T, float>::value> {};

template <typename T>
__aicore__ inline void run_op(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t op, uint32_t n)
{
    TPipe pipe;
    TQue<TPosition::VECIN, 1> inX, inY;
    TQue<TPosition::VECOUT, 1> outZ;
    GlobalTensor<T> xGm, yGm, zGm;
    const uint64_t off = static_cast<uint64_t>(GetBlockIdx()) * n;
    xGm.SetGlobalBuffer((__gm__ T *)x + off, n);
    yGm.SetGlobalBuffer((__gm__ T *)y + off, n);
    zGm.SetGlobalBuffer((__gm__ T *)z + off, n);
    const uint32_t bytes = n * sizeof(T);
    pipe.InitBuffer(inX, 1, bytes);
    pipe.InitBuffer(inY, 1, bytes);
    pipe.InitBuffer(outZ, 1, bytes);

    LocalTensor<T> a = inX.AllocTensor<T>();
    LocalTensor<T> b = inY.AllocTensor<T>();
    DataCopyExtParams cp{1, bytes, 0, 0, 0};
    DataCopyPadExtParams<T> pad{false, 0, 0, T(0)};
    DataCopyPad(a, xGm, cp, pad);
    DataCopyPad(b, yGm, cp, pad);
    inX.EnQue(a);
    inY.EnQue(b);
    a = inX.DeQue<T>();
    b = inY.DeQue<T>();
    LocalTensor<T> c = outZ.AllocTensor<T>();
    const int32_t cnt = static_cast<int32_t>(n);
    const T s = is_fp<T>::value ? T(1.5f) : T(3);
    switch (op) {
    case OP_ADD: Add(c, a, b, cnt); break;
    case OP_SUB: Sub(c, a, b, cnt); break;
    case OP_MUL: Mul(c, a, b, cnt); break;
    case OP_MAX: Max(c, a, b, cnt); break;
    case OP_MIN: Min(c, a, b, cnt); break;
    case OP_ADDS: Adds(c, a, s, cnt); break;
    case OP_MULS: Muls(c, a, s, cnt); break;
    case OP_MAXS: Maxs(c, a, s, cnt); break;
    case OP_MINS: Mins(c, a, s, cnt); break;
    case OP_DUP: Duplicate(c, s, cnt); break;
    default:
        if constexpr (is_fp<T>::value) {
            switch (op) {
            case OP_DIV: Div(c, a, b, cnt); break;
            case OP_EXP: Exp(c, a, cnt); break;
            case OP_LN: Ln(c, a, cnt); break;
            case OP_ABS: Abs(c, a, cnt); break;
            case OP_SQRT: Sqrt(c, a, cnt); break;
            case OP_RSQRT: Rsqrt(c, a, cnt); break;
            case OP_RECIP: Reciprocal(c, a, cnt); break;
            case OP_LEAKY: LeakyRelu(c, a, s, cnt); break;
            case OP_RELU: Relu(c, a, cnt); break;
            default: break;
            }
        }
        if constexpr (std::is_same<T, int32_t>::value) {
            if (op == OP_RELU) Relu(c, a, cnt);
        }
        if constexpr (std::is_same<T, int16_t>::value) {
            switch (op) {
            case OP_AND: And(c, a, b, cnt); break;
            case OP_OR: Or(c, a, b, cnt); break;
            case OP_NOT: Not(c, a, cnt); break;
            default: break;
            }
        }
        break;
    }
    PipeBarrier<PIPE_V>();
    outZ.EnQue(c);
    inX.FreeTensor(a);
    inY.FreeTensor(b);
    c = outZ.DeQue<T>();
    DataCopyPad(zGm, c, cp);
    outZ.FreeTensor(c);
}

extern "C" __global__ __aicore__ void vec_ops_half(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t op, uint32_t n)
{
    run_op<half>(x, y, z, op, n);
}
extern "C" __global__ __aicore__ void vec_ops_float(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t op, uint32_t n)
{
    run_op<float>(x, y, z, op, n);
}
extern "C" __global__ __aicore__ void vec_ops_int16(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t op, uint32_t n)
{
    run_op<int16_t>(x, y, z, op, n);
}
extern "C" __global__ __aicore__ void vec_ops_int32(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t op, uint32_t n)
{
    run_op<int32_t>(x, y, z, op, n);
}

/* Cast of n elements: float x -> half / int32 / float (mode), half -> float / int32, int32 -> float. */
template <typename D, typename S>
__aicore__ inline void run_cast(GM_ADDR x, GM_ADDR z, uint32_t mode, uint32_t n)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bs, bd;
    GlobalTensor<S> xGm;
    GlobalTensor<D> zGm;
    xGm.SetGlobalBuffer((__gm__ S *)x, n);
    zGm.SetGlobalBuffer((__gm__ D *)z, n);
    pipe.InitBuffer(bs, n * sizeof(S));
    pipe.InitBuffer(bd, n * sizeof(D));
    LocalTensor<S> s = bs.Get<S>();
    LocalTensor<D> d = bd.Get<D>();
    DataCopy(s, xGm, n);
    Cast(d, s, static_cast<RoundMode>(mode), n);
    DataCopy(zGm, d, n);
}

extern "C" __global__ __aicore__ void cast_ops(GM_ADDR x, GM_ADDR z, uint32_t kind, uint32_t mode, uint32_t n)
{
    switch (kind) {
    case CAST_F32_F16: run_cast<half, float>(x, z, mode, n); break;
    case CAST_F32_S32: run_cast<int32_t, float>(x, z, mode, n); break;
    case CAST_F32_F32: run_cast<float, float>(x, z, mode, n); break;
    case CAST_F16_F32: run_cast<float, half>(x, z, mode, n); break;
    case CAST_F16_S32: run_cast<int32_t, half>(x, z, mode, n); break;
    case CAST_S32_F32: run_cast<float, int32_t>(x, z, mode, n); break;
    case CAST_F32_BF16: run_cast<bfloat16_t, float>(x, z, mode, n); break;
    default: break;
    }
}

/* The level-0 (mask / repeat) forms on 512 halves or 256 floats; z starts as zeros. */
template <typename T>
__aicore__ inline void run_level0(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t which)
{
    constexpr uint32_t n = 1024 / sizeof(T);
    TPipe pipe;
    TBuf<TPosition::VECCALC> ba, bb, bc;
    GlobalTensor<T> xGm, yGm, zGm;
    xGm.SetGlobalBuffer((__gm__ T *)x, n);
    yGm.SetGlobalBuffer((__gm__ T *)y, n);
    zGm.SetGlobalBuffer((__gm__ T *)z, n);
    pipe.InitBuffer(ba, 1024);
    pipe.InitBuffer(bb, 1024);
    pipe.InitBuffer(bc, 1024);
    LocalTensor<T> a = ba.Get<T>(), b = bb.Get<T>(), c = bc.Get<T>();
    DataCopy(a, xGm, n);
    DataCopy(b, yGm, n);
    Duplicate(c, T(0), n);
    if constexpr (std::is_same<T, half>::value) {
        if (which == 0) Add(c, a, b, 128, 2, {1, 1, 1, 8, 8, 8});
        if (which == 2) Adds(c, a, half(2.0f), 64, 2, {1, 2, 8, 16});
        if (which == 4) {
            uint64_t mask[2] = {0, 1};
            Exp(c, a, mask, 1, {1, 1, 8, 8});
        }
    } else {
        if (which == 1) {
            uint64_t mask[2] = {0xF0F0F0F0F0F0F0F0ull, 0};
            Mul(c, a, b, mask, 3, {1, 1, 1, 8, 8, 8});
        }
        if (which == 3) Duplicate(c, 7.0f, 16, 4, 1, 8);
        if (which == 5) {
            LocalTensor<T> part = c;
            part.SetSize(40);
            part = a - b; /* symbol overload: over part.GetSize() elements */
        }
    }
    DataCopy(zGm, c, n);
}

extern "C" __global__ __aicore__ void level0_ops(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t which)
{
    if (which == 0 || which == 2 || which == 4) {
        run_level0<half>(x, y, z, which);
    } else {
        run_level0<float>(x, y, z, which);
    }
}

/* Atomic writes: every block adds (op 0, float), maxes (op 1, int32_t) or adds in half with
 * DataCopyPad (op 2) its 64-element slice of x into the same 64 elements of z. */
extern "C" __global__ __aicore__ void atomic_ops(GM_ADDR x, GM_ADDR z, uint32_t op)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    const uint64_t off = static_cast<uint64_t>(GetBlockIdx()) * 64;
    if (op == 0 || op == 1) {
        GlobalTensor<int32_t> xGm, zGm; /* float bits moved as int32_t for op 0 */
        xGm.SetGlobalBuffer((__gm__ int32_t *)x + off, 64);
        zGm.SetGlobalBuffer((__gm__ int32_t *)z, 64);
        LocalTensor<int32_t> t = buf.Get<int32_t>();
        DataCopy(t, xGm, 64);
        if (op == 0) {
            SetAtomicAdd<float>();
        } else {
            SetAtomicMax<int32_t>();
        }
        DataCopy(zGm, t, 64);
        SetAtomicNone();
        DataCopy(zGm[64], t, 0); /* nothing: atomics off again */
    } else {
        GlobalTensor<half> xGm, zGm;
        xGm.SetGlobalBuffer((__gm__ half *)x + off, 64);
        zGm.SetGlobalBuffer((__gm__ half *)z, 64);
        LocalTensor<half> t = buf.Get<half>();
        DataCopy(t, xGm, 64);
        SetAtomicAdd<half>();
        DataCopyExtParams p{1, 20 * sizeof(half), 0, 0, 0};
        DataCopyPad(zGm, t, p);
        DisableDmaAtomic();
    }
}

/* Compare + Select: case 0 (half, 128): z = x < y ? x : y; case 1 (float, 64): z = x >= 0 ? x : -1. */
extern "C" __global__ __aicore__ void cmpsel_ops(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t which)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> ba, bb, bc, bm;
    pipe.InitBuffer(ba, 256);
    pipe.InitBuffer(bb, 256);
    pipe.InitBuffer(bc, 256);
    pipe.InitBuffer(bm, 32);
    LocalTensor<uint8_t> m = bm.Get<uint8_t>();
    if (which == 0) {
        GlobalTensor<half> xGm, yGm, zGm;
        xGm.SetGlobalBuffer((__gm__ half *)x, 128);
        yGm.SetGlobalBuffer((__gm__ half *)y, 128);
        zGm.SetGlobalBuffer((__gm__ half *)z, 128);
        LocalTensor<half> a = ba.Get<half>(), b = bb.Get<half>(), c = bc.Get<half>();
        DataCopy(a, xGm, 128);
        DataCopy(b, yGm, 128);
        Compare(m, a, b, CMPMODE::LT, 128);
        Select(c, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 128);
        DataCopy(zGm, c, 128);
    } else {
        GlobalTensor<float> xGm, zGm;
        xGm.SetGlobalBuffer((__gm__ float *)x, 64);
        zGm.SetGlobalBuffer((__gm__ float *)z, 64);
        LocalTensor<float> a = ba.Get<float>(), c = bc.Get<float>();
        DataCopy(a, xGm, 64);
        CompareScalar(m, a, 0.0f, CMPMODE::GE, 64);
        Select(c, m, a, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
        reinterpret_cast<__ubuf__ float *>(c.GetPhyAddr())[63] = 42.0f; /* a raw UB pointer */
        DataCopy(zGm, c, 64);
    }
}
