/* npu-emu Ascend C CPU headers: `#include "utils/debug/asc_printf.h"` (printf in kernel code).
 * In kernel code `printf(...)` is the C library's (each block's output as it comes) and
 * `AscendC::printf` / `PRINTF` the kernel API's (interface/kernel_print.h). */
#ifndef NPUEMU_UTILS_DEBUG_ASC_PRINTF_H
#define NPUEMU_UTILS_DEBUG_ASC_PRINTF_H

#include <cstdio>

#include "kernel_operator.h"

#endif /* NPUEMU_UTILS_DEBUG_ASC_PRINTF_H */
