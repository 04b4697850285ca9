/*
 * custom_linear: y = x · wᵀ for x [m, k] and w [n, k], float32, an Ascend C kernel. Each block
 * (AI core) takes a contiguous range of rows of x: it copies the row into the unified buffer,
 * then for every output column copies that row of w, multiplies the two element-wise (Mul) and
 * sums the products, and writes the finished row of y back to global memory.
 *
 * k must be a multiple of 8 (DataCopy moves whole 32-byte blocks), n a multiple of 8.
 */
#include "kernel_operator.h"

constexpr uint32_t MAX_K = 1024;
constexpr uint32_t MAX_N = 1024;

class KernelCustomLinear {
public:
    __aicore__ inline KernelCustomLinear() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t m, uint32_t n, uint32_t k)
    {
        m_ = m;
        n_ = n;
        k_ = k;
        const uint32_t blocks = AscendC::GetBlockNum();
        const uint32_t per = (m + blocks - 1) / blocks;
        rowBegin_ = per * AscendC::GetBlockIdx();
        rowEnd_ = rowBegin_ + per < m ? rowBegin_ + per : m;
        xGm.SetGlobalBuffer((__gm__ float *)x, m * k);
        wGm.SetGlobalBuffer((__gm__ float *)w, n * k);
        yGm.SetGlobalBuffer((__gm__ float *)y, m * n);
        pipe.InitBuffer(xBuf, MAX_K * sizeof(float));
        pipe.InitBuffer(wBuf, MAX_K * sizeof(float));
        pipe.InitBuffer(prodBuf, MAX_K * sizeof(float));
        pipe.InitBuffer(yBuf, MAX_N * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> xRow = xBuf.Get<float>();
        AscendC::LocalTensor<float> wRow = wBuf.Get<float>();
        AscendC::LocalTensor<float> prod = prodBuf.Get<float>();
        AscendC::LocalTensor<float> yRow = yBuf.Get<float>();
        for (uint32_t i = rowBegin_; i < rowEnd_; i++) {
            AscendC::DataCopy(xRow, xGm[i * k_], k_);
            for (uint32_t j = 0; j < n_; j++) {
                AscendC::DataCopy(wRow, wGm[j * k_], k_);
                AscendC::Mul(prod, xRow, wRow, k_);
                float acc = 0.0f;
                for (uint32_t t = 0; t < k_; t++) {
                    acc += prod.GetValue(t);
                }
                yRow.SetValue(j, acc);
            }
            AscendC::DataCopy(yGm[i * n_], yRow, n_);
        }
    }

private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xBuf, wBuf, prodBuf, yBuf;
    AscendC::GlobalTensor<float> xGm, wGm, yGm;
    uint32_t m_ = 0, n_ = 0, k_ = 0, rowBegin_ = 0, rowEnd_ = 0;
};

extern "C" __global__ __aicore__ void custom_linear(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t m, uint32_t n,
                                                    uint32_t k)
{
    KernelCustomLinear op;
    op.Init(x, w, y, m, n, k);
    op.Process();
}
