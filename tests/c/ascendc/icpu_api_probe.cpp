/* Kernels written from the Ascend C API reference pages (the prototypes, constraints and call
 * examples of 基础API / 矢量计算 / 数据搬运 / 同步控制), in the styles of the official samples, run
 * through the CPU-debug path (GmAlloc + ICPU_RUN_KF) and checked element by element against host
 * references written from the pages' formulas, not from the kernel headers:
 * - TQueBind<VECIN, VECOUT> copy-through with Muls in place, a TBuf scratch;
 * - DataCopy with DataCopyParams (blockCount / blockLen / srcStride / dstStride, 32-byte blocks)
 *   in both directions;
 * - DataCopyPad GM->UB with DataCopyExtParams (+ right padding with a value) and UB->GM; with GM
 *   strides, left and right padding, rows of 20 bytes out with a GM gap; UB->UB DataCopy;
 * - level-0 Duplicate and Adds with bit masks and strides, counter-mode Mul;
 * - Brcb (8 elements per repeat, each filling one 32-byte data block);
 * - Gather (byte offsets into src; the count and the mask/repeat forms);
 * - GatherMask (built-in patterns 1..7 and a user pattern tensor; rsvdCnt);
 * - CreateVecIndex;
 * - Compare + Select;
 * - Cast float -> int32 with CAST_ROUND / CAST_FLOOR / CAST_CEIL / CAST_TRUNC;
 * - Exp / Ln / Sqrt / Relu / Muls / Adds chain and Axpy (dst = src * s + dst; also half -> float);
 * - Transpose (one 16x16 matrix of 16-bit elements);
 * - SetAtomicAdd from 4 blocks into one output, SyncAll between two phases, GetBlockIdx/GetBlockNum;
 * - AddRelu / SubRelu / MulAddDst / FusedMulAdd / ShiftLeft / ShiftRight and the level-0 Copy;
 * - InitGlobalMemory, then SyncAll and atomic adds from 3 blocks;
 * - the high-level element-wise math: Sigmoid, Tanh, Sin, Cos, Erf, Floor (with a tmp buffer);
 * - Sort (full, float), Sort32 + MrgSort of 4 lists + Extract (half), GetSortOffset,
 *   GetMrgSortResult, in the A2 (score, index) layout, descending, ties in input order;
 * - the scalar bit operations (ScalarGetCountOfValue, ScalarCountLeadingZero,
 *   CountBitsCntSameAsSignBit, ScalarGetSFFValue, GetBitCount) and TRACE_START / TRACE_STOP;
 * - SoftMax (float; half with float sum / max and a SoftMaxShapeInfo of unaligned valid columns)
 *   and SimpleSoftMax with the host tiling of tiling/tiling_api.h (ge::Shape, SoftMaxTilingFunc,
 *   GetSoftMaxMin/MaxTmpSize) passed through GM;
 * - LayerNorm with GetLayerNormMaxMinTmpSize / GetLayerNormNDTilingInfo, the tiling read with
 *   GET_TILING_DATA_WITH_STRUCT, through TQue buffers.
 * One "PASS <case>" line per case; exits with the number of failures. */
#include "tikicpulib.h"
#include "tiling/tiling_api.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

#include "host_f16.h"

using namespace AscendC;

/* ---------------------------------------------------------------- kernels ---- */

/* TQueBind: one buffer that is VECIN and VECOUT, y = x * 3 in place, plus a TBuf for x + 1. */
extern "C" __global__ __aicore__ void quebind_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> que;
    TBuf<TPosition::VECCALC> tmp;
    constexpr uint32_t N = 256;
    pipe.InitBuffer(que, 1, N * sizeof(float));
    pipe.InitBuffer(tmp, N * sizeof(float));
    GlobalTensor<float> xg, yg, zg;
    const uint32_t off = GetBlockIdx() * N;
    xg.SetGlobalBuffer((__gm__ float *)x + off, N);
    yg.SetGlobalBuffer((__gm__ float *)y + off, N);
    zg.SetGlobalBuffer((__gm__ float *)z + off, N);
    LocalTensor<float> t = que.AllocTensor<float>();
    DataCopy(t, xg, N);
    que.EnQue(t);
    LocalTensor<float> u = que.DeQue<float>();
    LocalTensor<float> w = tmp.Get<float>();
    Adds(w, u, 1.0f, N);
    Muls(u, u, 3.0f, N);
    DataCopy(zg, w, N);
    DataCopy(yg, u, N);
    que.FreeTensor(u);
}

/* DataCopy with strides: take 4 blocks of 2x32 bytes (16 floats) every 3 blocks from GM into a
 * packed UB tensor, then write them back out with one empty block between. */
extern "C" __global__ __aicore__ void strided_copy_kernel(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 64 * sizeof(float));
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float *)x, 256);
    yg.SetGlobalBuffer((__gm__ float *)y, 256);
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopyParams in;
    in.blockCount = 4;
    in.blockLen = 2;
    in.srcStride = 1; /* gap between the blocks in GM, in 32-byte blocks */
    in.dstStride = 0;
    DataCopy(t, xg, in);
    q.EnQue(t);
    LocalTensor<float> u = q.DeQue<float>();
    DataCopyParams out{4, 2, 0, 1};
    DataCopy(yg, u, out);
    q.FreeTensor(u);
}

/* DataCopyPad of rows of 13 floats (52 bytes) with 3 floats of right padding of -1 into a UB row
 * of 16, +0.5, and back out as rows of 13. */
extern "C" __global__ __aicore__ void copypad_kernel(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    constexpr uint32_t ROWS = 5, COLS = 13, UBC = 16;
    pipe.InitBuffer(b, ROWS * UBC * sizeof(float));
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float *)x, ROWS * COLS);
    yg.SetGlobalBuffer((__gm__ float *)y, ROWS * UBC);
    LocalTensor<float> t = b.Get<float>();
    DataCopyExtParams cp{ROWS, COLS * sizeof(float), 0, 0, 0};
    DataCopyPadExtParams<float> pad{true, 0, 3, -1.0f};
    DataCopyPad(t, xg, cp, pad);
    PipeBarrier<PIPE_ALL>();
    Adds(t, t, 0.5f, ROWS * UBC);
    /* out: full padded rows, contiguous */
    DataCopyExtParams out{1, ROWS * UBC * sizeof(float), 0, 0, 0};
    DataCopyPad(yg, t, out);
}

/* Level-0 Duplicate/Adds with masks and strides, counter-mode Mul. */
extern "C" __global__ __aicore__ void level0_kernel(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by;
    pipe.InitBuffer(bx, 512 * sizeof(float));
    pipe.InitBuffer(by, 512 * sizeof(float));
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float *)x, 512);
    yg.SetGlobalBuffer((__gm__ float *)y, 512);
    LocalTensor<float> a = bx.Get<float>(), d = by.Get<float>();
    DataCopy(a, xg, 512);
    Duplicate(d, 7.0f, 512);
    /* first 32 elements of each of 2 repeats, every second block of dst, repeats 16 blocks apart */
    Duplicate(d, -2.0f, 32, 2, 2, 16);
    /* bit mask: the even elements of each repeat; src blocks stride 1, dst repeats 8 blocks apart */
    uint64_t m[2] = {0x5555555555555555ull, 0};
    Adds(d[256], a[256], 100.0f, m, 4, {1, 1, 8, 8});
    /* counter mode: 300 elements of a * a into d[0] (overwrites the Duplicate above) */
    SetMaskCount();
    SetVectorMask<float, MaskMode::COUNTER>(0, 100);
    Mul<float, false>(d, a, a, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
    SetMaskNorm();
    ResetMask();
    DataCopy(yg, d, 512);
}

/* Brcb: each of the 8 elements of a repeat fills one 32-byte block. */
extern "C" __global__ __aicore__ void brcb_kernel(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by;
    pipe.InitBuffer(bx, 16 * sizeof(float));
    pipe.InitBuffer(by, 256 * sizeof(float));
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float *)x, 16);
    yg.SetGlobalBuffer((__gm__ float *)y, 256);
    LocalTensor<float> a = bx.Get<float>(), d = by.Get<float>();
    DataCopy(a, xg, 16);
    Duplicate(d, 0.0f, 256);
    Brcb(d, a, 2, {1, 8});
    DataCopy(yg, d, 256);
}

