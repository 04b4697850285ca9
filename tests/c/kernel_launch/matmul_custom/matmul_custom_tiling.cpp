// Host tiling of the MatmulCustom-style kernel: MultiCoreMatmulTiling over the cores of the
// platform, the way CANN's samples compute it.
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#include <cstdint>
#include <cstdio>
#include <vector>

using namespace matmul_tiling;

// Fills `out` with the serialised TCubeTiling; returns false when no tiling exists.
bool GenerateTiling(uint32_t M, uint32_t N, uint32_t K, bool bias, uint32_t cores, int32_t baseM, int32_t baseN,
                    std::vector<uint8_t> &out, uint32_t &usedCores)
{
    auto *platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    MultiCoreMatmulTiling api(*platform);
    optiling::TCubeTiling tiling;
    api.SetDim(cores);
    api.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16, false);
    api.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16, false);
    api.SetCType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
    api.SetBiasType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
    api.SetOrgShape(M, N, K);
    api.SetShape(M, N, K);
    if (baseM > 0 && baseN > 0) {
        api.SetFixSplit(baseM, baseN, -1);
    }
    api.SetBias(bias);
    api.SetBufferSpace(-1, -1, -1);
    if (api.GetTiling(tiling) == -1) {
        std::printf("GetTiling failed\n");
        return false;
    }
    std::printf("tiling: usedCoreNum %d singleCore %d x %d x %d base %d x %d x %d\n", tiling.get_usedCoreNum(),
                tiling.get_singleCoreM(), tiling.get_singleCoreN(), tiling.get_singleCoreK(), tiling.get_baseM(),
                tiling.get_baseN(), tiling.get_baseK());
    out.resize(tiling.GetDataSize());
    tiling.SaveToBuffer(out.data(), out.size());
    usedCores = tiling.get_usedCoreNum();
    return true;
}
