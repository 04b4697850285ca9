/* y = abs(x) for rows of `rowLength` half values whose byte size is not a multiple of 32:
 * DataCopyPad in (padding each row to 32 bytes) and out. Each block handles one row. */
#include "kernel_operator.h"

class KernelAbsPad {
public:
    __aicore__ inline KernelAbsPad() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t rowLength)
    {
        this->rowLength = rowLength;
        alignedLength = (rowLength * sizeof(half) + 31) / 32 * 32 / sizeof(half);
        xGm.SetGlobalBuffer((__gm__ half *)x + rowLength * AscendC::GetBlockIdx(), rowLength);
        yGm.SetGlobalBuffer((__gm__ half *)y + rowLength * AscendC::GetBlockIdx(), rowLength);
        pipe.InitBuffer(inQueue, 1, alignedLength * sizeof(half));
        pipe.InitBuffer(outQueue, 1, alignedLength * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
        AscendC::DataCopyExtParams copyParams{1, static_cast<uint32_t>(rowLength * sizeof(half)), 0, 0, 0};
        uint8_t rightPad = static_cast<uint8_t>(alignedLength - rowLength);
        AscendC::DataCopyPadExtParams<half> padParams{true, 0, rightPad, static_cast<half>(0)};
        AscendC::DataCopyPad(xLocal, xGm, copyParams, padParams);
        inQueue.EnQue(xLocal);

        xLocal = inQueue.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
        AscendC::Abs(yLocal, xLocal, alignedLength);
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xLocal);

        yLocal = outQueue.DeQue<half>();
        AscendC::DataCopyPad(yGm, yLocal, copyParams);
        outQueue.FreeTensor(yLocal);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQueue;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQueue;
    AscendC::GlobalTensor<half> xGm, yGm;
    uint32_t rowLength, alignedLength;
};

extern "C" __global__ __aicore__ void abs_pad_custom(GM_ADDR x, GM_ADDR y, uint32_t rowLength)
{
    KernelAbsPad op;
    op.Init(x, y, rowLength);
    op.Process();
}