/* Gather by byte offsets: reverse 128 halves, then the mask form on floats. */
extern "C" __global__ __aicore__ void gather_kernel(GM_ADDR x, GM_ADDR off, GM_ADDR y, GM_ADDR xf, GM_ADDR yf)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bo, by, bxf, byf;
    pipe.InitBuffer(bx, 128 * sizeof(half));
    pipe.InitBuffer(bo, 128 * sizeof(uint32_t));
    pipe.InitBuffer(by, 128 * sizeof(half));
    pipe.InitBuffer(bxf, 128 * sizeof(float));
    pipe.InitBuffer(byf, 128 * sizeof(float));
    GlobalTensor<half> xg, yg;
    GlobalTensor<uint32_t> og;
    GlobalTensor<float> xfg, yfg;
    xg.SetGlobalBuffer((__gm__ half *)x, 128);
    og.SetGlobalBuffer((__gm__ uint32_t *)off, 128);
    yg.SetGlobalBuffer((__gm__ half *)y, 128);
    xfg.SetGlobalBuffer((__gm__ float *)xf, 128);
    yfg.SetGlobalBuffer((__gm__ float *)yf, 128);
    LocalTensor<half> a = bx.Get<half>(), d = by.Get<half>();
    LocalTensor<uint32_t> o = bo.Get<uint32_t>();
    LocalTensor<float> af = bxf.Get<float>(), df = byf.Get<float>();
    DataCopy(a, xg, 128);
    DataCopy(o, og, 128);
    DataCopy(af, xfg, 128);
    Gather(d, a, o, (uint32_t)0, 128);
    DataCopy(yg, d, 128);
    /* floats: the offsets as float offsets are 2x the half offsets; mask form, 2 repeats of 64 */
    Muls(o.ReinterpretCast<int32_t>(), o.ReinterpretCast<int32_t>(), 2, 128);
    Duplicate(df, 0.0f, 128);
    Gather(df, af, o, (uint32_t)0, (uint64_t)64, 2, 8);
    DataCopy(yfg, df, 128);
}

/* GatherMask: built-in pattern `pattern` over 2 repeats of floats, then a user pattern on halves. */
extern "C" __global__ __aicore__ void gathermask_kernel(GM_ADDR x, GM_ADDR pat, GM_ADDR y, GM_ADDR cnt,
                                                        uint32_t pattern)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bp, by, bc;
    pipe.InitBuffer(bx, 128 * sizeof(float));
    pipe.InitBuffer(bp, 16 * sizeof(uint16_t));
    pipe.InitBuffer(by, 256 * sizeof(float));
    pipe.InitBuffer(bc, 8 * sizeof(uint32_t));
    GlobalTensor<float> xg, yg;
    GlobalTensor<uint16_t> pg;
    GlobalTensor<uint32_t> cg;
    xg.SetGlobalBuffer((__gm__ float *)x, 128);
    pg.SetGlobalBuffer((__gm__ uint16_t *)pat, 16);
    yg.SetGlobalBuffer((__gm__ float *)y, 256);
    cg.SetGlobalBuffer((__gm__ uint32_t *)cnt, 8);
    LocalTensor<float> a = bx.Get<float>(), d = by.Get<float>();
    LocalTensor<uint16_t> p = bp.Get<uint16_t>();
    LocalTensor<uint32_t> c = bc.Get<uint32_t>();
    DataCopy(a, xg, 128);
    DataCopy(p, pg, 16);
    Duplicate(d, -5.0f, 256);
    uint64_t rsvd = 0;
    GatherMaskParams gp;
    gp.src0BlockStride = 1;
    gp.repeatTimes = 2;
    gp.src0RepeatStride = 8;
    gp.src1RepeatStride = 0;
    GatherMask(d, a, (uint8_t)pattern, false, 0, gp, rsvd);
    c.SetValue(0, (uint32_t)rsvd);
    /* user pattern on the halves of a (128 of them = one repeat): bit i of the pattern keeps
     * element i; the output goes to the second half of d */
    LocalTensor<half> ah = a.ReinterpretCast<half>();
    LocalTensor<half> dh = d[128].ReinterpretCast<half>();
    GatherMaskParams gp2{1, 1, 8, 0};
    uint64_t rsvd2 = 0;
    GatherMask(dh, ah, p, false, 0, gp2, rsvd2);
    c.SetValue(1, (uint32_t)rsvd2);
    DataCopy(yg, d, 256);
    DataCopy(cg, c, 8);
}

/* CreateVecIndex: dst[i] = first + i, int32 and float. */
extern "C" __global__ __aicore__ void vecindex_kernel(GM_ADDR y, GM_ADDR yf)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b, bf;
    pipe.InitBuffer(b, 256 * sizeof(int32_t));
    pipe.InitBuffer(bf, 256 * sizeof(float));
    GlobalTensor<int32_t> yg;
    GlobalTensor<float> yfg;
    yg.SetGlobalBuffer((__gm__ int32_t *)y, 256);
    yfg.SetGlobalBuffer((__gm__ float *)yf, 256);
    LocalTensor<int32_t> d = b.Get<int32_t>();
    LocalTensor<float> df = bf.Get<float>();
    CreateVecIndex(d, (int32_t)-10, 256);
    CreateVecIndex(df, 0.5f, 200);
    DataCopy(yg, d, 256);
    DataCopy(yfg, df, 256);
}

/* Compare + Select: out = x > y ? x : 0. */
extern "C" __global__ __aicore__ void cmpsel_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by, bm, bz;
    constexpr uint32_t N = 256;
    pipe.InitBuffer(bx, N * sizeof(float));
    pipe.InitBuffer(by, N * sizeof(float));
    pipe.InitBuffer(bm, N / 8);
    pipe.InitBuffer(bz, N * sizeof(float));
    GlobalTensor<float> xg, yg, zg;
    xg.SetGlobalBuffer((__gm__ float *)x, N);
    yg.SetGlobalBuffer((__gm__ float *)y, N);
    zg.SetGlobalBuffer((__gm__ float *)z, N);
    LocalTensor<float> a = bx.Get<float>(), b = by.Get<float>(), o = bz.Get<float>();
    LocalTensor<uint8_t> m = bm.Get<uint8_t>();
    DataCopy(a, xg, N);
    DataCopy(b, yg, N);
    Compare(m, a, b, CMPMODE::GT, N);
    Select(o, m, a, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, N);
    DataCopy(zg, o, N);
}

/* Cast float -> int32 with the four integer round modes, one per quarter. */
extern "C" __global__ __aicore__ void cast_kernel(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by;
    pipe.InitBuffer(bx, 256 * sizeof(float));
    pipe.InitBuffer(by, 256 * sizeof(int32_t));
    GlobalTensor<float> xg;
    GlobalTensor<int32_t> yg;
    xg.SetGlobalBuffer((__gm__ float *)x, 256);
    yg.SetGlobalBuffer((__gm__ int32_t *)y, 256);
    LocalTensor<float> a = bx.Get<float>();
    LocalTensor<int32_t> d = by.Get<int32_t>();
    DataCopy(a, xg, 256);
    Cast(d, a, RoundMode::CAST_ROUND, 64);
    Cast(d[64], a[64], RoundMode::CAST_FLOOR, 64);
    Cast(d[128], a[128], RoundMode::CAST_CEIL, 64);
    Cast(d[192], a[192], RoundMode::CAST_TRUNC, 64);
    DataCopy(yg, d, 256);
}

/* y = sqrt(relu(ln(exp(x) * 2 + 1))) and z = x * 0.25 + z (Axpy), w(float) = xh * 2 + w (Axpy
 * half -> float). */
extern "C" __global__ __aicore__ void math_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR xh, GM_ADDR w)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, by, bz, bxh, bw;
    constexpr uint32_t N = 128;
    pipe.InitBuffer(bx, N * sizeof(float));
    pipe.InitBuffer(by, N * sizeof(float));
    pipe.InitBuffer(bz, N * sizeof(float));
    pipe.InitBuffer(bxh, N * sizeof(half));
    pipe.InitBuffer(bw, N * sizeof(float));
    GlobalTensor<float> xg, yg, zg, wg;
    GlobalTensor<half> xhg;
    xg.SetGlobalBuffer((__gm__ float *)x, N);
    yg.SetGlobalBuffer((__gm__ float *)y, N);
    zg.SetGlobalBuffer((__gm__ float *)z, N);
    xhg.SetGlobalBuffer((__gm__ half *)xh, N);
    wg.SetGlobalBuffer((__gm__ float *)w, N);
    LocalTensor<float> a = bx.Get<float>(), o = by.Get<float>(), zz = bz.Get<float>(), ww = bw.Get<float>();
    LocalTensor<half> ah = bxh.Get<half>();
    DataCopy(a, xg, N);
    DataCopy(zz, zg, N);
    DataCopy(ah, xhg, N);
    DataCopy(ww, wg, N);
    Exp(o, a, N);
    Muls(o, o, 2.0f, N);
    Adds(o, o, 1.0f, N);
    Ln(o, o, N);
    Relu(o, o, N);
    Sqrt(o, o, N);
    Axpy(zz, a, 0.25f, N);
    Axpy(ww, ah, (half)2.0f, N);
    DataCopy(yg, o, N);
    DataCopy(zg, zz, N);
    DataCopy(wg, ww, N);
}

