/* LeakyRelu over float data, double-buffered (BUFFER_NUM = 2), with its tiling read from global
 * memory through a GlobalTensor<uint32_t> (the CopyTiling pattern of kernels taking
 * GM_ADDR tiling). Written in the style of the Ascend C introduction samples. Block 0 also
 * stores __NPU_ARCH__ in the workspace (the host prints it), and an ASCEND_IS_AIC branch
 * returns early (vector blocks never take it). */
#include "kernel_operator.h"
#include "probe_tiling.h"

constexpr int32_t BUFFER_NUM = 2;

__aicore__ inline void CopyTiling(LeakyReluTiling *tiling, GM_ADDR tilingGm)
{
    uint32_t *dst = reinterpret_cast<uint32_t *>(tiling);
    AscendC::GlobalTensor<uint32_t> src;
    src.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t *>(tilingGm), sizeof(LeakyReluTiling) / sizeof(uint32_t));
    for (uint32_t i = 0; i < sizeof(LeakyReluTiling) / sizeof(uint32_t); i++) {
        dst[i] = src.GetValue(i);
    }
}

class KernelLeakyRelu {
public:
    __aicore__ inline KernelLeakyRelu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LeakyReluTiling &t)
    {
        blockLength = t.totalLength / AscendC::GetBlockNum();
        tileNum = t.tileNum;
        alpha = t.alpha;
        tileLength = blockLength / tileNum / BUFFER_NUM;
        xGm.SetGlobalBuffer((__gm__ float *)x + blockLength * AscendC::GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ float *)y + blockLength * AscendC::GetBlockIdx(), blockLength);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(float));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileLength * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        int32_t loopCount = tileNum * BUFFER_NUM;
        for (int32_t i = 0; i < loopCount; i++) {
            CopyIn(i);
            Compute(i);
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t progress)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        AscendC::DataCopy(xLocal, xGm[progress * tileLength], tileLength);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute(int32_t progress)
    {
        AscendC::LocalTensor<float> xLocal = inQueueX.DeQue<float>();
        AscendC::LocalTensor<float> yLocal = outQueueY.AllocTensor<float>();
        AscendC::LeakyRelu(yLocal, xLocal, alpha, tileLength);
        outQueueY.EnQue<float>(yLocal);
        inQueueX.FreeTensor(xLocal);
    }
    __aicore__ inline void CopyOut(int32_t progress)
    {
        AscendC::LocalTensor<float> yLocal = outQueueY.DeQue<float>();
        AscendC::DataCopy(yGm[progress * tileLength], yLocal, tileLength);
        outQueueY.FreeTensor(yLocal);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> yGm;
    uint32_t blockLength;
    uint32_t tileNum;
    uint32_t tileLength;
    float alpha;
};

extern "C" __global__ __aicore__ void leakyrelu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    LeakyReluTiling tilingData;
    CopyTiling(&tilingData, tiling);
    if ASCEND_IS_AIC {
        return;
    }
    KernelLeakyRelu op;
    op.Init(x, y, tilingData);
    op.Process();
    if (AscendC::GetBlockIdx() == 0) {
        /* The device-code architecture the kernel was compiled for, for the host to print. */
        AscendC::GlobalTensor<uint32_t> ws;
        ws.SetGlobalBuffer((__gm__ uint32_t *)workspace, 8);
        ws.SetValue(0, __NPU_ARCH__);
    }
}
