/* Probe kernels written from the Ascend C documentation, built with `npu-emu ascendc-stub` and
 * g++ into one library and run by probe_host.cpp (tests/tests/kernel_probes.rs):
 *   misc_kernel  no extern "C", `__gm__ float *` parameters, TPipe passed by pointer into the
 *                operator class, LocalTensor offsets, Duplicate/Mul/Maxs/Mins, UB scalar
 *                Get/SetValue, GM scalar GetValue/SetValue, AscendC::printf;
 *   ws_kernel    GM_ADDR workspace (nullptr from the host) and GM_ADDR tiling read with
 *                GlobalTensor<uint32_t>::GetValue, TQueBind VECIN->VECOUT, int32_t Adds;
 *   pad2d        DataCopyPad of a 16 x 31 float matrix (rows of 124 bytes) padded in UB with
 *                a padding value, and back, with FetchEventID / SetFlag / WaitFlag;
 *   uneven_add   z = x + y split over former and tail blocks of different lengths (tiling
 *                struct by value), tiles moved with the 16-bit DataCopyParams /
 *                DataCopyPadParams forms of DataCopyPad, the last tile of a block shorter;
 *   err_kernel   the mistakes a CI user expects to be caught, one per `mode`. */
#include "kernel_operator.h"
using namespace AscendC;

class KernelMisc {
public:
    __aicore__ inline void Init(__gm__ float *x, __gm__ float *y, uint32_t n, TPipe *pipeIn)
    {
        pipe = pipeIn;
        this->n = n;
        xGm.SetGlobalBuffer(x + n * GetBlockIdx(), n);
        yGm.SetGlobalBuffer(y + n * GetBlockIdx(), n);
        pipe->InitBuffer(q, 1, n * sizeof(float));
        pipe->InitBuffer(calc, 2 * n * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopy(t, xGm, n);
        q.EnQue(t);
        t = q.DeQue<float>();
        LocalTensor<float> c = calc.Get<float>();
        Duplicate<float>(c, 2.0f, 2 * n);
        Mul(c[n], t, c, n);
        Maxs(c[n], c[n], -4.0f, n);
        Mins(c[n], c[n], 100.0f, n);
        for (uint32_t i = 0; i < 8; i++) {
            c.SetValue(n + i, c.GetValue(n + i) + 1000.0f);
        }
        DataCopy(yGm, c[n], n);
        q.FreeTensor(t);
        if (GetBlockIdx() == 0) {
            float v = xGm.GetValue(1);
            yGm.SetValue(n - 1, v * 3);
            AscendC::printf("block %ld of %ld n=%u v=%f\n", GetBlockIdx(), GetBlockNum(), n, v);
        }
    }

private:
    TPipe *pipe;
    TQue<TPosition::VECIN, 1> q;
    TBuf<TPosition::VECCALC> calc;
    GlobalTensor<float> xGm, yGm;
    uint32_t n;
};

__global__ __aicore__ void misc_kernel(__gm__ float *x, __gm__ float *y, uint32_t n)
{
    TPipe pipe;
    KernelMisc op;
    op.Init(x, y, n, &pipe);
    op.Process();
}

extern "C" __global__ __aicore__ void ws_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GlobalTensor<uint32_t> t;
    t.SetGlobalBuffer((__gm__ uint32_t *)tiling, 2);
    uint32_t n = t.GetValue(0);
    uint32_t add = t.GetValue(1);
    GlobalTensor<int32_t> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ int32_t *)x + n * GetBlockIdx(), n);
    yGm.SetGlobalBuffer((__gm__ int32_t *)y + n * GetBlockIdx(), n);
    TPipe pipe;
    TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> q;
    pipe.InitBuffer(q, 1, n * sizeof(int32_t));
    LocalTensor<int32_t> l = q.AllocTensor<int32_t>();
    DataCopy(l, xGm, n);
    q.EnQue(l);
    l = q.DeQue<int32_t>();
    Adds(l, l, (int32_t)add, n);
    q.EnQue(l);
    l = q.DeQue<int32_t>();
    DataCopy(yGm, l, n);
    q.FreeTensor(l);
}

