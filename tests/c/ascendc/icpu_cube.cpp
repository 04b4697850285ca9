/* The cube path of the basic API, as the Ascend C reference describes a matrix product on the
 * AI core (矩阵编程（基础API）): A and B (fp16, ND in GM) to L1 in the NZ layout (DataCopy with
 * Nd2NzParams), to L0A / L0B (LoadData with LoadData2DParams; B transposed on the way), Mmad into
 * L0C (fp32), Fixpipe to GM in ND (fp32, or fp16 through F322F16). The inputs are small integers
 * and halves whose products and sums are exact in fp32, so every result is exact whatever the
 * summation order: the check is bit for bit against a host product. Also Mmad accumulation (K in
 * two steps, cmatrixInitVal false). One "PASS <case>" line per case; exits with the failures. */
#include "tikicpulib.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "host_f16.h"

constexpr uint32_t C0 = 16; /* fractal side for half */

/* One block computes rows [block * BM, block * BM + BM) of C = A (M x K) x B (K x N), in one
 * pass (BM x K and K x N fit the buffers); K may be split in two Mmad steps. OUT is float
 * (Fixpipe NoQuant) or half (F322F16). */
template <class OUT, uint32_t M, uint32_t K, uint32_t N, uint32_t BM, uint32_t K1>
__aicore__ inline void cube_probe(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    using namespace AscendC;
    TPipe pipe;
    GlobalTensor<half> ag, bg;
    GlobalTensor<OUT> cg;
    ag.SetGlobalBuffer((__gm__ half *)a + GetBlockIdx() * BM * K, BM * K);
    bg.SetGlobalBuffer((__gm__ half *)b, K * N);
    cg.SetGlobalBuffer((__gm__ OUT *)c + GetBlockIdx() * BM * N, BM * N);

    TQue<TPosition::A1, 1> qa1;
    TQue<TPosition::B1, 1> qb1;
    TQue<TPosition::A2, 1> qa2;
    TQue<TPosition::B2, 1> qb2;
    TQue<TPosition::CO1, 1> qc1;
    pipe.InitBuffer(qa1, 1, BM * K * sizeof(half));
    pipe.InitBuffer(qb1, 1, K * N * sizeof(half));
    pipe.InitBuffer(qa2, 1, BM * K * sizeof(half));
    pipe.InitBuffer(qb2, 1, K * N * sizeof(half));
    pipe.InitBuffer(qc1, 1, BM * N * sizeof(float));

    /* GM (ND) -> L1 (NZ): one matrix of nValue rows x dValue columns, source row length K / N,
     * destination column-of-fractals height BM / K (srcNdMatrixStride etc. unused). */
    LocalTensor<half> a1 = qa1.AllocTensor<half>();
    LocalTensor<half> b1 = qb1.AllocTensor<half>();
    Nd2NzParams pa;
    pa.ndNum = 1;
    pa.nValue = BM;
    pa.dValue = K;
    pa.srcNdMatrixStride = 0;
    pa.srcDValue = K;
    pa.dstNzC0Stride = BM;
    pa.dstNzNStride = 1;
    pa.dstNzMatrixStride = 0;
    DataCopy(a1, ag, pa);
    Nd2NzParams pb;
    pb.ndNum = 1;
    pb.nValue = K;
    pb.dValue = N;
    pb.srcNdMatrixStride = 0;
    pb.srcDValue = N;
    pb.dstNzC0Stride = K;
    pb.dstNzNStride = 1;
    pb.dstNzMatrixStride = 0;
    DataCopy(b1, bg, pb);
    qa1.EnQue(a1);
    qb1.EnQue(b1);
    a1 = qa1.DeQue<half>();
    b1 = qb1.DeQue<half>();

    /* L1 (NZ) -> L0A (ZZ): per row of fractals, K / 16 fractals, source stride BM / 16. */
    LocalTensor<half> a2 = qa2.AllocTensor<half>();
    for (uint32_t i = 0; i < BM / C0; i++) {
        LoadData2DParams p;
        p.startIndex = 0;
        p.repeatTimes = K / C0;
        p.srcStride = BM / C0;
        p.sid = 0;
        p.dstGap = 0;
        p.ifTranspose = false;
        LoadData(a2[i * K * C0], a1[i * C0 * C0], p);
    }
    /* L1 (NZ) -> L0B (ZN), transposing each fractal. */
    LocalTensor<half> b2 = qb2.AllocTensor<half>();
    for (uint32_t i = 0; i < K / C0; i++) {
        LoadData2DParams p;
        p.startIndex = 0;
        p.repeatTimes = N / C0;
        p.srcStride = K / C0;
        p.sid = 0;
        p.dstGap = 0;
        p.ifTranspose = true;
        LoadData(b2[i * N * C0], b1[i * C0 * C0], p);
    }
    qa1.FreeTensor(a1);
    qb1.FreeTensor(b1);
    qa2.EnQue(a2);
    qb2.EnQue(b2);
    a2 = qa2.DeQue<half>();
    b2 = qb2.DeQue<half>();

    LocalTensor<float> c1 = qc1.AllocTensor<float>();
    if (K1 == K) {
        Mmad(c1, a2, b2, MmadParams(BM, N, K, 0, false, true));
    } else {
        /* the first K1 columns of A (K1 / 16 fractal columns of every fractal row) and the
         * first K1 rows of B, then the rest, accumulated in L0C */
        TBuf<TPosition::A2> ta;
        TBuf<TPosition::B2> tb;
        pipe.InitBuffer(ta, BM * K * sizeof(half));
        pipe.InitBuffer(tb, K * N * sizeof(half));
        LocalTensor<half> a_lo = ta.Get<half>(), b_lo = tb.Get<half>();
        for (uint32_t part = 0; part < 2; part++) {
            uint32_t k0 = part == 0 ? 0 : K1, kk = part == 0 ? K1 : K - K1;
            for (uint32_t i = 0; i < BM / C0; i++) {
                for (uint32_t j = 0; j < kk / C0; j++) {
                    /* ZZ: fractal (i, j) of the part from fractal (i, k0 / 16 + j) of A */
                    for (uint32_t e = 0; e < C0 * C0; e++) {
                        a_lo.SetValue((i * (kk / C0) + j) * C0 * C0 + e, a2.GetValue((i * (K / C0) + k0 / C0 + j) * C0 * C0 + e));
                    }
                }
            }
            /* ZN (B2): rows of fractals along K, each N / 16 fractals */
            for (uint32_t e = 0; e < kk * N; e++) {
                b_lo.SetValue(e, b2.GetValue(k0 * N + e));
            }
            Mmad(c1, a_lo, b_lo, MmadParams(BM, N, kk, 0, false, part == 0));
        }
    }
    qa2.FreeTensor(a2);
    qb2.FreeTensor(b2);
    qc1.EnQue(c1);
    c1 = qc1.DeQue<float>();

    /* L0C (NZ, fp32) -> GM (ND): N columns, BM rows, source stride BM (rows of a fractal column),
     * destination row length N. */
    FixpipeParamsV220 fp;
    fp.nSize = N;
    fp.mSize = BM;
    fp.srcStride = BM;
    fp.dstStride = N;
    fp.quantPre = sizeof(OUT) == 2 ? QuantMode_t::F322F16 : QuantMode_t::NoQuant;
    fp.ndNum = 1;
    Fixpipe<OUT, float, CFG_ROW_MAJOR>(cg, c1, fp);
    qc1.FreeTensor(c1);
}

