/*
 * npu-emu: CANN's `aclnnop/acl_stft.h` (library libopapi.so), written by hand: the one
 * operator header whose functions are not named aclnn... (aclStft, the short-time Fourier
 * transform torch.stft reaches). Two phases, as every aclnn operator.
 */
#ifndef OP_API_INC_LEVEL2_ACL_STFT_H_
#define OP_API_INC_LEVEL2_ACL_STFT_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclStftGetWorkspaceSize(const aclTensor* self, const aclTensor* windowOptional, aclTensor* out, int64_t nFft,
                                              int64_t hopLength, int64_t winLength, bool normalized, bool onesided,
                                              bool returnComplex, uint64_t* workspaceSize, aclOpExecutor** executor);

ACLNN_API aclnnStatus aclStft(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // OP_API_INC_LEVEL2_ACL_STFT_H_
