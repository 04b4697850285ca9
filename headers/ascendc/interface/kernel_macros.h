/* npu-emu Ascend C CPU headers: the kernel compiler's qualifiers and the kernel-type macros.
 *
 * On the CPU the address-space and function-kind qualifiers mean nothing and expand to nothing
 * (`__global__`: default visibility);
 * GM_ADDR is a byte pointer holding a canonical device address. */
#ifndef NPUEMU_KERNEL_MACROS_H
#define NPUEMU_KERNEL_MACROS_H

#include <cstdint>

#include "npuemu/context.h"

#ifndef __aicore__
#define __aicore__
#endif
#ifndef __global__
/* kernels stay callable from the launch code / ICPU_RUN_KF even under -fvisibility=hidden */
#define __global__ __attribute__((visibility("default")))
#endif
#ifndef __vector__
#define __vector__
#endif
#ifndef __cube__
#define __cube__
#endif
#ifndef __mix__
#define __mix__(cube, vec)
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#ifndef __fbuf__
#define __fbuf__
#endif
#ifndef __ssbuf__
#define __ssbuf__
#endif
#ifndef __host__
#define __host__
#endif
#ifndef __schedmode__
#define __schedmode__(mode)
#endif
#ifndef __cbuf__
#define __cbuf__
#endif
#ifndef __ca__
#define __ca__
#endif
#ifndef __cb__
#define __cb__
#endif
#ifndef __cc__
#define __cc__
#endif
#ifndef __inout_pipe__
#define __inout_pipe__(pipe)
#endif
#ifndef __in_pipe__
#define __in_pipe__(pipe)
#endif
#ifndef __out_pipe__
#define __out_pipe__(pipe)
#endif

#ifndef GM_ADDR
#define GM_ADDR __gm__ uint8_t *
#endif

/* Kernel types for KERNEL_TASK_TYPE_DEFAULT / KERNEL_TASK_TYPE. */
enum KernelMetaType {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
    KERNEL_TYPE_AICORE,
    KERNEL_TYPE_VECTORCORE,
    KERNEL_TYPE_MIX_AICORE,
    KERNEL_TYPE_MIX_VECTOR_CORE,
    KERNEL_TYPE_MAX,
};

namespace AscendC {
constexpr int32_t MIX = 0;
constexpr int32_t AIC = 1;
constexpr int32_t AIV = 2;
} // namespace AscendC

namespace npuemu {
/* Which core a block emulates: every block has the vector unit (UB) and the cube unit (L1 / L0
 * buffers) of one AI core, and runs the AIV branch of the code (ASCEND_IS_AIV) unless the kernel
 * is a cube-only kernel (__cube__, KERNEL_TYPE_AIC_ONLY), whose blocks take the AIC branch. Mixed
 * kernels that split their work between the two with cross-core flags are not supported (the
 * flags fail to compile); the high-level Matmul API computes on the block that calls it. */
inline void set_kernel_type(KernelMetaType t)
{
    BlockContext &c = ctx();
    if (c.active) {
        c.core_type = t == KERNEL_TYPE_AIC_ONLY ? AscendC::AIC : AscendC::AIV;
    }
}
inline int32_t core_type() { return ctx().core_type; }
} // namespace npuemu

/* The kernel type of the kernel (in its body, before anything else). */
#define KERNEL_TASK_TYPE_DEFAULT(type) npuemu::set_kernel_type(type)

/* Trace points for the CAModel performance simulator (TRACE_START(apid) / TRACE_STOP(apid), and
 * the (pipe, apid) form): no timing is modelled, so they mark nothing. */
#define TRACE_START(...) ((void)0)
#define TRACE_STOP(...) ((void)0)
#define KERNEL_TASK_TYPE(key, type)                                                                \
    do {                                                                                            \
        if (npuemu::ctx().tiling_key == static_cast<uint64_t>(key)) {                               \
            npuemu::set_kernel_type(type);                                                          \
        }                                                                                           \
    } while (0)

/* The AI-core architecture of the device code (`#if __NPU_ARCH__ == 2201`, as the Ascend C
 * predefined macros): the kernel-library builds (ascendc.cmake, tikicpulib) define it for
 * their SOC_VERSION (1001 Ascend910, 2002 Ascend310P/610, 2201 Ascend910B/910_93, 3002
 * Ascend310B); a kernel compiled without it gets the emulated default, Ascend910B1. */
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif

/* ASSERT(x) and DEBUG_CODE(T) of CANN's kernel_macros.h, in their CPU-debug meaning (the one
 * that checks, as a host run is): a false ASSERT fails the block with the expression (the
 * launch's synchronize returns 507015 naming it), DEBUG_CODE(T) keeps T. NDEBUG empties
 * ASSERT, as it does the C library's assert. */
#ifndef ASSERT
#ifdef NDEBUG
#define ASSERT(x) ((void)0)
#else
#define ASSERT(x)                                                                                   \
    (static_cast<bool>(x) ? void(0) : npuemu::fault("[ASSERT] %s:%d: Assertion `%s' failed", __FILE__, __LINE__, #x))
#endif
#endif
#ifndef DEBUG_CODE
#define DEBUG_CODE(T) T
#endif

/* Core-type tests (`if ASCEND_IS_AIV { ... }`): see npuemu::set_kernel_type. g_coreType is the
 * built-in constant of the same meaning. */
#ifndef g_coreType
#define g_coreType (npuemu::core_type())
#endif
#ifndef ASCEND_IS_AIV
#define ASCEND_IS_AIV (npuemu::core_type() == AscendC::AIV)
#endif
#ifndef ASCEND_IS_AIC
#define ASCEND_IS_AIC (npuemu::core_type() == AscendC::AIC)
#endif
#ifndef ASCEND_IS_NOT_AIV
#define ASCEND_IS_NOT_AIV (npuemu::core_type() != AscendC::AIV)
#endif
#ifndef ASCEND_IS_NOT_AIC
#define ASCEND_IS_NOT_AIC (npuemu::core_type() != AscendC::AIC)
#endif

#endif /* NPUEMU_KERNEL_MACROS_H */