/* Transpose of one 16x16 matrix of halves. */
extern "C" __global__ __aicore__ void transpose_kernel(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qi;
    TQue<TPosition::VECOUT, 1> qo;
    pipe.InitBuffer(qi, 1, 256 * sizeof(half));
    pipe.InitBuffer(qo, 1, 256 * sizeof(half));
    GlobalTensor<half> xg, yg;
    xg.SetGlobalBuffer((__gm__ half *)x, 256);
    yg.SetGlobalBuffer((__gm__ half *)y, 256);
    LocalTensor<half> a = qi.AllocTensor<half>();
    DataCopy(a, xg, 256);
    qi.EnQue(a);
    LocalTensor<half> s = qi.DeQue<half>();
    LocalTensor<half> d = qo.AllocTensor<half>();
    Transpose(d, s);
    qo.EnQue(d);
    qi.FreeTensor(s);
    LocalTensor<half> o = qo.DeQue<half>();
    DataCopy(yg, o, 256);
    qo.FreeTensor(o);
}

/* SetAtomicAdd: every block adds its block index + 1 to all of y; then SyncAll and block 0 writes
 * the sum of y into z (after every block's add landed). */
extern "C" __global__ __aicore__ void atomic_sync_kernel(GM_ADDR y, GM_ADDR z)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 64 * sizeof(float));
    GlobalTensor<float> yg, zg;
    yg.SetGlobalBuffer((__gm__ float *)y, 64);
    zg.SetGlobalBuffer((__gm__ float *)z, 8);
    LocalTensor<float> t = b.Get<float>();
    Duplicate(t, (float)(GetBlockIdx() + 1), 64);
    SetAtomicAdd<float>();
    DataCopy(yg, t, 64);
    SetAtomicNone();
    SyncAll();
    if (GetBlockIdx() == 0) {
        DataCopy(t, yg, 64);
        float s = 0;
        for (int i = 0; i < 64; ++i) {
            s += t.GetValue(i);
        }
        Duplicate(t, s + (float)GetBlockNum(), 8);
        DataCopy(zg, t, 8);
    }
}

/* AddRelu / SubRelu / MulAddDst / FusedMulAdd / ShiftLeft / ShiftRight / level-0 Copy. */
extern "C" __global__ __aicore__ void vecext_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR xi, GM_ADDR zi)
{
    TPipe pipe;
    constexpr uint32_t N = 128;
    TBuf<TPosition::VECCALC> bx, by, bz, bi, bo;
    pipe.InitBuffer(bx, N * sizeof(float));
    pipe.InitBuffer(by, N * sizeof(float));
    pipe.InitBuffer(bz, 6 * N * sizeof(float));
    pipe.InitBuffer(bi, N * sizeof(int32_t));
    pipe.InitBuffer(bo, 2 * N * sizeof(int32_t));
    GlobalTensor<float> xg, yg, zg;
    GlobalTensor<int32_t> xig, zig;
    xg.SetGlobalBuffer((__gm__ float *)x, N);
    yg.SetGlobalBuffer((__gm__ float *)y, N);
    zg.SetGlobalBuffer((__gm__ float *)z, 6 * N);
    xig.SetGlobalBuffer((__gm__ int32_t *)xi, N);
    zig.SetGlobalBuffer((__gm__ int32_t *)zi, 2 * N);
    LocalTensor<float> a = bx.Get<float>(), b = by.Get<float>(), o = bz.Get<float>();
    LocalTensor<int32_t> ii = bi.Get<int32_t>(), io = bo.Get<int32_t>();
    DataCopy(a, xg, N);
    DataCopy(b, yg, N);
    DataCopy(ii, xig, N);
    AddRelu(o, a, b, N);
    SubRelu(o[N], a, b, N);
    Duplicate(o[2 * N], 0.5f, N);
    MulAddDst(o[2 * N], a, b, N);     /* a * b + 0.5 */
    Duplicate(o[3 * N], 2.0f, N);
    FusedMulAdd(o[3 * N], a, b, N);   /* a * 2 + b */
    /* level-0 Copy: 2 repeats of the first 40 elements, dst repeats 16 blocks apart */
    Duplicate(o[4 * N], -9.0f, 2 * N);
    Copy(o[4 * N], a, 40, 2, {1, 1, 16, 8});
    ShiftLeft(io, ii, 3, N);
    ShiftRight(io[N], ii, 2, N);
    DataCopy(zg, o, 6 * N);
    DataCopy(zig, io, 2 * N);
}

/* InitGlobalMemory to 1.5 by block 0, SyncAll, then every block atomically adds its x slice. */
extern "C" __global__ __aicore__ void initgm_kernel(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 64 * sizeof(float));
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float *)x + GetBlockIdx() * 64, 64);
    yg.SetGlobalBuffer((__gm__ float *)y, 64);
    if (GetBlockIdx() == 0) {
        InitGlobalMemory(yg, 64, 1.5f);
    }
    SyncAll();
    LocalTensor<float> t = b.Get<float>();
    DataCopy(t, xg, 64);
    SetAtomicAdd<float>();
    DataCopy(yg, t, 64);
    SetAtomicNone();
}

/* The high-level element-wise math: Sigmoid, Tanh, Sin, Cos, Erf, Floor with a tmp buffer. */
extern "C" __global__ __aicore__ void advmath_kernel(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    constexpr uint32_t N = 64;
    TBuf<TPosition::VECCALC> bx, by, bt;
    pipe.InitBuffer(bx, N * sizeof(float));
    pipe.InitBuffer(by, 6 * N * sizeof(float));
    pipe.InitBuffer(bt, 1024);
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float *)x, N);
    yg.SetGlobalBuffer((__gm__ float *)y, 6 * N);
    LocalTensor<float> a = bx.Get<float>(), o = by.Get<float>();
    LocalTensor<uint8_t> tmp = bt.Get<uint8_t>();
    DataCopy(a, xg, N);
    Sigmoid(o, a, tmp, N);
    Tanh(o[N], a, tmp, N);
    Sin(o[2 * N], a, N);
    Cos(o[3 * N], a, tmp, N);
    Erf(o[4 * N], a, tmp, N);
    Floor(o[5 * N], a, tmp, N);
    DataCopy(yg, o, 6 * N);
}

/* Sorting, A2 layout: full Sort of 128 float scores; Sort32 of 4 groups of halves, MrgSort of the
 * 4 sorted groups, Extract of the merged values and indexes. */
extern "C" __global__ __aicore__ void sort_kernel(GM_ADDR x, GM_ADDR xh, GM_ADDR y, GM_ADDR yv, GM_ADDR yi)
{
    TPipe pipe;
    constexpr uint32_t N = 128;
    TBuf<TPosition::VECCALC> bx, bxh, bidx, bs, bs2, bm, bv, bt;
    pipe.InitBuffer(bx, N * sizeof(float));
    pipe.InitBuffer(bxh, N * sizeof(half));
    pipe.InitBuffer(bidx, N * sizeof(uint32_t));
    pipe.InitBuffer(bs, N * 8);
    pipe.InitBuffer(bs2, N * 8);
    pipe.InitBuffer(bm, N * 8);
    pipe.InitBuffer(bv, N * sizeof(half));
    pipe.InitBuffer(bt, N * 8);
    GlobalTensor<float> xg;
    GlobalTensor<half> xhg, yvg;
    GlobalTensor<uint32_t> yg, yig;
    xg.SetGlobalBuffer((__gm__ float *)x, N);
    xhg.SetGlobalBuffer((__gm__ half *)xh, N);
    yg.SetGlobalBuffer((__gm__ uint32_t *)y, 2 * N);
    yvg.SetGlobalBuffer((__gm__ half *)yv, N);
    yig.SetGlobalBuffer((__gm__ uint32_t *)yi, N);
    LocalTensor<float> a = bx.Get<float>();
    LocalTensor<half> ah = bxh.Get<half>();
    LocalTensor<uint32_t> idx = bidx.Get<uint32_t>();
    DataCopy(a, xg, N);
    DataCopy(ah, xhg, N);
    CreateVecIndex(idx.ReinterpretCast<int32_t>(), (int32_t)0, N);
    LocalTensor<float> sorted = bs.Get<float>();
    LocalTensor<float> tmp = bt.Get<float>();
    Sort<float, true>(sorted, a, idx, tmp, N / 32);
    DataCopy(yg, sorted.ReinterpretCast<uint32_t>(), 2 * N);
    /* halves: 4 groups of 32 sorted, then merged */
    LocalTensor<half> s32 = bs2.Get<half>();
    Sort32(s32, ah, idx, 4);
    LocalTensor<half> merged = bm.Get<half>();
    const uint16_t lens[4] = {32, 32, 32, 32};
    MrgSort4Info info(lens, false, 15, 1);
    MrgSortSrcList<half> list(s32[0], s32[GetSortOffset<half>(32)], s32[GetSortOffset<half>(64)],
                              s32[GetSortOffset<half>(96)]);
    MrgSort(merged, list, info);
    uint16_t t1, t2, t3, t4;
    GetMrgSortResult(t1, t2, t3, t4);
    LocalTensor<half> vals = bv.Get<half>();
    LocalTensor<uint32_t> inds = bidx.Get<uint32_t>();
    Extract(vals, inds, merged, N / 32);
    inds.SetValue(0, inds.GetValue(0) + 1000u * (t1 + t2 + t3 + t4 == 128));
    DataCopy(yvg, vals, N);
    DataCopy(yig, inds, N);
}