extern "C" __global__ __aicore__ void pad2d(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols)
{
    uint32_t padCols = (cols * sizeof(float) + 31) / 32 * 32 / sizeof(float);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float *)x + rows * cols * GetBlockIdx(), rows * cols);
    yGm.SetGlobalBuffer((__gm__ float *)y + rows * cols * GetBlockIdx(), rows * cols);
    TPipe pipe;
    TQue<TPosition::VECIN, 1> qi;
    TQue<TPosition::VECOUT, 1> qo;
    pipe.InitBuffer(qi, 1, rows * padCols * sizeof(float));
    pipe.InitBuffer(qo, 1, rows * padCols * sizeof(float));
    LocalTensor<float> a = qi.AllocTensor<float>();
    DataCopyExtParams cp{(uint16_t)rows, (uint32_t)(cols * sizeof(float)), 0, 0, 0};
    DataCopyPadExtParams<float> pp{true, 0, (uint8_t)(padCols - cols), -1.0f};
    DataCopyPad(a, xGm, cp, pp);
    qi.EnQue(a);
    a = qi.DeQue<float>();
    LocalTensor<float> b = qo.AllocTensor<float>();
    Muls(b, a, 2.0f, rows * padCols);
    Adds(b, b, 1.0f, rows * padCols);
    qo.EnQue(b);
    qi.FreeTensor(a);
    b = qo.DeQue<float>();
    /* The documented event idiom (a no-op when each block runs in program order). */
    event_t eventVToMTE3 = static_cast<event_t>(GetTPipePtr()->FetchEventID(HardEvent::V_MTE3));
    SetFlag<HardEvent::V_MTE3>(eventVToMTE3);
    WaitFlag<HardEvent::V_MTE3>(eventVToMTE3);
    DataCopyPad(yGm, b, cp);
    for (uint32_t r = 0; r < rows; r++) {
        if (b.GetValue(r * padCols + cols) != -1.0f) {
            AscendC::printf("pad2d: row %u padding is %f, want -1\n", r, b.GetValue(r * padCols + cols));
        }
    }
    qo.FreeTensor(b);
}

#include "probe_host_tiling.h"

class KernelUneven {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const UnevenTiling &t)
    {
        uint32_t idx = GetBlockIdx();
        uint64_t off;
        if (idx < t.formerNum) { len = t.formerLength; off = (uint64_t)t.formerLength * idx; }
        else { len = t.tailLength; off = (uint64_t)t.formerLength * t.formerNum + (uint64_t)t.tailLength * (idx - t.formerNum); }
        tile = t.tileLength;
        xg.SetGlobalBuffer((__gm__ half *)x + off, len);
        yg.SetGlobalBuffer((__gm__ half *)y + off, len);
        zg.SetGlobalBuffer((__gm__ half *)z + off, len);
        pipe.InitBuffer(qx, 2, tile * sizeof(half));
        pipe.InitBuffer(qy, 2, tile * sizeof(half));
        pipe.InitBuffer(qz, 2, tile * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t done = 0; done < len; done += tile) {
            uint32_t n = len - done < tile ? len - done : tile;
            DataCopyParams cp{1, (uint16_t)(n * sizeof(half)), 0, 0};
            DataCopyPadParams pp{false, 0, 0, 0};
            LocalTensor<half> a = qx.AllocTensor<half>(), b = qy.AllocTensor<half>();
            DataCopyPad(a, xg[done], cp, pp);
            DataCopyPad(b, yg[done], cp, pp);
            qx.EnQue(a); qy.EnQue(b);
            a = qx.DeQue<half>(); b = qy.DeQue<half>();
            LocalTensor<half> c = qz.AllocTensor<half>();
            uint32_t aligned = (n * sizeof(half) + 31) / 32 * 32 / sizeof(half);
            Add(c, a, b, aligned);
            qz.EnQue(c); qx.FreeTensor(a); qy.FreeTensor(b);
            c = qz.DeQue<half>();
            DataCopyPad(zg[done], c, cp);
            qz.FreeTensor(c);
        }
    }
private:
    TPipe pipe; TQue<QuePosition::VECIN, 2> qx, qy; TQue<QuePosition::VECOUT, 2> qz;
    GlobalTensor<half> xg, yg, zg; uint32_t len, tile;
};
extern "C" __global__ __aicore__ void uneven_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, UnevenTiling tiling)
{
    KernelUneven op; op.Init(x, y, z, tiling); op.Process();
}

extern "C" __global__ __aicore__ void err_kernel(GM_ADDR x, GM_ADDR y, uint32_t mode, uint32_t n)
{
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half *)x + n * GetBlockIdx(), n);
    yGm.SetGlobalBuffer((__gm__ half *)y + n * GetBlockIdx(), n);
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 4096);
    LocalTensor<half> t = q.AllocTensor<half>();
    if (mode == 1) { /* a second AllocTensor from a one-buffer queue */
        LocalTensor<half> t2 = q.AllocTensor<half>();
        (void)t2;
    }
    if (mode == 2) { /* DataCopy of 20 bytes */
        DataCopy(t, xGm, 10);
    }
    if (mode == 3) { /* the last block reads past the end of x */
        DataCopy(t, xGm, n);
        DataCopy(yGm, t, n);
    }
    if (mode == 4) { /* DeQue twice after one EnQue */
        q.EnQue(t);
        LocalTensor<half> a = q.DeQue<half>();
        LocalTensor<half> b = q.DeQue<half>();
        (void)a;
        (void)b;
    }
    if (mode == 5) { /* more than the Unified Buffer */
        TQue<QuePosition::VECOUT, 1> q2;
        pipe.InitBuffer(q2, 1, 200 * 1024);
    }
    if (mode == 6) { /* calCount past the tensor */
        Add(t, t, t, 4096);
    }
    if (mode == 7) { /* a scalar write far outside y */
        yGm.SetValue(n + 100000, (half)1.0f);
    }
    q.FreeTensor(t);
}
