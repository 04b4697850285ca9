/* npu-emu Ascend C CPU headers: the kernel compiler's qualifiers and the kernel-type macros.
 *
 * On the CPU the address-space and function-kind qualifiers mean nothing and expand to nothing
 * (`__global__`: default visibility);
 * GM_ADDR is a byte pointer holding a canonical device address. */
#ifndef NPUEMU_KERNEL_MACROS_H
#define NPUEMU_KERNEL_MACROS_H

#include <cstdint>

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

namespace npuemu {
constexpr bool kernel_type_supported(KernelMetaType t)
{
    return t == KERNEL_TYPE_AIV_ONLY || t == KERNEL_TYPE_MIX_AIV_1_0 || t == KERNEL_TYPE_AICORE ||
           t == KERNEL_TYPE_VECTORCORE;
}
} // namespace npuemu

/* Vector kernels only: the cube unit (AIC and mixed AIC/AIV kernels) is not emulated. */
#define KERNEL_TASK_TYPE_DEFAULT(type)                                                              \
    static_assert(npuemu::kernel_type_supported(type),                                              \
                  "npu-emu: KERNEL_TASK_TYPE_DEFAULT(" #type                                        \
                  "): only vector kernels (KERNEL_TYPE_AIV_ONLY, KERNEL_TYPE_MIX_AIV_1_0) are "     \
                  "supported by the CPU kernel headers (see README.md)")
#define KERNEL_TASK_TYPE(key, type)                                                                 \
    static_assert(npuemu::kernel_type_supported(type),                                              \
                  "npu-emu: KERNEL_TASK_TYPE(" #key ", " #type                                      \
                  "): only vector kernels are supported by the CPU kernel headers (see README.md)")

/* The AI-core architecture of the device code (`#if __NPU_ARCH__ == 2201`, as the Ascend C
 * predefined macros): the kernel-library builds (ascendc.cmake, tikicpulib) define it for
 * their SOC_VERSION (1001 Ascend910, 2002 Ascend310P/610, 2201 Ascend910B/910_93, 3002
 * Ascend310B); a kernel compiled without it gets the emulated default, Ascend910B1. */
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif

/* Core-type tests (`if ASCEND_IS_AIV { ... }`): kernels run on the emulated vector cores, so
 * every block is an AIV block; cube-side branches (ASCEND_IS_AIC) never run. */
namespace AscendC {
constexpr int32_t MIX = 0;
constexpr int32_t AIC = 1;
constexpr int32_t AIV = 2;
} // namespace AscendC
constexpr int32_t g_coreType = AscendC::AIV;
#ifndef ASCEND_IS_AIV
#define ASCEND_IS_AIV (g_coreType == AscendC::AIV)
#endif
#ifndef ASCEND_IS_AIC
#define ASCEND_IS_AIC (g_coreType == AscendC::AIC)
#endif
#ifndef ASCEND_IS_NOT_AIV
#define ASCEND_IS_NOT_AIV (g_coreType != AscendC::AIV)
#endif
#ifndef ASCEND_IS_NOT_AIC
#define ASCEND_IS_NOT_AIC (g_coreType != AscendC::AIC)
#endif

#endif /* NPUEMU_KERNEL_MACROS_H */
