/*
 * npu-emu: dump API (CANN `acl/acl_dump.h`, included by acl_op.h in CANN 8.x). Not in abi.md:
 * names, signatures and values follow the CANN 8.x GE header inc/external/acl/acl_dump.h (see
 * abi/tools/extra_functions.tsv). Generated regions come from the abi/ TSV files.
 */
#ifndef INC_EXTERNAL_ACL_DUMP_H_
#define INC_EXTERNAL_ACL_DUMP_H_

#include <stdint.h>
#include "acl_base.h"

#if (defined(_WIN32) || defined(_WIN64) || defined(_MSC_VER))
#define ACL_DUMP_API __declspec(dllexport)
#else
#define ACL_DUMP_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* BEGIN GENERATED: constants (abi/tools/gen_headers.py) */
#define ACL_DUMP_MAX_FILE_PATH_LENGTH 4096
#define ACL_OP_DUMP_OP_AICORE_ARGS 0x00000001U
/* END GENERATED: constants */

typedef struct acldumpChunk {
    char fileName[ACL_DUMP_MAX_FILE_PATH_LENGTH]; /* dump file to write, absolute path */
    uint32_t bufLen;                              /* length of dataBuf in bytes */
    uint32_t isLastChunk;                         /* 1 for the last chunk of a file */
    int64_t offset;                               /* offset in the file; -1 appends */
    int32_t flag;                                 /* reserved */
    __extension__ uint8_t dataBuf[0];             /* the data (GNU zero-length array, as CANN) */
} acldumpChunk;

/* BEGIN GENERATED: enums (abi/tools/gen_headers.py) */
typedef enum acldumpType {
    AIC_ERR_BRIEF_DUMP = 1,
    AIC_ERR_NORM_DUMP = 2,
    AIC_ERR_DETAIL_DUMP = 3,
    DATA_DUMP = 4,
    OVERFLOW_DUMP = 5,
} acldumpType;
/* END GENERATED: enums */

/* BEGIN GENERATED: functions (abi/tools/gen_headers.py) */
ACL_FUNC_VISIBILITY aclError acldumpRegCallback(int32_t (*const messageCallback)(const acldumpChunk *,
    int32_t), int32_t flag);
ACL_FUNC_VISIBILITY void acldumpUnregCallback(void);
ACL_FUNC_VISIBILITY aclError aclopStartDumpArgs(uint32_t dumpType, const char *path);
ACL_FUNC_VISIBILITY aclError aclopStopDumpArgs(uint32_t dumpType);
ACL_FUNC_VISIBILITY const char *acldumpGetPath(acldumpType dumpType);
/* END GENERATED: functions */

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_DUMP_H_ */
