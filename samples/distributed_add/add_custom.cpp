/*
 * AddCustom: z = x + y over TOTAL_LENGTH fp16 elements, an Ascend C vector kernel written the way
 * the vendor's kernel-launch samples are. Each of the USE_CORE_NUM blocks (AI cores) takes one
 * contiguous BLOCK_LENGTH slice and streams it through the unified buffer in tiles, with two
 * buffers per queue so that copy-in, compute and copy-out of consecutive tiles overlap:
 *
 *   GM x, y --DataCopy--> VECIN queues --Add--> VECOUT queue --DataCopy--> GM z
 *
 * On an NPU this file is compiled by the Ascend C compiler (ascendc_library in CMake); with
 * npu-emu the Makefile turns it into a CPU library (npu-emu ascendc-stub, then g++), and the host
 * launches it the same way: ACLRT_LAUNCH_KERNEL(add_custom)(blockDim, stream, x, y, z).
 */
#include "kernel_operator.h"

#include "add_custom_shape.h"

constexpr int32_t BLOCK_LENGTH = TOTAL_LENGTH / USE_CORE_NUM; // elements per block
constexpr int32_t BUFFER_NUM = 2;                              // double buffering
constexpr int32_t TILE_NUM = 8;                                // tiles per buffer
constexpr int32_t TILE_LENGTH = BLOCK_LENGTH / TILE_NUM / BUFFER_NUM;

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z)
    {
        const int32_t start = BLOCK_LENGTH * AscendC::GetBlockIdx();
        xGm.SetGlobalBuffer((__gm__ half *)x + start, BLOCK_LENGTH);
        yGm.SetGlobalBuffer((__gm__ half *)y + start, BLOCK_LENGTH);
        zGm.SetGlobalBuffer((__gm__ half *)z + start, BLOCK_LENGTH);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE_LENGTH * sizeof(half));
    }

    __aicore__ inline void Process()
    {
        for (int32_t tile = 0; tile < TILE_NUM * BUFFER_NUM; tile++) {
            CopyIn(tile);
            Compute();
            CopyOut(tile);
        }
    }

private:
    __aicore__ inline void CopyIn(int32_t tile)
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        AscendC::DataCopy(xLocal, xGm[tile * TILE_LENGTH], TILE_LENGTH);
        AscendC::DataCopy(yLocal, yGm[tile * TILE_LENGTH], TILE_LENGTH);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
    }

    __aicore__ inline void Compute()
    {
        AscendC::LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        AscendC::LocalTensor<half> yLocal = inQueueY.DeQue<half>();
        AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
        AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);
        outQueueZ.EnQue<half>(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
    }

    __aicore__ inline void CopyOut(int32_t tile)
    {
        AscendC::LocalTensor<half> zLocal = outQueueZ.DeQue<half>();
        AscendC::DataCopy(zGm[tile * TILE_LENGTH], zLocal, TILE_LENGTH);
        outQueueZ.FreeTensor(zLocal);
    }

    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueX;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueY;
    AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<half> yGm;
    AscendC::GlobalTensor<half> zGm;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    KernelAdd op;
    op.Init(x, y, z);
    op.Process();
}
