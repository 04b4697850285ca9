/* npu-emu Ascend C CPU headers: the kernel-side API (`#include "kernel_operator.h"`).
 *
 * Ordinary Ascend C vector kernels compile with g++ (-std=c++17; also -std=c++14) against these
 * headers and run on the CPU with the semantics of the real API, checking what the hardware only
 * hangs or corrupts on. README.md in this directory lists the supported API surface. */
#ifndef NPUEMU_KERNEL_OPERATOR_H
#define NPUEMU_KERNEL_OPERATOR_H

#include <cstdint>

#include "npuemu/half.h"
#include "npuemu/context.h"
#include "interface/kernel_macros.h"
#include "interface/kernel_common.h"
#include "interface/kernel_tensor.h"
#include "interface/kernel_tpipe.h"
#include "interface/kernel_data_copy.h"
#include "interface/kernel_operator_vec.h"
#include "interface/kernel_operator_mask.h"
#include "interface/kernel_operator_reduce.h"
#include "interface/kernel_operator_mm.h"
#include "interface/kernel_operator_cast.h"
#include "interface/kernel_operator_cmpsel.h"
#include "interface/kernel_operator_gather.h"
#include "interface/kernel_operator_vec_ext.h"
#include "interface/kernel_operator_sort.h"
#include "interface/kernel_operator_softmax.h"
#include "interface/kernel_print.h"
#include "interface/kernel_dump.h"
#include "interface/kernel_sync_all.h"
#include "interface/kernel_tiling.h"
#include "npuemu/raw_access.h"
#include "interface/kernel_unsupported.h"

#endif /* NPUEMU_KERNEL_OPERATOR_H */