/* Documented constraint violations, each a kernel fault: `which` 0 = a Gather offset past src,
 * 1 = a GatherMask built-in pattern outside [1, 7], 2 = Brcb with src0 == dst, 3 = MrgSort with
 * validBit 5. */
extern "C" __global__ __aicore__ void misuse_kernel(GM_ADDR x, uint32_t which)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b, bo;
    pipe.InitBuffer(b, 256 * sizeof(float));
    pipe.InitBuffer(bo, 64 * sizeof(uint32_t));
    GlobalTensor<float> xg;
    xg.SetGlobalBuffer((__gm__ float *)x, 64);
    LocalTensor<float> t = b.Get<float>();
    LocalTensor<uint32_t> o = bo.Get<uint32_t>();
    DataCopy(t, xg, 64);
    uint64_t rsvd = 0;
    switch (which) {
    case 0:
        Duplicate(o.ReinterpretCast<int32_t>(), 4 * 60, 64); /* byte 240 + 16 of a 64-float src */
        Gather(t[128], b.Get<float>(64), o, (uint32_t)16, 64);
        break;
    case 1: GatherMask(t[128], t[0], (uint8_t)9, false, 0, {1, 1, 8, 0}, rsvd); break;
    case 2: Brcb(t, t, 1, {1, 8}); break;
    default: {
        const uint16_t lens[4] = {4, 4, 4, 4};
        MrgSort(t[128], MrgSortSrcList<float>(t[0], t[8], t[16], t[24]), MrgSort4Info(lens, false, 5, 1));
        break;
    }
    }
}

/* DataCopyPad both ways with strides: 3 rows of 10 halves (20 bytes) every 24 halves of GM into
 * UB rows of 16 (2 halves of left padding, the row, 4 halves of right padding, all padding 7), a UB->UB
 * DataCopy of the 3 rows, and back out as rows of 10 halves every 12 halves of GM. */
extern "C" __global__ __aicore__ void pad_stride_kernel(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> b, b2;
    pipe.InitBuffer(b, 3 * 16 * sizeof(half));
    pipe.InitBuffer(b2, 3 * 16 * sizeof(half));
    GlobalTensor<half> xg, yg;
    xg.SetGlobalBuffer((__gm__ half *)x, 72);
    yg.SetGlobalBuffer((__gm__ half *)y, 48);
    LocalTensor<half> t = b.Get<half>(), u = b2.Get<half>();
    DataCopyExtParams in{3, 10 * sizeof(half), 14 * sizeof(half), 0, 0};
    DataCopyPadExtParams<half> pad{true, 2, 4, (half)7.0f};
    DataCopyPad(t, xg, in, pad);
    DataCopyParams uu{3, 1, 0, 0};
    DataCopy(u, t, uu);
    /* out: 3 rows of 12 halves (24 bytes, blockLen not a 32-byte multiple), 12 halves apart in
     * GM with 4 halves (8 bytes) of gap: UB rows are 32 bytes apart (one block each) */
    DataCopyExtParams out{3, 12 * sizeof(half), 0, 4 * sizeof(half), 0};
    DataCopyPad(yg, u, out);
}

/* The scalar bit operations, and TRACE_START / TRACE_STOP around a vector call. */
extern "C" __global__ __aicore__ void scalar_bits_kernel(GM_ADDR y)
{
    GlobalTensor<int64_t> yg;
    yg.SetGlobalBuffer((__gm__ int64_t *)y, 12);
    TRACE_START(0x1);
    yg.SetValue(0, ScalarGetCountOfValue<1>(0xffffull));
    yg.SetValue(1, ScalarGetCountOfValue<0>(0xffffull));
    yg.SetValue(2, ScalarCountLeadingZero(0x0fffffffffffffffull));
    yg.SetValue(3, CountLeadingZero(0));
    yg.SetValue(4, CountBitsCntSameAsSignBit(0x0f00000000000000ll));
    yg.SetValue(5, CountBitsCntSameAsSignBit(-1));
    yg.SetValue(6, CountBitsCntSameAsSignBit((int64_t)0xf0ffffffffffffffull));
    yg.SetValue(7, ScalarGetSFFValue<1>(0x28ull));
    yg.SetValue(8, ScalarGetSFFValue<0>(0xffull));
    yg.SetValue(9, ScalarGetSFFValue<1>(0));
    yg.SetValue(10, GetBitCount<1>(0x8000000000000001ull));
    yg.SetValue(11, 7);
    TRACE_STOP(0x1);
}

/* SoftMax over [8, 40] floats (rows of 40 = 160 bytes, 32-byte aligned) with the host tiling,
 * then half data with float sum / max and a SoftMaxShapeInfo of 30 valid columns in rows of 32,
 * then SimpleSoftMax with the first call's sum and max. The tiling is read from GM field by field. */
extern "C" __global__ __aicore__ void softmax_kernel(GM_ADDR x, GM_ADDR xh, GM_ADDR y, GM_ADDR yh, GM_ADDR sm,
                                                     GM_ADDR y2, GM_ADDR tilingGm)
{
    TPipe pipe;
    SoftMaxTiling tiling;
    GlobalTensor<uint32_t> tg;
    tg.SetGlobalBuffer((__gm__ uint32_t *)tilingGm, sizeof(SoftMaxTiling) / 4);
    uint32_t *tp = reinterpret_cast<uint32_t *>(&tiling);
    for (uint32_t i = 0; i < sizeof(SoftMaxTiling) / 4; ++i) {
        tp[i] = tg.GetValue(i);
    }
    constexpr uint32_t M = 8, K = 40, KH = 32;
    TBuf<TPosition::VECCALC> bx, by, bsum, bmax, bxh, byh, bsf, bmf, btmp, by2;
    pipe.InitBuffer(bx, M * K * 4);
    pipe.InitBuffer(by, M * K * 4);
    pipe.InitBuffer(bsum, M * 8 * 4);
    pipe.InitBuffer(bmax, M * 8 * 4);
    pipe.InitBuffer(bxh, M * KH * 2);
    pipe.InitBuffer(byh, M * KH * 2);
    pipe.InitBuffer(bsf, M * 8 * 4);
    pipe.InitBuffer(bmf, M * 8 * 4);
    pipe.InitBuffer(btmp, 4096);
    pipe.InitBuffer(by2, M * K * 4);
    GlobalTensor<float> xg, yg, smg, y2g;
    GlobalTensor<half> xhg, yhg;
    xg.SetGlobalBuffer((__gm__ float *)x, M * K);
    yg.SetGlobalBuffer((__gm__ float *)y, M * K);
    smg.SetGlobalBuffer((__gm__ float *)sm, 4 * M * 8);
    y2g.SetGlobalBuffer((__gm__ float *)y2, M * K);
    xhg.SetGlobalBuffer((__gm__ half *)xh, M * KH);
    yhg.SetGlobalBuffer((__gm__ half *)yh, M * KH);
    LocalTensor<float> a = bx.Get<float>(), o = by.Get<float>(), s = bsum.Get<float>(), m = bmax.Get<float>();
    LocalTensor<float> sf = bsf.Get<float>(), mf = bmf.Get<float>(), o2 = by2.Get<float>();
    LocalTensor<half> ah = bxh.Get<half>(), oh = byh.Get<half>();
    LocalTensor<uint8_t> tmp = btmp.Get<uint8_t>();
    DataCopy(a, xg, M * K);
    DataCopy(ah, xhg, M * KH);
    DataCopy(oh, xhg, M * KH); /* the padding columns keep the input */
    SoftMax<float>(o, s, m, a, tmp, tiling);
    SoftMaxShapeInfo info{M, KH, M, 30};
    SoftMax<half>(oh, sf, mf, ah, tiling, info);
    SimpleSoftMax<float>(o2, s, m, a, tiling);
    DataCopy(yg, o, M * K);
    DataCopy(yhg, oh, M * KH);
    DataCopy(smg, s, M * 8);
    DataCopy(smg[M * 8], m, M * 8);
    DataCopy(smg[2 * M * 8], sf, M * 8);
    DataCopy(smg[3 * M * 8], mf, M * 8);
    DataCopy(y2g, o2, M * K);
}

