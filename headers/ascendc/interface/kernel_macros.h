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

#endif /* NPUEMU_KERNEL_MACROS_H */
