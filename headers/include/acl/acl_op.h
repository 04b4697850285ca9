/*
 * npu-emu: single-operator execution (CANN `acl/acl_op.h` of the GE package, abi.md §1.7).
 * Written for npu-emu from the ABI facts. Generated regions come from the abi/ TSV files.
 */
#ifndef INC_EXTERNAL_ACL_ACL_OP_H_
#define INC_EXTERNAL_ACL_ACL_OP_H_

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclopHandle aclopHandle;
typedef struct aclopAttr aclopAttr;

/* BEGIN GENERATED: enums (abi/tools/gen_headers.py) */
typedef enum aclopEngineType {
    ACL_ENGINE_SYS = 0,
    ACL_ENGINE_AICORE = 1,
    ACL_ENGINE_VECTOR = 2,
} aclopEngineType;
/* END GENERATED: enums */

/* BEGIN GENERATED: functions (abi/tools/gen_headers.py) */
ACL_FUNC_VISIBILITY aclError aclopExecuteV2(const char *opType, int numInputs,
    aclTensorDesc *inputDesc[], aclDataBuffer *inputs[], int numOutputs,
    aclTensorDesc *outputDesc[], aclDataBuffer *outputs[], aclopAttr *attr, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclopExecute(const char *opType, int numInputs,
    const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[], int numOutputs,
    const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[], const aclopAttr *attr,
    aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclopCast(const aclTensorDesc *srcDesc, const aclDataBuffer *srcBuffer,
    const aclTensorDesc *dstDesc, aclDataBuffer *dstBuffer, uint8_t truncate, aclrtStream stream);
ACL_FUNC_VISIBILITY aclopAttr *aclopCreateAttr(void);
ACL_FUNC_VISIBILITY void aclopDestroyAttr(const aclopAttr *attr);
ACL_FUNC_VISIBILITY aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName,
    uint8_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName,
    int64_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName,
    float attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrString(aclopAttr *attr, const char *attrName,
    const char *attrValue);
/* END GENERATED: functions */

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_OP_H_ */
