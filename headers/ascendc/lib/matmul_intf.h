/* npu-emu Ascend C CPU headers: the high-level Matmul API is not supported (the cube unit is not
 * emulated). Declaring a Matmul object fails to compile with a message naming it. */
#ifndef NPUEMU_LIB_MATMUL_INTF_H
#define NPUEMU_LIB_MATMUL_INTF_H

#include "kernel_operator.h"

namespace AscendC {
template <TPosition POSITION, int FORMAT, typename TYPE, bool ISTRANS = false, int LAYOUT = 0, bool IBSHARE = false>
struct MatmulType {
    using T = TYPE;
};
} // namespace AscendC

namespace matmul {
template <class... NpuemuArgs>
class Matmul {
    static_assert(npuemu::dependent_false<NpuemuArgs...>::value,
                  "npu-emu: AscendC::Matmul (lib/matmul_intf.h) is not supported by the CPU kernel headers "
                  "(see README.md)");
};
template <typename... NpuemuArgs>
inline void REGIST_MATMUL_OBJ(NpuemuArgs &&...)
{
    static_assert(npuemu::dependent_false<NpuemuArgs...>::value,
                  "npu-emu: REGIST_MATMUL_OBJ / AscendC::Matmul is not supported by the CPU kernel headers "
                  "(see README.md)");
}
} // namespace matmul

namespace AscendC {
using matmul::Matmul;
}

#endif /* NPUEMU_LIB_MATMUL_INTF_H */
