/*
 * npu-emu: CANN 8.5's runtime package ships `acl/acl_mdl.h` as a placeholder; the offline-model
 * API (aclmdlLoad*, aclmdlExecute, ...) belongs to the GE package and is not emulated. The
 * aclgraph capture functions (aclmdlRI*) and the dump switches live in acl_rt.h since 8.5.
 */
#ifndef INC_EXTERNAL_ACL_ACL_MDL_H_
#define INC_EXTERNAL_ACL_ACL_MDL_H_

#include "acl_base.h"
#include "acl_rt.h"

#endif /* INC_EXTERNAL_ACL_ACL_MDL_H_ */
