/* npu-emu Ascend C CPU headers: `#include "basic_api/kernel_basic_intf.h"` (the basic API). */
#ifndef NPUEMU_BASIC_API_KERNEL_BASIC_INTF_H
#define NPUEMU_BASIC_API_KERNEL_BASIC_INTF_H

#include "kernel_operator.h"

#endif /* NPUEMU_BASIC_API_KERNEL_BASIC_INTF_H */
