/*
 * npu-emu: aclnnNpuFormatCast (CANN `aclnnop/aclnn_npu_format_cast.h`, library
 * libopapi.so; abi.md §5.5). Written by hand. C++ only, as CANN's (through aclnn_base.h).
 *
 * First aclnnNpuFormatCastCalculateSizeAndFormat gives the dstTensor storage shape (an
 * array allocated with new[]: the caller frees it with delete[]) and its actual format;
 * then the two-phase call: aclnnNpuFormatCastGetWorkspaceSize (workspace size and a
 * single-use executor), aclnnNpuFormatCast (enqueues the conversion on the stream).
 */
#ifndef OP_API_INC_NPU_FORMAT_CAST_H_
#define OP_API_INC_NPU_FORMAT_CAST_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnNpuFormatCastGetWorkspaceSize(const aclTensor *srcTensor, aclTensor *dstTensor,
                                                         uint64_t *workspaceSize, aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnNpuFormatCast(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                         aclrtStream stream);

ACLNN_API aclnnStatus aclnnNpuFormatCastCalculateSizeAndFormat(const aclTensor *srcTensor, const int dstFormat,
                                                               int additionalDtype, int64_t **dstShape,
                                                               uint64_t *dstShapeSize, int *actualFormat);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_NPU_FORMAT_CAST_H_ */
