/*
 * npu-emu: compile-and-execute single operators (CANN `acl/acl_op_compiler.h`, abi.md §1.7).
 * Not included by acl.h, as in CANN. Generated regions come from the abi/ TSV files.
 */
#ifndef INC_EXTERNAL_ACL_ACL_OP_COMPILER_H_
#define INC_EXTERNAL_ACL_ACL_OP_COMPILER_H_

#include "acl_base.h"
#include "acl_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* BEGIN GENERATED: enums (abi/tools/gen_headers.py) */
typedef enum aclopCompileType {
    ACL_COMPILE_SYS = 0,
    ACL_COMPILE_UNREGISTERED = 1,
} aclopCompileType;
/* END GENERATED: enums */

/* BEGIN GENERATED: functions (abi/tools/gen_headers.py) */
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecute(const char *opType, int numInputs,
    const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[], int numOutputs,
    const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[], const aclopAttr *attr,
    aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath,
    aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecuteV2(const char *opType, int numInputs,
    aclTensorDesc *inputDesc[], aclDataBuffer *inputs[], int numOutputs,
    aclTensorDesc *outputDesc[], aclDataBuffer *outputs[], aclopAttr *attr,
    aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath,
    aclrtStream stream);
/* END GENERATED: functions */

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_OP_COMPILER_H_ */
