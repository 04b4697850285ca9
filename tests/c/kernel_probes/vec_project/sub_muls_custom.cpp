/* z = |x - y| * scale over half data, with a TBuf<VECCALC> for the intermediate and the tiling
 * struct passed by value. */
#include "kernel_operator.h"
#include "probe_tiling.h"

using namespace AscendC;

class KernelSubMuls {
public:
    __aicore__ inline KernelSubMuls() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, SubMulsTiling tiling)
    {
        blockLength = tiling.blockLength;
        tileLength = tiling.tileLength;
        scale = static_cast<half>(tiling.scale);
        uint64_t off = (uint64_t)blockLength * GetBlockIdx();
        xGm.SetGlobalBuffer((__gm__ half *)x + off, blockLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + off, blockLength);
        zGm.SetGlobalBuffer((__gm__ half *)z + off, blockLength);
        pipe.InitBuffer(inQueueX, 1, tileLength * sizeof(half));
        pipe.InitBuffer(inQueueY, 1, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueZ, 1, tileLength * sizeof(half));
        pipe.InitBuffer(tmpBuf, tileLength * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < blockLength / tileLength; i++) {
            LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
            LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
            DataCopy(xLocal, xGm[i * tileLength], tileLength);
            DataCopy(yLocal, yGm[i * tileLength], tileLength);
            inQueueX.EnQue(xLocal);
            inQueueY.EnQue(yLocal);

            xLocal = inQueueX.DeQue<half>();
            yLocal = inQueueY.DeQue<half>();
            LocalTensor<half> tmp = tmpBuf.Get<half>();
            LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
            Sub(tmp, xLocal, yLocal, tileLength);
            Abs(tmp, tmp, tileLength);
            Muls(zLocal, tmp, scale, tileLength);
            outQueueZ.EnQue<half>(zLocal);
            inQueueX.FreeTensor(xLocal);
            inQueueY.FreeTensor(yLocal);

            zLocal = outQueueZ.DeQue<half>();
            DataCopy(zGm[i * tileLength], zLocal, tileLength);
            outQueueZ.FreeTensor(zLocal);
        }
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, 1> outQueueZ;
    TBuf<QuePosition::VECCALC> tmpBuf;
    GlobalTensor<half> xGm, yGm, zGm;
    uint32_t blockLength, tileLength;
    half scale;
};

extern "C" __global__ __aicore__ void sub_muls_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, SubMulsTiling tiling)
{
    KernelSubMuls op;
    op.Init(x, y, z, tiling);
    op.Process();
}
