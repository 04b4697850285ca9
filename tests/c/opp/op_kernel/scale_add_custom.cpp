// ScaleAddCustom kernel: z = alpha * x (+ bias) + shift; the tiling key picks the type and the bias.
#include "kernel_operator.h"
using namespace AscendC;

template <typename T, bool HAS_BIAS>
class KernelScaleAdd {
public:
    __aicore__ inline KernelScaleAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR bias, GM_ADDR z, uint32_t blockLength, uint32_t tileLength,
                                float alpha, float shift)
    {
        this->shift = static_cast<T>(shift);
        this->blockLength = blockLength;
        this->tileLength = tileLength;
        this->alpha = static_cast<T>(alpha);
        xGm.SetGlobalBuffer((__gm__ T *)x + blockLength * GetBlockIdx(), blockLength);
        zGm.SetGlobalBuffer((__gm__ T *)z + blockLength * GetBlockIdx(), blockLength);
        if (HAS_BIAS) {
            bGm.SetGlobalBuffer((__gm__ T *)bias + blockLength * GetBlockIdx(), blockLength);
        }
        pipe.InitBuffer(inX, 1, tileLength * sizeof(T));
        pipe.InitBuffer(inB, 1, tileLength * sizeof(T));
        pipe.InitBuffer(outZ, 1, tileLength * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t off = 0; off < blockLength; off += tileLength) {
            LocalTensor<T> x = inX.AllocTensor<T>();
            DataCopy(x, xGm[off], tileLength);
            inX.EnQue(x);
            if (HAS_BIAS) {
                LocalTensor<T> b = inB.AllocTensor<T>();
                DataCopy(b, bGm[off], tileLength);
                inB.EnQue(b);
            }
            x = inX.DeQue<T>();
            LocalTensor<T> z = outZ.AllocTensor<T>();
            Muls(z, x, alpha, tileLength);
            if (HAS_BIAS) {
                LocalTensor<T> b = inB.DeQue<T>();
                Add(z, z, b, tileLength);
                inB.FreeTensor(b);
            }
            Adds(z, z, shift, tileLength);
            inX.FreeTensor(x);
            outZ.EnQue(z);
            z = outZ.DeQue<T>();
            DataCopy(zGm[off], z, tileLength);
            outZ.FreeTensor(z);
        }
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inX, inB;
    TQue<QuePosition::VECOUT, 1> outZ;
    GlobalTensor<T> xGm, bGm, zGm;
    uint32_t blockLength, tileLength;
    T alpha;
    T shift;
};

extern "C" __global__ __aicore__ void scale_add_custom(GM_ADDR x, GM_ADDR bias, GM_ADDR z, GM_ADDR workspace,
                                                       GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    if (TILING_KEY_IS(1)) {
        KernelScaleAdd<float, true> op;
        op.Init(x, bias, z, t.blockLength, t.tileLength, t.alpha, t.shift);
        op.Process();
    } else if (TILING_KEY_IS(2)) {
        KernelScaleAdd<float, false> op;
        op.Init(x, bias, z, t.blockLength, t.tileLength, t.alpha, t.shift);
        op.Process();
    } else if (TILING_KEY_IS(11)) {
        KernelScaleAdd<half, true> op;
        op.Init(x, bias, z, t.blockLength, t.tileLength, t.alpha, t.shift);
        op.Process();
    } else if (TILING_KEY_IS(12)) {
        KernelScaleAdd<half, false> op;
        op.Init(x, bias, z, t.blockLength, t.tileLength, t.alpha, t.shift);
        op.Process();
    }
}
