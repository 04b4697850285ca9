/* A kernel source in the style of the vendor AddKernelInvocation sample (non-Neo): the kernel
 * and, under #ifndef ASCENDC_CPU_DEBUG, the host function that launches it with the kernel-call
 * operator <<<blockDim, l2ctrl, stream>>>. Written for npu-emu's tests. */
#include "kernel_operator.h"
#include "invocation_shape.h"

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z)
    {
        const int64_t offset = BLOCK_LENGTH * AscendC::GetBlockIdx();
        xGm.SetGlobalBuffer((__gm__ half *)x + offset, BLOCK_LENGTH);
        yGm.SetGlobalBuffer((__gm__ half *)y + offset, BLOCK_LENGTH);
        zGm.SetGlobalBuffer((__gm__ half *)z + offset, BLOCK_LENGTH);
        pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(half));
        pipe.InitBuffer(outQueueZ, BUFFER_NUM, TILE_LENGTH * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        for (int32_t i = 0; i < TILE_NUM * BUFFER_NUM; i++) {
            AscendC::LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
            AscendC::LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
            AscendC::DataCopy(xLocal, xGm[i * TILE_LENGTH], TILE_LENGTH);
            AscendC::DataCopy(yLocal, yGm[i * TILE_LENGTH], TILE_LENGTH);
            inQueueX.EnQue(xLocal);
            inQueueY.EnQue(yLocal);
            xLocal = inQueueX.DeQue<half>();
            yLocal = inQueueY.DeQue<half>();
            AscendC::LocalTensor<half> zLocal = outQueueZ.AllocTensor<half>();
            AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);
            outQueueZ.EnQue<half>(zLocal);
            inQueueX.FreeTensor(xLocal);
            inQueueY.FreeTensor(yLocal);
            zLocal = outQueueZ.DeQue<half>();
            AscendC::DataCopy(zGm[i * TILE_LENGTH], zLocal, TILE_LENGTH);
            outQueueZ.FreeTensor(zLocal);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueX, inQueueY;
    AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueueZ;
    AscendC::GlobalTensor<half> xGm, yGm, zGm;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    KernelAdd op;
    op.Init(x, y, z);
    op.Process();
}

// z = x * scale, blockLength elements per block; the shape struct comes by value.
__global__ __aicore__ void muls_custom(GM_ADDR x, GM_ADDR z, MulsShape shape)
{
    const int64_t offset = (int64_t)shape.blockLength * AscendC::GetBlockIdx();
    AscendC::GlobalTensor<half> xGm, zGm;
    xGm.SetGlobalBuffer((__gm__ half *)x + offset, shape.blockLength);
    zGm.SetGlobalBuffer((__gm__ half *)z + offset, shape.blockLength);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, shape.blockLength * sizeof(half));
    AscendC::LocalTensor<half> t = buf.Get<half>();
    AscendC::DataCopy(t, xGm, shape.blockLength);
    AscendC::Muls(t, t, (half)shape.scale, shape.blockLength);
    AscendC::DataCopy(zGm, t, shape.blockLength);
}

// z = x + y with the element type a template parameter: launched with add_t<half><<<...>>>.
template <typename T>
__global__ __aicore__ void add_t(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t blockLength)
{
    const int64_t offset = (int64_t)blockLength * AscendC::GetBlockIdx();
    AscendC::GlobalTensor<T> xGm, yGm, zGm;
    xGm.SetGlobalBuffer((__gm__ T *)x + offset, blockLength);
    yGm.SetGlobalBuffer((__gm__ T *)y + offset, blockLength);
    zGm.SetGlobalBuffer((__gm__ T *)z + offset, blockLength);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bx, by;
    pipe.InitBuffer(bx, blockLength * sizeof(T));
    pipe.InitBuffer(by, blockLength * sizeof(T));
    AscendC::LocalTensor<T> tx = bx.Get<T>(), ty = by.Get<T>();
    AscendC::DataCopy(tx, xGm, blockLength);
    AscendC::DataCopy(ty, yGm, blockLength);
    AscendC::Add(tx, tx, ty, blockLength);
    AscendC::DataCopy(zGm, tx, blockLength);
}

#ifndef ASCENDC_CPU_DEBUG
// call of kernel function; a call in a comment is left alone: add_custom<<<1, nullptr, s>>>(a, b, c);
/* and in a block comment: not_a_kernel<<<1, nullptr, s>>>(a) */
void add_custom_do(uint32_t blockDim, void *l2ctrl, void *stream, uint8_t *x, uint8_t *y, uint8_t *z)
{
    add_custom<<<blockDim, l2ctrl, stream>>>(x, y, z);
}

// The same call spread over lines, with a config expression holding commas and '>'.
void add_custom_do_lines(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z)
{
    add_custom <<< (blockDim > 4 ? blockDim : std::max<uint32_t>(blockDim, 1)),
        nullptr, stream >>> (x,
                             y, z);
}

void muls_custom_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *z, uint32_t blockLength, float scale)
{
    MulsShape shape{blockLength, scale};
    muls_custom<<<blockDim, nullptr, stream>>>(x, z, shape);
}

void add_t_do(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z, uint32_t blockLength)
{
    add_t<half><<<blockDim, nullptr, stream>>>(x, y, z, blockLength);
}

// Text in a string is left alone.
const char *add_custom_usage()
{
    return "add_custom<<<blockDim, l2ctrl, stream>>>(x, y, z)";
}

// Where this line is, as the compiler sees it (the generated file keeps the source's lines).
int add_custom_line()
{
    return __LINE__;
}
#endif
