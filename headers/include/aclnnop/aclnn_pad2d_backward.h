/*
 * npu-emu: `aclnnop/aclnn_pad2d_backward.h` (library libopapi.so). Written by hand.
 * Newer CANN (the ops-math sources the current operator reference documents) declares
 * aclnnReflectionPad2dBackward and aclnnReplicationPad2dBackward together in this header;
 * CANN 8.1 has one header for each. This one includes both, so programs written either way
 * build and nothing is declared twice.
 */
#ifndef OP_API_INC_PAD2D_BACKWARD_H_
#define OP_API_INC_PAD2D_BACKWARD_H_

#include "aclnn_reflection_pad2d_backward.h"
#include "aclnn_replication_pad2d_backward.h"

#endif /* OP_API_INC_PAD2D_BACKWARD_H_ */
