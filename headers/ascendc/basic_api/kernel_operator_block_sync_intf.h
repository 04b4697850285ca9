/* npu-emu Ascend C CPU headers: `#include "basic_api/kernel_operator_block_sync_intf.h"`
 * (SyncAll and the other block synchronisation of the basic API). */
#ifndef NPUEMU_BASIC_API_KERNEL_OPERATOR_BLOCK_SYNC_INTF_H
#define NPUEMU_BASIC_API_KERNEL_OPERATOR_BLOCK_SYNC_INTF_H

#include "kernel_operator.h"

#endif /* NPUEMU_BASIC_API_KERNEL_OPERATOR_BLOCK_SYNC_INTF_H */