/* LayerNorm over [2, 3, 24] floats (eps 1e-5) with the host tiling read with
 * GET_TILING_DATA_WITH_STRUCT as the host class optiling::LayerNormTiling (what an op's tiling
 * header compiled into the kernel declares with TILING_DATA_FIELD_DEF_STRUCT(LayerNormTiling, ...)). */
extern "C" __global__ __aicore__ void layernorm_kernel(GM_ADDR x, GM_ADDR g, GM_ADDR b, GM_ADDR y, GM_ADDR mv,
                                                       GM_ADDR tilingGm)
{
    GET_TILING_DATA_WITH_STRUCT(optiling::LayerNormTiling, tiling, tilingGm);
    TPipe pipe;
    const uint32_t rows = tiling.bLength * tiling.sLength, h = tiling.hLength;
    TQue<TPosition::VECIN, 1> qx, qg, qb;
    TQue<TPosition::VECOUT, 1> qy, qm, qv;
    TBuf<TPosition::VECCALC> tmp;
    pipe.InitBuffer(qx, 1, rows * h * 4);
    pipe.InitBuffer(qg, 1, h * 4);
    pipe.InitBuffer(qb, 1, h * 4);
    pipe.InitBuffer(qy, 1, rows * h * 4);
    pipe.InitBuffer(qm, 1, 32);
    pipe.InitBuffer(qv, 1, 32);
    pipe.InitBuffer(tmp, tiling.get_tmpBufSize() * 4);
    GlobalTensor<float> xg, gg, bg, yg, mvg;
    xg.SetGlobalBuffer((__gm__ float *)x, rows * h);
    gg.SetGlobalBuffer((__gm__ float *)g, h);
    bg.SetGlobalBuffer((__gm__ float *)b, h);
    yg.SetGlobalBuffer((__gm__ float *)y, rows * h);
    mvg.SetGlobalBuffer((__gm__ float *)mv, 16);
    LocalTensor<float> xl = qx.AllocTensor<float>(), gl = qg.AllocTensor<float>(), bl = qb.AllocTensor<float>();
    DataCopy(xl, xg, rows * h);
    DataCopy(gl, gg, h);
    DataCopy(bl, bg, h);
    qx.EnQue(xl);
    qg.EnQue(gl);
    qb.EnQue(bl);
    xl = qx.DeQue<float>();
    gl = qg.DeQue<float>();
    bl = qb.DeQue<float>();
    LocalTensor<float> yl = qy.AllocTensor<float>(), ml = qm.AllocTensor<float>(), vl = qv.AllocTensor<float>();
    LocalTensor<uint8_t> t = tmp.Get<uint8_t>();
    LayerNorm<float, false>(yl, ml, vl, xl, gl, bl, t, (float)1e-5, tiling);
    qy.EnQue(yl);
    qm.EnQue(ml);
    qv.EnQue(vl);
    yl = qy.DeQue<float>();
    ml = qm.DeQue<float>();
    vl = qv.DeQue<float>();
    DataCopy(yg, yl, rows * h);
    DataCopy(mvg, ml, 8);
    DataCopy(mvg[8], vl, 8);
    qx.FreeTensor(xl);
    qg.FreeTensor(gl);
    qb.FreeTensor(bl);
    qy.FreeTensor(yl);
    qm.FreeTensor(ml);
    qv.FreeTensor(vl);
}

/* ------------------------------------------------------------------ host ---- */

static int failures = 0;

static void report(const char *name, int bad)
{
    if (bad == 0) {
        std::printf("PASS %s\n", name);
    } else {
        std::printf("FAIL %s (%d bad)\n", name, bad);
        ++failures;
    }
}

template <class T> static T *gm(size_t n)
{
    return static_cast<T *>(AscendC::GmAlloc(n * sizeof(T)));
}

static float frand(uint32_t &s)
{
    s = s * 1664525u + 1013904223u;
    return (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f);
}

static int check_f(const char *what, const float *got, const float *want, size_t n, float tol = 0.0f)
{
    int bad = 0;
    for (size_t i = 0; i < n; ++i) {
        const float d = std::fabs(got[i] - want[i]);
        const bool ok = tol == 0.0f ? (got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])))
                                    : d <= tol * std::fmax(1.0f, std::fabs(want[i]));
        if (!ok) {
            if (bad < 5) {
                std::printf("  %s[%zu] = %.9g, want %.9g\n", what, i, got[i], want[i]);
            }
            ++bad;
        }
    }
    return bad;
}

static void t_quebind()
{
    const int B = 4, N = 256;
    float *x = gm<float>(B * N), *y = gm<float>(B * N), *z = gm<float>(B * N);
    uint32_t s = 1;
    std::vector<float> wy(B * N), wz(B * N);
    for (int i = 0; i < B * N; ++i) {
        x[i] = frand(s) * 10;
        wy[i] = x[i] * 3.0f;
        wz[i] = x[i] + 1.0f;
    }
    ICPU_RUN_KF(quebind_kernel, B, (GM_ADDR)x, (GM_ADDR)y, (GM_ADDR)z);
    report("TQueBind+TBuf", check_f("y", y, wy.data(), B * N) + check_f("z", z, wz.data(), B * N));
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(z);
}

