// Two kernels for a kernel binary (ascendc_fatbin_library), written from the Ascend C and
// runtime documentation: scale_add in the simple style (raw __gm__ pointers, values by
// argument, block_idx / block_num), add_tiled with its tiling behind two placeholder
// pointers and the vector API.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void scale_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, float alpha,
                                                uint32_t n)
{
    __gm__ float *xs = (__gm__ float *)x;
    __gm__ float *ys = (__gm__ float *)y;
    __gm__ float *zs = (__gm__ float *)z;
    uint32_t per = (n + block_num - 1) / block_num;
    uint32_t begin = per * block_idx;
    uint32_t end = begin + per < n ? begin + per : n;
    for (uint32_t i = begin; i < end; i++) {
        zs[i] = alpha * xs[i] + ys[i];
    }
    dcci(zs + begin, cache_line_t::ENTIRE_DATA_CACHE, dcci_dst_t::CACHELINE_OUT);
}

constexpr int32_t BUFS = 2;

class TiledAdd {
public:
    __aicore__ inline TiledAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, int32_t total, int32_t tiles)
    {
        blockLen = total / AscendC::GetBlockNum();
        tileLen = blockLen / tiles / BUFS;
        loops = tiles * BUFS;
        int64_t off = (int64_t)blockLen * AscendC::GetBlockIdx();
        xg.SetGlobalBuffer((__gm__ half *)x + off, blockLen);
        yg.SetGlobalBuffer((__gm__ half *)y + off, blockLen);
        zg.SetGlobalBuffer((__gm__ half *)z + off, blockLen);
        pipe.InitBuffer(qx, BUFS, tileLen * sizeof(half));
        pipe.InitBuffer(qy, BUFS, tileLen * sizeof(half));
        pipe.InitBuffer(qz, BUFS, tileLen * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        for (int32_t i = 0; i < loops; i++) {
            AscendC::LocalTensor<half> a = qx.AllocTensor<half>();
            AscendC::LocalTensor<half> b = qy.AllocTensor<half>();
            AscendC::DataCopy(a, xg[i * tileLen], tileLen);
            AscendC::DataCopy(b, yg[i * tileLen], tileLen);
            qx.EnQue(a);
            qy.EnQue(b);
            a = qx.DeQue<half>();
            b = qy.DeQue<half>();
            AscendC::LocalTensor<half> c = qz.AllocTensor<half>();
            AscendC::Add(c, a, b, tileLen);
            qz.EnQue<half>(c);
            qx.FreeTensor(a);
            qy.FreeTensor(b);
            c = qz.DeQue<half>();
            AscendC::DataCopy(zg[i * tileLen], c, tileLen);
            qz.FreeTensor(c);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, BUFS> qx, qy;
    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFS> qz;
    AscendC::GlobalTensor<half> xg, yg, zg;
    int32_t blockLen, tileLen, loops;
};

extern "C" __global__ __aicore__ void add_tiled(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                __gm__ int32_t *total, __gm__ int32_t *tiles)
{
    TiledAdd op;
    op.Init(x, y, z, *total, *tiles);
    op.Process();
}
