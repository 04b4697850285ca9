/* z = x + y in fp16 for any length and blockDim: the tiling (by value) gives each block its
 * former/tail length, whole tiles move with DataCopy, the last partial tile with DataCopyPad.
 * Queues of depth 1 with BUFFER_NUM = 2 buffers each (double buffering). Written for npu-emu's
 * tests; the kernel signature is stable (helper "launch" reuses this file). */
#include "add_custom_tiling.h"
#include "kernel_operator.h"

constexpr int32_t BUFFER_NUM = 2;

class KernelAddTiling {
public:
    __aicore__ inline KernelAddTiling() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddCustomTilingData &t)
    {
        const uint32_t idx = static_cast<uint32_t>(AscendC::GetBlockIdx());
        uint64_t offset;
        if (idx < t.formerNum) {
            length = t.formerLength;
            offset = static_cast<uint64_t>(idx) * t.formerLength;
        } else {
            length = t.tailLength;
            offset = static_cast<uint64_t>(t.formerNum) * t.formerLength +
                     static_cast<uint64_t>(idx - t.formerNum) * t.tailLength;
        }
        tileLength = t.tileLength;
        xGm.SetGlobalBuffer((__gm__ half *)x + offset, length);
        yGm.SetGlobalBuffer((__gm__ half *)y + offset, length);
        zGm.SetGlobalBuffer((__gm__ half *)z + offset, length);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, tileLength * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, tileLength * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t done = 0; done < length; done += tileLength) {
            const uint32_t n = length - done < tileLength ? length - done : tileLength;
            CopyIn(done, n);
            Compute(n);
            CopyOut(done, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t at, uint32_t n)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        if (n == tileLength) {
            AscendC::DataCopy(xLocal, xGm[at], n);
            AscendC::DataCopy(yLocal, yGm[at], n);
        } else {
            AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(n * sizeof(half)), 0, 0, 0};
            AscendC::DataCopyPadExtParams<half> pad{false, 0, 0, 0};
            AscendC::DataCopyPad(xLocal, xGm[at], copy, pad);
            AscendC::DataCopyPad(yLocal, yGm[at], copy, pad);
        }
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        AscendC::Add(zLocal, xLocal, yLocal, static_cast<int32_t>(n));
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t at, uint32_t n)
    {
        AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        if (n == tileLength) {
            AscendC::DataCopy(zGm[at], zLocal, n);
        } else {
            AscendC::DataCopyExtParams copy{1, static_cast<uint32_t>(n * sizeof(half)), 0, 0, 0};
            AscendC::DataCopyPad(zGm[at], zLocal, copy);
        }
        outQueueZ.FreeTensor(zLocal);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueueX, inQueueY;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueueZ;
    AscendC::GlobalTensor<half> xGm, yGm, zGm;
    uint32_t length = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void add_custom_tiling(GM_ADDR x, GM_ADDR y, GM_ADDR z, AddCustomTilingData tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    KernelAddTiling op;
    op.Init(x, y, z, tiling);
    op.Process();
}
