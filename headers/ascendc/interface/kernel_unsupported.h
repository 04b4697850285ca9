/* npu-emu Ascend C CPU headers: real Ascend C APIs the CPU headers do not implement.
 *
 * Each is declared so that a kernel using it fails to COMPILE with a message naming the API
 * (a static_assert in a template, fired only when the kernel calls it), never compiles to
 * something wrong. Names not listed here and not implemented fail with the compiler's own
 * "was not declared" error, which names them too. See README.md for the supported surface. */
#ifndef NPUEMU_KERNEL_UNSUPPORTED_H
#define NPUEMU_KERNEL_UNSUPPORTED_H

#include "interface/kernel_common.h"
#include "npuemu/context.h"

#define NPUEMU_UNSUPPORTED_FN(NAME)                                                                 \
    template <typename... NpuemuArgs>                                                               \
    __aicore__ inline void NAME(NpuemuArgs &&...)                                                   \
    {                                                                                               \
        static_assert(npuemu::dependent_false<NpuemuArgs...>::value,                                \
                      "npu-emu: AscendC::" #NAME " is not supported by the CPU kernel headers (see README.md)"); \
    }

/* Functions whose real form has leading template arguments (e.g. SyncAll<true>()). */
#define NPUEMU_UNSUPPORTED_FN_T(NAME)                                                               \
    template <typename... NpuemuArgs>                                                               \
    __aicore__ inline void NAME(NpuemuArgs &&...)                                                   \
    {                                                                                               \
        static_assert(npuemu::dependent_false<NpuemuArgs...>::value,                                \
                      "npu-emu: AscendC::" #NAME " is not supported by the CPU kernel headers (see README.md)"); \
    }                                                                                               \
    NPUEMU_UNSUPPORTED_FN_T17(NAME)

#if __cplusplus >= 201703L
#define NPUEMU_UNSUPPORTED_FN_T17(NAME)                                                             \
    template <auto NpuemuA, typename... NpuemuArgs>                                                 \
    __aicore__ inline void NAME(NpuemuArgs &&...)                                                   \
    {                                                                                               \
        static_assert(npuemu::dependent_false<NpuemuArgs...>::value && NpuemuA != NpuemuA,          \
                      "npu-emu: AscendC::" #NAME " is not supported by the CPU kernel headers (see README.md)"); \
    }                                                                                               \
    template <auto NpuemuA, auto NpuemuB, typename... NpuemuArgs>                                   \
    __aicore__ inline void NAME(NpuemuArgs &&...)                                                   \
    {                                                                                               \
        static_assert(npuemu::dependent_false<NpuemuArgs...>::value && NpuemuA != NpuemuA,          \
                      "npu-emu: AscendC::" #NAME " is not supported by the CPU kernel headers (see README.md)"); \
    }
#else
#define NPUEMU_UNSUPPORTED_FN_T17(NAME)                                                             \
    template <bool NpuemuA, typename... NpuemuArgs>                                                 \
    __aicore__ inline void NAME(NpuemuArgs &&...)                                                   \
    {                                                                                               \
        static_assert(npuemu::dependent_false<NpuemuArgs...>::value && NpuemuA != NpuemuA,          \
                      "npu-emu: AscendC::" #NAME " is not supported by the CPU kernel headers (see README.md)"); \
    }                                                                                               \
    template <int NpuemuA, int NpuemuB, typename... NpuemuArgs>                                     \
    __aicore__ inline void NAME(NpuemuArgs &&...)                                                   \
    {                                                                                               \
        static_assert(npuemu::dependent_false<NpuemuArgs...>::value && NpuemuA != NpuemuA,          \
                      "npu-emu: AscendC::" #NAME " is not supported by the CPU kernel headers (see README.md)"); \
    }
#endif

/* APIs the API reference lists for other products, not for Atlas A2 / A3 (Ascend910B / 910_93, the
 * emulated SoC): a kernel that calls one does not build for it. */
#define NPUEMU_NOT_ON_A2(NAME, WHAT)                                                                \
    template <typename... NpuemuArgs>                                                               \
    __aicore__ inline void NAME(NpuemuArgs &&...)                                                   \
    {                                                                                               \
        static_assert(npuemu::dependent_false<NpuemuArgs...>::value,                                \
                      "npu-emu: AscendC::" #NAME " is not supported on Atlas A2 / A3 (Ascend910B, __NPU_ARCH__ " \
                      "2201, the emulated SoC): " WHAT);                                            \
    }

namespace AscendC {

/* cube unit */
NPUEMU_UNSUPPORTED_FN(LoadDataWithTranspose)
NPUEMU_UNSUPPORTED_FN(InitConstValue)
NPUEMU_UNSUPPORTED_FN(SetFmatrix)
NPUEMU_UNSUPPORTED_FN(SetLoadDataPaddingValue)
/* gathers, sorting */
NPUEMU_NOT_ON_A2(Scatter, "the reference lists it for the Atlas inference products' AI Core and Atlas 200I/500 A2 "
                          "only")
NPUEMU_UNSUPPORTED_FN(TransDataTo5HD)
NPUEMU_UNSUPPORTED_FN(CastDeq)
/* the Region Proposal layout (排布方式二) of the Atlas training / inference products */
NPUEMU_NOT_ON_A2(ProposalConcat, "Region Proposals are the layout of the Atlas training / inference products; on A2 / A3 "
                                 "Sort / Sort32 / MrgSort work on (score, index) pairs")
NPUEMU_NOT_ON_A2(ProposalExtract, "Region Proposals are the layout of the Atlas training / inference products; on A2 / "
                                  "A3 use Extract")
NPUEMU_NOT_ON_A2(RpSort16, "Region Proposals are the layout of the Atlas training / inference products; on A2 / A3 use "
                           "Sort32 / Sort")
NPUEMU_NOT_ON_A2(MrgSort4, "Region Proposals are the layout of the Atlas training / inference products; on A2 / A3 use "
                           "MrgSort")
NPUEMU_UNSUPPORTED_FN(IBSet)
NPUEMU_UNSUPPORTED_FN(IBWait)
/* cross-core flags between the cube and vector cores of mixed kernels (a block emulates one
 * whole AI core) */
NPUEMU_UNSUPPORTED_FN_T(CrossCoreSetFlag)
NPUEMU_UNSUPPORTED_FN_T(CrossCoreWaitFlag)

} // namespace AscendC

#undef NPUEMU_UNSUPPORTED_FN
#undef NPUEMU_NOT_ON_A2
#undef NPUEMU_UNSUPPORTED_FN_T
#undef NPUEMU_UNSUPPORTED_FN_T17

#endif /* NPUEMU_KERNEL_UNSUPPORTED_H */
