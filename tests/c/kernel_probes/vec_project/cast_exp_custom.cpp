/* y = half(exp(float(x)) + 1): Cast half -> float, Exp, Adds, Cast float -> half (CAST_RINT),
 * with a TBuf for the float intermediate and the length passed as a scalar. */
#include "kernel_operator.h"
using namespace AscendC;

constexpr uint32_t TILE = 256;

extern "C" __global__ __aicore__ void cast_exp_custom(GM_ADDR x, GM_ADDR y, uint32_t totalLength)
{
    uint32_t blockLength = totalLength / GetBlockNum();
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half *)x + blockLength * GetBlockIdx(), blockLength);
    yGm.SetGlobalBuffer((__gm__ half *)y + blockLength * GetBlockIdx(), blockLength);
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> inQ;
    TQue<QuePosition::VECOUT, 2> outQ;
    TBuf<QuePosition::VECCALC> f32Buf;
    pipe.InitBuffer(inQ, 2, TILE * sizeof(half));
    pipe.InitBuffer(outQ, 2, TILE * sizeof(half));
    pipe.InitBuffer(f32Buf, TILE * sizeof(float));
    for (uint32_t off = 0; off < blockLength; off += TILE) {
        LocalTensor<half> in = inQ.AllocTensor<half>();
        DataCopy(in, xGm[off], TILE);
        inQ.EnQue(in);
        in = inQ.DeQue<half>();
        LocalTensor<float> f = f32Buf.Get<float>();
        Cast(f, in, RoundMode::CAST_NONE, TILE);
        Exp(f, f, TILE);
        Adds(f, f, 1.0f, TILE);
        LocalTensor<half> out = outQ.AllocTensor<half>();
        Cast(out, f, RoundMode::CAST_RINT, TILE);
        inQ.FreeTensor(in);
        outQ.EnQue(out);
        out = outQ.DeQue<half>();
        DataCopy(yGm[off], out, TILE);
        outQ.FreeTensor(out);
    }
}
