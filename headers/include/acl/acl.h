/*
 * npu-emu: CANN 8.5 `acl/acl.h` includes the runtime API and the operator and model headers
 * (abi.md §0.1). aclInit/aclFinalize/aclrtGetVersion/aclGetRecentErrMsg are in acl_rt.h.
 */
#ifndef INC_EXTERNAL_ACL_ACL_H_
#define INC_EXTERNAL_ACL_ACL_H_

#include "acl_rt.h"
#include "acl_op.h"
#include "acl_mdl.h"

#endif /* INC_EXTERNAL_ACL_ACL_H_ */
