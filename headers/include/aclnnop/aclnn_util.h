/*
 * npu-emu: CANN's `aclnnop/aclnn_util.h`: the export attribute of the aclnn operator
 * declarations. Written by hand.
 */
#ifndef OPBASE_COMMON_ACLNN_UTIL_H
#define OPBASE_COMMON_ACLNN_UTIL_H

#define ACLNN_API __attribute__((visibility("default")))

#endif /* OPBASE_COMMON_ACLNN_UTIL_H */
