/*
 * npu-emu: CANN's `aclnnop/aclnn_nsa_select_attention_infer.h`, the name newer CANN gives the
 * header of aclnnNsaSelectedAttentionInfer (ops-transformer renamed the operator's directory
 * and its example includes this name). Written by hand: it includes the 8.x header, so both
 * spellings build and nothing is declared twice.
 */
#ifndef OP_API_INC_NSA_SELECT_ATTENTION_INFER_H_
#define OP_API_INC_NSA_SELECT_ATTENTION_INFER_H_

#include "aclnn_nsa_selected_attention_infer.h"

#endif /* OP_API_INC_NSA_SELECT_ATTENTION_INFER_H_ */
