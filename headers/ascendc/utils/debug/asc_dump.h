/* npu-emu Ascend C CPU headers: `#include "utils/debug/asc_dump.h"` (DumpTensor, see
 * interface/kernel_dump.h). */
#ifndef NPUEMU_UTILS_DEBUG_ASC_DUMP_H
#define NPUEMU_UTILS_DEBUG_ASC_DUMP_H

#include "kernel_operator.h"

#endif /* NPUEMU_UTILS_DEBUG_ASC_DUMP_H */
