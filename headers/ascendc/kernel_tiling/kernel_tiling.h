/* npu-emu: the tiling structures of the Ascend C high-level APIs, as kernel code reads them
 * (`#include "kernel_tiling/kernel_tiling.h"`): TCubeTiling for Matmul, SoftMaxTiling for SoftMax,
 * LayerNormTiling for LayerNorm.
 *
 * TCubeTiling is a plain struct of int32_t fields, in the order npu-emu's host tiling
 * (tiling/tiling_api.h, optiling::TCubeTiling::SaveToBuffer) writes them, so a kernel may copy it
 * from global memory field by field or with GET_TILING_DATA. The field list is
 * NPUEMU_TCUBE_TILING_FIELDS, shared with the host class. */
#ifndef NPUEMU_KERNEL_TILING_KERNEL_TILING_H
#define NPUEMU_KERNEL_TILING_KERNEL_TILING_H

#include <cstdint>

/* X(name) for every field of TCubeTiling, in memory order. */
#define NPUEMU_TCUBE_TILING_FIELDS(X)                                                               \
    X(usedCoreNum) X(M) X(N) X(Ka) X(Kb) X(singleCoreM) X(singleCoreN) X(singleCoreK) X(baseM)      \
    X(baseN) X(baseK) X(depthA1) X(depthB1) X(stepM) X(stepN) X(isBias) X(transLength)              \
    X(iterateOrder) X(shareMode) X(shareL1Size) X(shareL0CSize) X(shareUbSize) X(batchM) X(batchN)  \
    X(singleBatchM) X(singleBatchN) X(stepKa) X(stepKb) X(depthAL1CacheUB) X(depthBL1CacheUB)       \
    X(dbL0A) X(dbL0B) X(dbL0C) X(ALayoutInfoB) X(ALayoutInfoS) X(ALayoutInfoN) X(ALayoutInfoG)       \
    X(ALayoutInfoD) X(BLayoutInfoB) X(BLayoutInfoS) X(BLayoutInfoN) X(BLayoutInfoG) X(BLayoutInfoD)  \
    X(CLayoutInfoB) X(CLayoutInfoS1) X(CLayoutInfoN) X(CLayoutInfoG) X(CLayoutInfoS2) X(BatchNum)    \
    X(mxTypePara)

/* X(name) for every field of SoftMaxTiling (uint32_t), in memory order (the reference's list). */
#define NPUEMU_SOFTMAX_TILING_FIELDS(X)                                                             \
    X(srcM) X(srcK) X(srcSize) X(outMaxM) X(outMaxK) X(outMaxSize) X(splitM) X(splitK) X(splitSize) \
    X(reduceM) X(reduceK) X(reduceSize) X(rangeM) X(tailM) X(tailSplitSize) X(tailReduceSize)

namespace AscendC {
namespace tiling {

#define NPUEMU_SOFTMAX_MEMBER(name) uint32_t name = 0;
/* SoftMax / SimpleSoftMax: the kernel reads srcM (rows) and srcK (row length) when the call has
 * no SoftMaxShapeInfo; the other fields are npu-emu's split of the rows (not needed on the CPU). */
struct SoftMaxTiling {
    NPUEMU_SOFTMAX_TILING_FIELDS(NPUEMU_SOFTMAX_MEMBER)
};
#undef NPUEMU_SOFTMAX_MEMBER

#define NPUEMU_TCUBE_MEMBER(name) int32_t name = 0;
struct TCubeTiling {
    NPUEMU_TCUBE_TILING_FIELDS(NPUEMU_TCUBE_MEMBER)
};
#undef NPUEMU_TCUBE_MEMBER

/* LayerNorm: the kernel reads bLength, sLength, hLength (the row length in the tensor) and
 * originalHLength (the valid elements of a row); the rest is npu-emu's split (not needed on the
 * CPU). */
#define NPUEMU_LAYERNORM_TILING_FIELDS(X)                                                           \
    X(bLength) X(sLength) X(hLength) X(originalHLength) X(inputXSize) X(meanVarSize) X(numberOfTmpBuf) \
    X(meanTmpTensorPos) X(meanTmpTensorSize) X(varianceTmpTensorPos) X(varianceTmpTensorSize)          \
    X(tmpBufSize) X(oneTmpSize) X(firstTmpStartPos) X(secondTmpStartPos) X(thirdTmpStartPos)            \
    X(loopRound) X(inputRoundSize) X(inputTailSize) X(inputTailPos) X(meanVarRoundSize)                 \
    X(meanVarTailSize) X(meanVarTailPos) X(bshCurLength) X(bsCurLength)
#define NPUEMU_LAYERNORM_MEMBER(name) uint32_t name = 0;
struct LayerNormTiling {
    NPUEMU_LAYERNORM_TILING_FIELDS(NPUEMU_LAYERNORM_MEMBER)
    float lastDimValueBack = 0.0f;
};
#undef NPUEMU_LAYERNORM_MEMBER

} // namespace tiling
} // namespace AscendC

/* Kernel code names it without a namespace (`TCubeTiling tiling;`). */
using TCubeTiling = AscendC::tiling::TCubeTiling;
using SoftMaxTiling = AscendC::tiling::SoftMaxTiling;
using LayerNormTiling = AscendC::tiling::LayerNormTiling;

#endif /* NPUEMU_KERNEL_TILING_KERNEL_TILING_H */
