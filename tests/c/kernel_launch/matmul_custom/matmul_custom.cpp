// A MatmulCustom-style kernel (the Matmul high-level API as CANN's MatmulCustom / MatmulInvocation
// samples use it), written from the Ascend C reference: C = A x B + bias with A, B fp16 (ND),
// C and bias fp32; each block computes its singleCoreM x singleCoreN piece of C.
// mode 0: IterateAll into GM, with SetTail for the pieces at the edges;
// mode 1: Iterate + GetTensorC into a VECIN queue, then DataCopy of each base block to GM
//         (shapes must divide into base blocks).
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace matmul;

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

template <typename aT, typename bT, typename cT, typename biasT>
class MatmulKernel {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tilingGm)
    {
        // The tiling comes as raw words in global memory.
        auto src = (__gm__ uint32_t *)tilingGm;
        auto dst = (uint32_t *)&tiling;
        for (uint32_t i = 0; i < sizeof(TCubeTiling) / sizeof(uint32_t); i++) {
            dst[i] = src[i];
        }
        aGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ aT *>(a), tiling.M * tiling.Ka);
        bGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ bT *>(b), tiling.Kb * tiling.N);
        cGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ cT *>(c), tiling.M * tiling.N);
        biasGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ biasT *>(bias), tiling.N);
        uint32_t mBlocks = CeilDiv(tiling.M, tiling.singleCoreM);
        uint32_t mIdx = AscendC::GetBlockIdx() % mBlocks;
        uint32_t nIdx = AscendC::GetBlockIdx() / mBlocks;
        mOffset = mIdx * tiling.singleCoreM;
        nOffset = nIdx * tiling.singleCoreN;
        tailM = tiling.M - mOffset < (uint32_t)tiling.singleCoreM ? tiling.M - mOffset : tiling.singleCoreM;
        tailN = tiling.N - nOffset < (uint32_t)tiling.singleCoreN ? tiling.N - nOffset : tiling.singleCoreN;
        aGlobal = aGlobal[mOffset * tiling.Ka];
        bGlobal = bGlobal[nOffset];
        cGlobal = cGlobal[mOffset * tiling.N + nOffset];
        biasGlobal = biasGlobal[nOffset];
    }

    __aicore__ inline void ProcessAll()
    {
        matmulObj.SetTail(tailM, tailN);
        matmulObj.SetTensorA(aGlobal);
        matmulObj.SetTensorB(bGlobal);
        if (tiling.isBias) {
            matmulObj.SetBias(biasGlobal);
        }
        matmulObj.IterateAll(cGlobal);
        matmulObj.End();
    }

    __aicore__ inline void ProcessByBlock(AscendC::TPipe *pipe)
    {
        pipe->InitBuffer(outQueue, 1, tiling.baseM * tiling.baseN * sizeof(cT));
        matmulObj.SetTensorA(aGlobal);
        matmulObj.SetTensorB(bGlobal);
        if (tiling.isBias) {
            matmulObj.SetBias(biasGlobal);
        }
        uint32_t round = 0;
        const uint32_t roundM = tiling.singleCoreM / tiling.baseM;
        while (matmulObj.template Iterate<true>()) {
            AscendC::LocalTensor<cT> out = outQueue.AllocTensor<cT>();
            matmulObj.template GetTensorC<true>(out, false, true);
            outQueue.EnQue(out);
            out = outQueue.DeQue<cT>();
            // iterateOrder 0: base blocks walk M first
            uint32_t at = (round % roundM) * tiling.baseM * tiling.N + (round / roundM) * tiling.baseN;
            AscendC::DataCopyParams p;
            p.blockCount = (uint16_t)tiling.baseM;
            p.blockLen = (uint16_t)(tiling.baseN * sizeof(cT) / AscendC::DEFAULT_C0_SIZE);
            p.srcStride = 0;
            p.dstStride = (uint16_t)((tiling.N - tiling.baseN) * sizeof(cT) / AscendC::DEFAULT_C0_SIZE);
            AscendC::DataCopy(cGlobal[at], out, p);
            outQueue.FreeTensor(out);
            round++;
        }
        matmulObj.End();
    }

    Matmul<MatmulType<AscendC::TPosition::GM, CubeFormat::ND, aT>, MatmulType<AscendC::TPosition::GM, CubeFormat::ND, bT>,
           MatmulType<AscendC::TPosition::VECIN, CubeFormat::ND, cT>,
           MatmulType<AscendC::TPosition::GM, CubeFormat::ND, biasT>>
        matmulObj;
    TCubeTiling tiling;

private:
    AscendC::GlobalTensor<aT> aGlobal;
    AscendC::GlobalTensor<bT> bGlobal;
    AscendC::GlobalTensor<cT> cGlobal;
    AscendC::GlobalTensor<biasT> biasGlobal;
    AscendC::TQue<AscendC::QuePosition::VECOUT, 1> outQueue;
    uint32_t mOffset = 0, nOffset = 0, tailM = 0, tailN = 0;
};

extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                    GM_ADDR workspace, GM_ADDR tiling, uint32_t mode)
{
    MatmulKernel<half, half, float, float> op;
    AscendC::TPipe pipe;
    op.Init(a, b, bias, c, tiling);
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.matmulObj, &op.tiling);
    if (mode == 0) {
        op.ProcessAll();
    } else {
        op.ProcessByBlock(&pipe);
    }
}