static void t_strided()
{
    float *x = gm<float>(256), *y = gm<float>(256);
    for (int i = 0; i < 256; ++i) {
        x[i] = (float)i;
        y[i] = -1.0f;
    }
    ICPU_RUN_KF(strided_copy_kernel, 1, (GM_ADDR)x, (GM_ADDR)y);
    /* UB: block b (of 16 floats) = x[b * 24 .. b * 24 + 16); GM out: block b at b * 24 */
    std::vector<float> w(256, -1.0f);
    for (int b = 0; b < 4; ++b) {
        for (int j = 0; j < 16; ++j) {
            w[b * 24 + j] = (float)(b * 24 + j);
        }
    }
    report("DataCopy(DataCopyParams strides)", check_f("y", y, w.data(), 256));
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

static void t_copypad()
{
    const int R = 5, C = 13, U = 16;
    float *x = gm<float>(R * C), *y = gm<float>(R * U);
    std::vector<float> w(R * U);
    for (int i = 0; i < R * C; ++i) {
        x[i] = (float)i;
    }
    for (int r = 0; r < R; ++r) {
        for (int c = 0; c < U; ++c) {
            w[r * U + c] = (c < C ? (float)(r * C + c) : -1.0f) + 0.5f;
        }
    }
    ICPU_RUN_KF(copypad_kernel, 1, (GM_ADDR)x, (GM_ADDR)y);
    report("DataCopyPad(DataCopyExtParams, right padding)", check_f("y", y, w.data(), R * U));
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

static void t_level0()
{
    float *x = gm<float>(512), *y = gm<float>(512);
    uint32_t s = 3;
    for (int i = 0; i < 512; ++i) {
        x[i] = frand(s) * 4;
    }
    std::vector<float> w(512, 7.0f);
    /* Duplicate mask 32, 2 repeats, blk stride 2, rep stride 16 (8 floats per block) */
    for (int r = 0; r < 2; ++r) {
        for (int e = 0; e < 32; ++e) {
            w[(r * 16 + (e / 8) * 2) * 8 + e % 8] = -2.0f;
        }
    }
    for (int r = 0; r < 4; ++r) {
        for (int e = 0; e < 64; e += 2) {
            w[256 + r * 64 + e] = x[256 + r * 64 + e] + 100.0f;
        }
    }
    for (int i = 0; i < 100; ++i) {
        w[i] = x[i] * x[i];
    }
    ICPU_RUN_KF(level0_kernel, 1, (GM_ADDR)x, (GM_ADDR)y);
    report("level-0 Duplicate/Adds + counter-mode Mul", check_f("y", y, w.data(), 512));
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

static void t_brcb()
{
    float *x = gm<float>(16), *y = gm<float>(256);
    std::vector<float> w(256, 0.0f);
    for (int i = 0; i < 16; ++i) {
        x[i] = (float)(i * 3 + 1);
    }
    for (int r = 0; r < 2; ++r) {
        for (int j = 0; j < 8; ++j) {
            for (int k = 0; k < 8; ++k) {
                w[(r * 8 + j) * 8 + k] = x[r * 8 + j];
            }
        }
    }
    ICPU_RUN_KF(brcb_kernel, 1, (GM_ADDR)x, (GM_ADDR)y);
    report("Brcb", check_f("y", y, w.data(), 256));
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

static void t_gather()
{
    uint16_t *x = gm<uint16_t>(128), *y = gm<uint16_t>(128);
    uint32_t *off = gm<uint32_t>(128);
    float *xf = gm<float>(128), *yf = gm<float>(128);
    fill_f16(x, 128, 5, 8.0f);
    for (int i = 0; i < 128; ++i) {
        off[i] = (uint32_t)((127 - i) * 2); /* reverse, in bytes */
        xf[i] = (float)i * 1.5f;
    }
    ICPU_RUN_KF(gather_kernel, 1, (GM_ADDR)x, (GM_ADDR)off, (GM_ADDR)y, (GM_ADDR)xf, (GM_ADDR)yf);
    int bad = 0;
    for (int i = 0; i < 128; ++i) {
        if (y[i] != x[127 - i]) {
            if (bad < 5) {
                std::printf("  y[%d] = 0x%04x want 0x%04x\n", i, y[i], x[127 - i]);
            }
            ++bad;
        }
    }
    std::vector<float> w(128);
    for (int i = 0; i < 128; ++i) {
        w[i] = xf[127 - i];
    }
    bad += check_f("yf", yf, w.data(), 128);
    report("Gather(count, mask/repeat)", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(off);
    AscendC::GmFree(xf);
    AscendC::GmFree(yf);
}

static void t_gathermask()
{
    float *x = gm<float>(128), *y = gm<float>(256);
    uint16_t *pat = gm<uint16_t>(16);
    uint32_t *cnt = gm<uint32_t>(8);
    for (int i = 0; i < 128; ++i) {
        x[i] = (float)i + 0.25f;
    }
    uint32_t s = 9;
    for (int i = 0; i < 8; ++i) {
        s = s * 1664525u + 1013904223u;
        pat[i] = (uint16_t)(s >> 9);
    }
    int bad = 0;
    for (uint32_t p = 1; p <= 7; ++p) {
        ICPU_RUN_KF(gathermask_kernel, 1, (GM_ADDR)x, (GM_ADDR)pat, (GM_ADDR)y, (GM_ADDR)cnt, p);
        std::vector<float> w(128, -5.0f);
        uint32_t n = 0;
        for (int i = 0; i < 128; ++i) {
            const int e = i % 64; /* the pattern restarts each repeat */
            bool keep = false;
            switch (p) {
            case 1: keep = e % 2 == 0; break;
            case 2: keep = e % 2 == 1; break;
            case 3: keep = e % 4 == 0; break;
            case 4: keep = e % 4 == 1; break;
            case 5: keep = e % 4 == 2; break;
            case 6: keep = e % 4 == 3; break;
            default: keep = true; break;
            }
            if (keep) {
                w[n++] = x[i];
            }
        }
        char what[32];
        std::snprintf(what, sizeof what, "pattern %u", p);
        bad += check_f(what, y, w.data(), 128);
        if (cnt[0] != n) {
            std::printf("  pattern %u: rsvdCnt %u, want %u\n", p, cnt[0], n);
            ++bad;
        }
    }
    /* user pattern on the 256 halves of x's bytes: keep half i if bit i%16 of pat[i/16] */
    const uint16_t *xh = reinterpret_cast<const uint16_t *>(x);
    const uint16_t *yh = reinterpret_cast<const uint16_t *>(y + 128);
    uint32_t n = 0;
    int ubad = 0;
    for (int i = 0; i < 128; ++i) {
        if ((pat[i / 16] >> (i % 16)) & 1) {
            if (yh[n] != xh[i] && ubad++ < 5) {
                std::printf("  user pattern: y[%u] = 0x%04x want 0x%04x\n", n, yh[n], xh[i]);
            }
            ++n;
        }
    }
    if (cnt[1] != n) {
        std::printf("  user pattern: rsvdCnt %u, want %u\n", cnt[1], n);
        ++ubad;
    }
    report("GatherMask(built-in 1..7, user pattern)", bad + ubad);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(pat);
    AscendC::GmFree(cnt);
}

static void t_vecindex()
{
    int32_t *y = gm<int32_t>(256);
    float *yf = gm<float>(256);
    for (int i = 0; i < 256; ++i) {
        yf[i] = 0.0f;
    }
    ICPU_RUN_KF(vecindex_kernel, 1, (GM_ADDR)y, (GM_ADDR)yf);
    int bad = 0;
    for (int i = 0; i < 256; ++i) {
        if (y[i] != i - 10) {
            ++bad;
        }
    }
    std::vector<float> w(256);
    for (int i = 0; i < 256; ++i) {
        w[i] = i < 200 ? 0.5f + (float)i : 0.0f;
    }
    /* dst past calCount is whatever the UB held: check the first 200 only */
    bad += check_f("yf", yf, w.data(), 200);
    report("CreateVecIndex", bad);
    AscendC::GmFree(y);
    AscendC::GmFree(yf);
}

static void t_cmpsel()
{
    const int N = 256;
    float *x = gm<float>(N), *y = gm<float>(N), *z = gm<float>(N);
    uint32_t s = 11;
    std::vector<float> w(N);
    for (int i = 0; i < N; ++i) {
        x[i] = frand(s);
        y[i] = frand(s);
        w[i] = x[i] > y[i] ? x[i] : 0.0f;
    }
    ICPU_RUN_KF(cmpsel_kernel, 1, (GM_ADDR)x, (GM_ADDR)y, (GM_ADDR)z);
    report("Compare+Select", check_f("z", z, w.data(), N));
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(z);
}

static void t_cast()
{
    float *x = gm<float>(256);
    int32_t *y = gm<int32_t>(256);
    const float vals[16] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, -2.6f,
                            3.0f, -3.0f, 0.49f, -0.51f, 100.7f, -100.2f, 7.5f, -7.5f};
    for (int i = 0; i < 256; ++i) {
        x[i] = vals[i % 16];
    }
    ICPU_RUN_KF(cast_kernel, 1, (GM_ADDR)x, (GM_ADDR)y);
    int bad = 0;
    for (int i = 0; i < 256; ++i) {
        double v = x[i], w;
        switch (i / 64) {
        case 0: w = std::round(v); break; /* ties away from zero */
        case 1: w = std::floor(v); break;
        case 2: w = std::ceil(v); break;
        default: w = std::trunc(v); break;
        }
        if (y[i] != (int32_t)w) {
            if (bad < 5) {
                std::printf("  y[%d] = %d for %g, want %d\n", i, y[i], v, (int32_t)w);
            }
            ++bad;
        }
    }
    report("Cast(float->int32, ROUND/FLOOR/CEIL/TRUNC)", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

static void t_math()
{
    const int N = 128;
    float *x = gm<float>(N), *y = gm<float>(N), *z = gm<float>(N), *w = gm<float>(N);
    uint16_t *xh = gm<uint16_t>(N);
    uint32_t s = 17;
    std::vector<float> wy(N), wz(N), ww(N);
    fill_f16(xh, N, 7, 4.0f);
    for (int i = 0; i < N; ++i) {
        x[i] = frand(s) * 3;
        z[i] = frand(s);
        w[i] = frand(s) * 2;
        float e = std::exp(x[i]) * 2.0f + 1.0f;
        float l = std::log(e);
        wy[i] = std::sqrt(l > 0 ? l : 0);
        wz[i] = x[i] * 0.25f + z[i];
        ww[i] = f16_val(xh, i) * 2.0f + w[i];
    }
    ICPU_RUN_KF(math_kernel, 1, (GM_ADDR)x, (GM_ADDR)y, (GM_ADDR)z, (GM_ADDR)xh, (GM_ADDR)w);
    int bad = check_f("y", y, wy.data(), N, 1e-6f);
    bad += check_f("z(Axpy)", z, wz.data(), N, 1e-7f);
    bad += check_f("w(Axpy half->float)", w, ww.data(), N, 1e-7f);
    report("Exp/Ln/Sqrt/Relu/Muls/Adds + Axpy", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(z);
    AscendC::GmFree(w);
    AscendC::GmFree(xh);
}

static void t_transpose()
{
    uint16_t *x = gm<uint16_t>(256), *y = gm<uint16_t>(256);
    fill_f16(x, 256, 21, 100.0f);
    ICPU_RUN_KF(transpose_kernel, 1, (GM_ADDR)x, (GM_ADDR)y);
    int bad = 0;
    for (int r = 0; r < 16; ++r) {
        for (int c = 0; c < 16; ++c) {
            if (y[r * 16 + c] != x[c * 16 + r]) {
                ++bad;
            }
        }
    }
    report("Transpose(16x16 half)", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

static void t_atomic_sync()
{
    const int B = 4;
    float *y = gm<float>(64), *z = gm<float>(8);
    for (int i = 0; i < 64; ++i) {
        y[i] = 0.5f;
    }
    ICPU_RUN_KF(atomic_sync_kernel, B, (GM_ADDR)y, (GM_ADDR)z);
    std::vector<float> wy(64, 0.5f + 1 + 2 + 3 + 4), wz(8, 64 * (0.5f + 10) + B);
    report("SetAtomicAdd + SyncAll + GetBlockNum", check_f("y", y, wy.data(), 64) + check_f("z", z, wz.data(), 8));
    AscendC::GmFree(y);
    AscendC::GmFree(z);
}

static void t_vecext()
{
    const int N = 128;
    float *x = gm<float>(N), *y = gm<float>(N), *z = gm<float>(6 * N);
    int32_t *xi = gm<int32_t>(N), *zi = gm<int32_t>(2 * N);
    uint32_t s = 23;
    std::vector<float> w(6 * N, -9.0f);
    std::vector<int32_t> wi(2 * N);
    for (int i = 0; i < N; ++i) {
        x[i] = frand(s) * 3;
        y[i] = frand(s) * 3;
        xi[i] = (int32_t)((s = s * 1664525u + 1013904223u) >> 4) - (1 << 27);
    }
    for (int i = 0; i < N; ++i) {
        w[i] = std::fmax(x[i] + y[i], 0.0f);
        w[N + i] = std::fmax(x[i] - y[i], 0.0f);
        w[2 * N + i] = x[i] * y[i] + 0.5f;
        w[3 * N + i] = x[i] * 2.0f + y[i];
        wi[i] = (int32_t)((uint32_t)xi[i] << 3);
        wi[N + i] = xi[i] >> 2;
    }
    for (int r = 0; r < 2; ++r) {
        for (int e = 0; e < 40; ++e) {
            w[4 * N + r * 128 + e] = x[r * 64 + e];
        }
    }
    ICPU_RUN_KF(vecext_kernel, 1, (GM_ADDR)x, (GM_ADDR)y, (GM_ADDR)z, (GM_ADDR)xi, (GM_ADDR)zi);
    int bad = check_f("z", z, w.data(), 6 * N, 1e-7f);
    for (int i = 0; i < 2 * N; ++i) {
        if (zi[i] != wi[i] && bad++ < 5) {
            std::printf("  zi[%d] = %d want %d\n", i, zi[i], wi[i]);
        }
    }
    report("AddRelu/SubRelu/MulAddDst/FusedMulAdd/Copy/ShiftLeft/ShiftRight", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(z);
    AscendC::GmFree(xi);
    AscendC::GmFree(zi);
}

static void t_initgm()
{
    const int B = 3;
    float *x = gm<float>(B * 64), *y = gm<float>(64);
    std::vector<float> w(64, 1.5f);
    for (int i = 0; i < B * 64; ++i) {
        x[i] = (float)(i % 7) - 2.0f;
        w[i % 64] += x[i];
    }
    for (int i = 0; i < 64; ++i) {
        y[i] = 1000.0f; /* garbage InitGlobalMemory clears */
    }
    ICPU_RUN_KF(initgm_kernel, B, (GM_ADDR)x, (GM_ADDR)y);
    report("InitGlobalMemory + SyncAll + SetAtomicAdd", check_f("y", y, w.data(), 64));
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

static void t_advmath()
{
    const int N = 64;
    float *x = gm<float>(N), *y = gm<float>(6 * N);
    uint32_t s = 29;
    std::vector<float> w(6 * N);
    for (int i = 0; i < N; ++i) {
        x[i] = frand(s) * 4;
        w[i] = 1.0f / (1.0f + std::exp(-x[i]));
        w[N + i] = std::tanh(x[i]);
        w[2 * N + i] = std::sin(x[i]);
        w[3 * N + i] = std::cos(x[i]);
        w[4 * N + i] = std::erf(x[i]);
        w[5 * N + i] = std::floor(x[i]);
    }
    ICPU_RUN_KF(advmath_kernel, 1, (GM_ADDR)x, (GM_ADDR)y);
    report("Sigmoid/Tanh/Sin/Cos/Erf/Floor", check_f("y", y, w.data(), 6 * N, 1e-6f));
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

static void t_sort()
{
    const int N = 128;
    float *x = gm<float>(N);
    uint16_t *xh = gm<uint16_t>(N), *yv = gm<uint16_t>(N);
    uint32_t *y = gm<uint32_t>(2 * N), *yi = gm<uint32_t>(N);
    uint32_t s = 31;
    for (int i = 0; i < N; ++i) {
        x[i] = frand(s) * 50;
    }
    fill_f16(xh, N, 37, 50.0f);
    xh[5] = xh[70]; /* a tie: the lower input position first */
    ICPU_RUN_KF(sort_kernel, 1, (GM_ADDR)x, (GM_ADDR)xh, (GM_ADDR)y, (GM_ADDR)yv, (GM_ADDR)yi);
    int bad = 0;
    std::vector<int> ord(N);
    for (int i = 0; i < N; ++i) {
        ord[i] = i;
    }
    std::stable_sort(ord.begin(), ord.end(), [&](int p, int q) { return x[p] > x[q]; });
    for (int i = 0; i < N; ++i) {
        float sc;
        std::memcpy(&sc, &y[2 * i], 4);
        if (sc != x[ord[i]] || y[2 * i + 1] != (uint32_t)ord[i]) {
            if (bad++ < 5) {
                std::printf("  sorted[%d] = (%g, %u), want (%g, %d)\n", i, sc, y[2 * i + 1], x[ord[i]], ord[i]);
            }
        }
    }
    for (int i = 0; i < N; ++i) {
        ord[i] = i;
    }
    std::stable_sort(ord.begin(), ord.end(), [&](int p, int q) {
        const float a = f16_val(xh, p), b = f16_val(xh, q);
        return a > b;
    });
    for (int i = 0; i < N; ++i) {
        const uint32_t wi = (uint32_t)ord[i] + (i == 0 ? 1000u : 0u);
        if (yv[i] != xh[ord[i]] || yi[i] != wi) {
            if (bad++ < 5) {
                std::printf("  merged[%d] = (0x%04x, %u), want (0x%04x, %u)\n", i, yv[i], yi[i], xh[ord[i]], wi);
            }
        }
    }
    report("Sort/Sort32/MrgSort/Extract", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(xh);
    AscendC::GmFree(y);
    AscendC::GmFree(yv);
    AscendC::GmFree(yi);
}

static void t_pad_stride()
{
    uint16_t *x = gm<uint16_t>(72), *y = gm<uint16_t>(48);
    fill_f16(x, 72, 41, 9.0f);
    const uint16_t sentinel = f16_bits((_Float16)-3.0f), seven = f16_bits((_Float16)7.0f);
    for (int i = 0; i < 48; ++i) {
        y[i] = sentinel;
    }
    ICPU_RUN_KF(pad_stride_kernel, 1, (GM_ADDR)x, (GM_ADDR)y);
    /* UB row r: 2 halves of left padding (7), the 10 of the row, 4 of right padding (7); out: the
     * first 12 of each UB row at r * 16 in GM */
    int bad = 0;
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 16; ++c) {
            const int gi = r * 16 + c;
            uint16_t want;
            if (c >= 12) {
                want = sentinel; /* the 4-half gap and the tail are not written */
            } else if (c < 2) {
                want = seven;
            } else {
                want = x[r * 24 + (c - 2)];
            }
            if (y[gi] != want && bad++ < 5) {
                std::printf("  y[%d] = 0x%04x, want 0x%04x\n", gi, y[gi], want);
            }
        }
    }
    report("DataCopyPad(strides, left padding) + UB->UB DataCopy", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

static void t_scalar_bits()
{
    int64_t *y = gm<int64_t>(12);
    ICPU_RUN_KF(scalar_bits_kernel, 1, (GM_ADDR)y);
    const int64_t w[12] = {16, 48, 4, 64, 3, -1, 3, 3, 8, -1, 2, 7};
    int bad = 0;
    for (int i = 0; i < 12; ++i) {
        if (y[i] != w[i] && bad++ < 5) {
            std::printf("  y[%d] = %lld, want %lld\n", i, (long long)y[i], (long long)w[i]);
        }
    }
    report("scalar bit operations + TRACE_START/STOP", bad);
    AscendC::GmFree(y);
}

static void t_softmax()
{
    const int M = 8, K = 40, KH = 32;
    float *x = gm<float>(M * K), *y = gm<float>(M * K), *sm = gm<float>(4 * M * 8), *y2 = gm<float>(M * K);
    uint16_t *xh = gm<uint16_t>(M * KH), *yh = gm<uint16_t>(M * KH);
    uint32_t s = 43;
    for (int i = 0; i < M * K; ++i) {
        x[i] = frand(s) * 6;
    }
    fill_f16(xh, M * KH, 47, 5.0f);
    /* the host tiling, as a kernel-launch main computes it */
    optiling::SoftMaxTiling tiling;
    ge::Shape shape(std::vector<int64_t>{M, K});
    const uint32_t minTmp = AscendC::GetSoftMaxMinTmpSize(shape, sizeof(float), false);
    const uint32_t maxTmp = AscendC::GetSoftMaxMaxTmpSize(shape, sizeof(float), false);
    AscendC::SoftMaxTilingFunc(shape, sizeof(float), 4096, tiling);
    uint32_t *tgm = gm<uint32_t>(tiling.GetDataSize() / 4);
    tiling.SaveToBuffer(tgm, tiling.GetDataSize());
    ICPU_RUN_KF(softmax_kernel, 1, (GM_ADDR)x, (GM_ADDR)xh, (GM_ADDR)y, (GM_ADDR)yh, (GM_ADDR)sm, (GM_ADDR)y2,
                (GM_ADDR)tgm);
    int bad = 0;
    if (tiling.get_srcM() != (uint32_t)M || tiling.get_srcK() != (uint32_t)K || minTmp == 0 || maxTmp < minTmp) {
        std::printf("  tiling srcM %u srcK %u, tmp %u..%u\n", tiling.get_srcM(), tiling.get_srcK(), minTmp, maxTmp);
        ++bad;
    }
    std::vector<float> w(M * K), wsum(M * 8), wmax(M * 8);
    for (int r = 0; r < M; ++r) {
        double mx = -1e30, sum = 0;
        for (int j = 0; j < K; ++j) {
            mx = std::fmax(mx, x[r * K + j]);
        }
        for (int j = 0; j < K; ++j) {
            sum += std::exp(x[r * K + j] - mx);
        }
        for (int j = 0; j < K; ++j) {
            w[r * K + j] = (float)(std::exp(x[r * K + j] - mx) / sum);
        }
        for (int j = 0; j < 8; ++j) {
            wsum[r * 8 + j] = (float)sum;
            wmax[r * 8 + j] = (float)mx;
        }
    }
    bad += check_f("y", y, w.data(), M * K, 1e-5f);
    bad += check_f("sum", sm, wsum.data(), M * 8, 1e-5f);
    bad += check_f("max", sm + M * 8, wmax.data(), M * 8);
    bad += check_f("y (SimpleSoftMax)", y2, w.data(), M * K, 1e-5f);
    /* half: 30 valid columns of rows of 32; the last 2 keep the input */
    for (int r = 0; r < M; ++r) {
        double mx = -1e30, sum = 0;
        for (int j = 0; j < 30; ++j) {
            mx = std::fmax(mx, f16_val(xh, r * KH + j));
        }
        for (int j = 0; j < 30; ++j) {
            sum += std::exp(f16_val(xh, r * KH + j) - mx);
        }
        for (int j = 0; j < KH; ++j) {
            const float want = j < 30 ? (float)(std::exp(f16_val(xh, r * KH + j) - mx) / sum) : f16_val(xh, r * KH + j);
            const float got = f16_val(yh, r * KH + j);
            if (std::fabs(got - want) > 1e-3f * std::fmax(1.0f, std::fabs(want)) && bad++ < 5) {
                std::printf("  yh[%d][%d] = %g, want %g\n", r, j, got, want);
            }
        }
        if (std::fabs(sm[2 * M * 8 + r * 8] - sum) > 1e-5 * sum || sm[3 * M * 8 + r * 8 + 7] != (float)mx) {
            if (bad++ < 5) {
                std::printf("  half row %d: sum %g max %g, want %g %g\n", r, sm[2 * M * 8 + r * 8],
                            sm[3 * M * 8 + r * 8 + 7], sum, mx);
            }
        }
    }
    report("SoftMax/SimpleSoftMax + SoftMaxTilingFunc", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(sm);
    AscendC::GmFree(y2);
    AscendC::GmFree(xh);
    AscendC::GmFree(yh);
    AscendC::GmFree(tgm);
}

static void t_layernorm()
{
    const int B = 2, S = 3, H = 24, R = B * S;
    float *x = gm<float>(R * H), *g = gm<float>(H), *b = gm<float>(H), *y = gm<float>(R * H), *mv = gm<float>(16);
    uint32_t s = 53;
    for (int i = 0; i < R * H; ++i) {
        x[i] = frand(s) * 3 + (float)(i / H);
    }
    for (int j = 0; j < H; ++j) {
        g[j] = 1.0f + frand(s) * 0.5f;
        b[j] = frand(s);
    }
    optiling::LayerNormTiling tiling;
    ge::Shape shape(std::vector<int64_t>{B, S, H});
    uint32_t maxTmp = 0, minTmp = 0;
    AscendC::GetLayerNormMaxMinTmpSize(shape, sizeof(float), false, maxTmp, minTmp);
    AscendC::GetLayerNormNDTilingInfo(shape, minTmp, sizeof(float), false, tiling);
    uint32_t *tgm = gm<uint32_t>(tiling.GetDataSize() / 4);
    tiling.SaveToBuffer(tgm, tiling.GetDataSize());
    ICPU_RUN_KF(layernorm_kernel, 1, (GM_ADDR)x, (GM_ADDR)g, (GM_ADDR)b, (GM_ADDR)y, (GM_ADDR)mv, (GM_ADDR)tgm);
    int bad = 0;
    if (minTmp == 0 || maxTmp < minTmp || tiling.get_hLength() != (uint32_t)H || tiling.get_bLength() != (uint32_t)B) {
        std::printf("  tiling: tmp %u..%u, b %u h %u\n", minTmp, maxTmp, tiling.get_bLength(), tiling.get_hLength());
        ++bad;
    }
    std::vector<float> w(R * H), wm(8, 0.0f), wv(8, 0.0f);
    for (int r = 0; r < R; ++r) {
        double mu = 0, var = 0;
        for (int j = 0; j < H; ++j) {
            mu += x[r * H + j];
        }
        mu /= H;
        for (int j = 0; j < H; ++j) {
            var += (x[r * H + j] - mu) * (x[r * H + j] - mu);
        }
        var /= H;
        for (int j = 0; j < H; ++j) {
            w[r * H + j] = (float)((x[r * H + j] - mu) / std::sqrt(var + 1e-5) * g[j] + b[j]);
        }
        wm[r] = (float)mu;
        wv[r] = (float)var;
    }
    bad += check_f("y", y, w.data(), R * H, 1e-5f);
    bad += check_f("mean", mv, wm.data(), R, 1e-6f);
    bad += check_f("variance", mv + 8, wv.data(), R, 1e-5f);
    report("LayerNorm + GetLayerNormNDTilingInfo", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(g);
    AscendC::GmFree(b);
    AscendC::GmFree(y);
    AscendC::GmFree(mv);
    AscendC::GmFree(tgm);
}

int main(int argc, char **argv)
{
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    const char *only = argc > 1 ? argv[1] : nullptr;
    if (only != nullptr && std::strncmp(only, "misuse", 6) == 0) {
        float *x = gm<float>(64);
        ICPU_RUN_KF(misuse_kernel, 1, (GM_ADDR)x, (uint32_t)std::atoi(only + 6));
        std::printf("misuse %s did not fault\n", only + 6);
        return 0;
    }
    struct {
        const char *name;
        void (*fn)();
    } cases[] = {
        {"quebind", t_quebind},   {"strided", t_strided},       {"copypad", t_copypad},
        {"level0", t_level0},     {"brcb", t_brcb},             {"gather", t_gather},
        {"gathermask", t_gathermask}, {"vecindex", t_vecindex}, {"cmpsel", t_cmpsel},
        {"cast", t_cast},         {"math", t_math},             {"transpose", t_transpose},
        {"atomic_sync", t_atomic_sync}, {"vecext", t_vecext}, {"initgm", t_initgm},
        {"advmath", t_advmath},   {"sort", t_sort},             {"pad_stride", t_pad_stride},
        {"scalar_bits", t_scalar_bits}, {"softmax", t_softmax},
        {"layernorm", t_layernorm},
    };
    for (auto &c : cases) {
        if (only == nullptr || std::strcmp(only, c.name) == 0) {
            c.fn();
        }
    }
    return failures;
}
