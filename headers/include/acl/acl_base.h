/*
 * npu-emu: CANN 8.5 `acl/acl_base.h` aggregates the runtime base types and the tensor
 * descriptor API (abi.md §0.1).
 */
#ifndef INC_EXTERNAL_ACL_ACL_BASE_H_
#define INC_EXTERNAL_ACL_ACL_BASE_H_

#include "acl_base_rt.h"
#include "acl_base_mdl.h"

#endif /* INC_EXTERNAL_ACL_ACL_BASE_H_ */