extern "C" __global__ __aicore__ void cube_f32(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    cube_probe<float, 32, 48, 64, 32, 48>(a, b, c);
}
extern "C" __global__ __aicore__ void cube_f16_2blocks(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    cube_probe<half, 256, 64, 128, 128, 64>(a, b, c);
}
extern "C" __global__ __aicore__ void cube_f32_accumulate(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    cube_probe<float, 48, 64, 32, 48, 32>(a, b, c);
}

static int failures = 0;

template <class OUT, class K>
static void run(const char *name, K kernel, uint32_t blocks, uint32_t M, uint32_t Kd, uint32_t N)
{
    uint16_t *a = (uint16_t *)AscendC::GmAlloc(M * Kd * 2);
    uint16_t *b = (uint16_t *)AscendC::GmAlloc(Kd * N * 2);
    OUT *c = (OUT *)AscendC::GmAlloc(M * N * sizeof(OUT));
    /* integers in [-6, 6] for A, multiples of 1/8 in [-0.625, 0.625] for B: exact sums */
    for (uint32_t i = 0; i < M * Kd; i++) {
        a[i] = f16_bits((_Float16)(float)((int)((i * 7 + i / Kd) % 13) - 6));
    }
    for (uint32_t i = 0; i < Kd * N; i++) {
        b[i] = f16_bits((_Float16)((float)((int)((i * 5 + i / N) % 11) - 5) / 8.0f));
    }
    ICPU_RUN_KF(kernel, blocks, (GM_ADDR)a, (GM_ADDR)b, (GM_ADDR)c);
    int bad = 0;
    for (uint32_t i = 0; i < M; i++) {
        for (uint32_t j = 0; j < N; j++) {
            double s = 0;
            for (uint32_t k = 0; k < Kd; k++) {
                s += (double)(float)f16_from_bits(a[i * Kd + k]) * (double)(float)f16_from_bits(b[k * N + j]);
            }
            OUT want = (OUT)(float)s;
            if (std::memcmp(&want, &c[i * N + j], sizeof(OUT)) != 0) {
                if (bad < 3) {
                    std::printf("  %s: C[%u][%u] = %g, expected %g\n", name, i, j, (double)(float)c[i * N + j],
                                s);
                }
                bad++;
            }
        }
    }
    std::printf("%s %s\n", bad == 0 ? "PASS" : "FAIL", name);
    failures += bad != 0;
    AscendC::GmFree(a);
    AscendC::GmFree(b);
    AscendC::GmFree(c);
}

int main()
{
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    run<float>("Mmad fp16 x fp16 -> fp32, Fixpipe ND", cube_f32, 1, 32, 48, 64);
    run<_Float16>("Mmad fp16 -> fp32, Fixpipe F322F16, 2 blocks", cube_f16_2blocks, 2, 256, 64, 128);
    run<float>("Mmad accumulating K in two steps", cube_f32_accumulate, 1, 48, 64, 32);
    std::printf("%d failures\n", failures);
    return failures;
}
