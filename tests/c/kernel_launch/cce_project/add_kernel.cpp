// An Ascend C kernel compiled as CCE (ccec -xcce), with its launch wrapper.
#include "kernel_operator.h"

constexpr int32_t TILE = 256;

class AddKernel {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perBlock)
    {
        n = perBlock;
        xg.SetGlobalBuffer((__gm__ int32_t *)x + perBlock * AscendC::GetBlockIdx(), perBlock);
        yg.SetGlobalBuffer((__gm__ int32_t *)y + perBlock * AscendC::GetBlockIdx(), perBlock);
        zg.SetGlobalBuffer((__gm__ int32_t *)z + perBlock * AscendC::GetBlockIdx(), perBlock);
        pipe.InitBuffer(buf, 3 * TILE * sizeof(int32_t));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<int32_t> all = buf.Get<int32_t>();
        AscendC::LocalTensor<int32_t> a = all, b = all[TILE], c = all[2 * TILE];
        for (uint32_t off = 0; off < n; off += TILE) {
            AscendC::DataCopy(a, xg[off], TILE);
            AscendC::DataCopy(b, yg[off], TILE);
            AscendC::PipeBarrier<PIPE_ALL>();
            AscendC::Add(c, a, b, TILE);
            AscendC::PipeBarrier<PIPE_ALL>();
            AscendC::DataCopy(zg[off], c, TILE);
            AscendC::PipeBarrier<PIPE_ALL>();
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    AscendC::GlobalTensor<int32_t> xg, yg, zg;
    uint32_t n;
};

extern "C" __global__ __aicore__ void add_i32(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t perBlock)
{
#if !defined(__CCE_AICORE__) || __CCE_AICORE__ != 220 || !defined(__DAV_C220_VEC__)
#error "ccec --cce-aicore-arch=dav-c220-vec: expected the C220 vector-core macros"
#endif
    AddKernel k;
    k.Init(x, y, z, perBlock);
    k.Process();
}

void add_i32_do(uint32_t blockDim, void *l2ctrl, void *stream, uint8_t *x, uint8_t *y, uint8_t *z,
                uint32_t perBlock)
{
    add_i32<<<blockDim, l2ctrl, stream>>>(x, y, z, perBlock);
}
