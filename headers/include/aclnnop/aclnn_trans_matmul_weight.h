/*
 * npu-emu: aclnnTransMatmulWeight and the matmul weight sizes (CANN
 * `aclnnop/aclnn_trans_matmul_weight.h`, library libopapi.so; abi.md §5.5). Written by hand.
 * C++ only, as CANN's (through aclnn_base.h).
 *
 * aclnnCalculateMatmulWeightSize[V2] give the number of elements a weight of that shape
 * occupies in its private layout (allocate that many elements); the two-phase
 * aclnnTransMatmulWeight converts an ND weight tensor in place into that layout.
 */
#ifndef OP_API_INC_TRANS_MATMUL_WEIGHT_H_
#define OP_API_INC_TRANS_MATMUL_WEIGHT_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnCalculateMatmulWeightSizeV2(const aclIntArray *tensorShape, aclDataType dataType,
                                                       uint64_t *weightTensorSize);

ACLNN_API aclnnStatus aclnnCalculateMatmulWeightSize(const aclIntArray *tensorShape, uint64_t *weightTensorSize);

ACLNN_API aclnnStatus aclnnTransMatmulWeightGetWorkspaceSize(aclTensor *mmWeightRef, uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnTransMatmulWeight(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                             aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_TRANS_MATMUL_WEIGHT_H_ */
