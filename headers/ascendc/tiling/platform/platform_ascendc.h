/* npu-emu: the platform information of Ascend C host tiling code
 * (`#include "tiling/platform/platform_ascendc.h"`).
 *
 *   auto *p = platform_ascendc::PlatformAscendCManager::GetInstance();          // NPU_EMU_SOC or Ascend910B1
 *   auto *q = platform_ascendc::PlatformAscendCManager::GetInstance("Ascend310P3");
 *   p->GetCoreNumAiv(); p->GetCoreMemSize(platform_ascendc::CoreMemType::UB, size);
 *
 * The numbers are those of the SoC npu-emu emulates, the same the runtime reports
 * (aclrtGetDeviceInfo) and the kernel headers use: Ascend910B1/B2/B2C and the Ascend910_93 dies
 * 24 cube / 48 vector cores, Ascend910B3/B4 20 / 40, Ascend310P3 8 AI cores (coupled); buffers of
 * the A2 AI core (UB 192 KiB, L1 512 KiB, L0A / L0B 64 KiB, L0C 128 KiB). Header-only. */
#ifndef NPUEMU_TILING_PLATFORM_PLATFORM_ASCENDC_H
#define NPUEMU_TILING_PLATFORM_PLATFORM_ASCENDC_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace fe {
class PlatFormInfos;
}

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, FB = 7, BT = 8, RESERVED };

enum class SocVersion {
    ASCEND910 = 0,
    ASCEND910B,
    ASCEND910_93,
    ASCEND910_95,
    ASCEND310P,
    ASCEND310B,
    ASCEND610,
    ASCEND610LITE,
    ASCEND031,
    ASCEND035,
    ASCEND910_55,
    ASCEND950,
    KIRINX90,
    KIRIN9030,
    MC62CM12A,
    RESERVED_VERSION = 99999,
};

enum class ReservedSize { RESERVED_SIZE_8K = 0, RESERVED_SIZE_16K = 1, RESERVED_SIZE_32K = 2 };

class PlatformAscendC {
public:
    /* Tiling functions construct it from their context's platform information; npu-emu has one
     * platform, the emulated SoC. */
    explicit PlatformAscendC(fe::PlatFormInfos *platformInfo = nullptr) : PlatformAscendC(DefaultSoc()) { (void)platformInfo; }
    explicit PlatformAscendC(const std::string &soc) : soc_(soc.empty() ? DefaultSoc() : soc)
    {
        if (soc_.rfind("Ascend910B3", 0) == 0 || soc_.rfind("Ascend910B4", 0) == 0) {
            aic_ = 20;
            aiv_ = 40;
        } else if (soc_.rfind("Ascend310P", 0) == 0) {
            aic_ = 8;
            aiv_ = 8; /* coupled: a vector kernel runs on the AI cores */
            coupled_ = true;
            ub_ = 256 * 1024;
            l1_ = 1024 * 1024;
        }
    }

    uint32_t GetCoreNum() const { return coupled_ ? aic_ : aiv_; }
    uint32_t GetCoreNumAic() const { return aic_; }
    uint32_t GetCoreNumAiv() const { return aiv_; }
    uint32_t GetCoreNumVector() const { return coupled_ ? 7 : 0; }
    void GetCoreMemSize(const CoreMemType &memType, uint64_t &size) const
    {
        switch (memType) {
        case CoreMemType::L0_A: size = 64 * 1024; break;
        case CoreMemType::L0_B: size = 64 * 1024; break;
        case CoreMemType::L0_C: size = coupled_ ? 256 * 1024 : 128 * 1024; break;
        case CoreMemType::L1: size = l1_; break;
        case CoreMemType::L2: size = coupled_ ? 96ull * 1024 * 1024 : 192ull * 1024 * 1024; break;
        case CoreMemType::UB: size = ub_ - reserved_; break;
        case CoreMemType::HBM: size = 64ull * 1024 * 1024 * 1024; break;
        case CoreMemType::FB: size = 2 * 1024; break;
        case CoreMemType::BT: size = 1024; break;
        default: size = 0; break;
        }
    }
    void GetCoreMemBw(const CoreMemType &memType, uint64_t &bwSize) const
    {
        bwSize = memType == CoreMemType::HBM ? 1600 : memType == CoreMemType::L2 ? 5000 : 0;
    }
    SocVersion GetSocVersion() const
    {
        if (soc_.rfind("Ascend910_93", 0) == 0) {
            return SocVersion::ASCEND910_93;
        }
        if (soc_.rfind("Ascend910B", 0) == 0) {
            return SocVersion::ASCEND910B;
        }
        if (soc_.rfind("Ascend310P", 0) == 0) {
            return SocVersion::ASCEND310P;
        }
        if (soc_.rfind("Ascend310B", 0) == 0) {
            return SocVersion::ASCEND310B;
        }
        if (soc_.rfind("Ascend910", 0) == 0) {
            return SocVersion::ASCEND910;
        }
        return SocVersion::ASCEND910B;
    }
    std::string GetSocVersionName() const { return soc_; }
    /* The workspace the high-level APIs reserve for themselves (GetSysWorkSpacePtr): 16 MiB, as on
     * the NPU; npu-emu's Matmul uses none of it. */
    uint32_t GetLibApiWorkSpaceSize() const { return 16 * 1024 * 1024; }
    uint32_t GetResCubeGroupWorkSpaceSize() const { return 0; }
    uint32_t GetResGroupBarrierWorkSpaceSize() const { return 0; }
    /* The blockDim of a task split into sliceNum parts on a mixed kernel (at most one per core). */
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
    {
        if (aicCoreNum == 0 || aivCoreNum == 0 || aicCoreNum > aivCoreNum) {
            return sliceNum;
        }
        const uint32_t ratio = aivCoreNum / aicCoreNum;
        return ratio == 0 ? sliceNum : (sliceNum + ratio - 1) / ratio;
    }
    uint32_t CalcTschNumBlocks(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
    {
        return CalcTschBlockDim(sliceNum, aicCoreNum, aivCoreNum);
    }
    int64_t ReserveLocalMemory(ReservedSize size)
    {
        reserved_ = size == ReservedSize::RESERVED_SIZE_8K ? 8192 : size == ReservedSize::RESERVED_SIZE_16K ? 16384 : 32768;
        return 0;
    }
    uint32_t GetVecRegLen() const { return 256; }

private:
    static std::string DefaultSoc()
    {
        const char *s = std::getenv("NPU_EMU_SOC");
        return s != nullptr && *s != '\0' ? std::string(s) : std::string("Ascend910B1");
    }
    std::string soc_;
    uint32_t aic_ = 24, aiv_ = 48;
    bool coupled_ = false;
    uint64_t ub_ = 192 * 1024, l1_ = 512 * 1024, reserved_ = 0;
};

class PlatformAscendCManager {
public:
    static PlatformAscendC *GetInstance() { return GetInstance(nullptr); }
    static PlatformAscendC *GetInstance(const char *customSocVersion)
    {
        static std::mutex m;
        static std::map<std::string, std::unique_ptr<PlatformAscendC>> all;
        const std::string key = customSocVersion != nullptr ? customSocVersion : "";
        std::lock_guard<std::mutex> g(m);
        std::unique_ptr<PlatformAscendC> &p = all[key];
        if (!p) {
            p.reset(new PlatformAscendC(key));
        }
        return p.get();
    }
};

} // namespace platform_ascendc

#endif /* NPUEMU_TILING_PLATFORM_PLATFORM_ASCENDC_H */
