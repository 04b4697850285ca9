/* npu-emu Ascend C CPU headers: the CPU-debug path of vendor samples (`#include "tikicpulib.h"`
 * under ASCENDC_CPU_DEBUG).
 *
 *   uint8_t *x = (uint8_t *)AscendC::GmAlloc(bytes);   // host memory, registered as a GM buffer
 *   AscendC::SetKernelMode(KernelMode::AIV_MODE);
 *   ICPU_RUN_KF(add_custom, blockDim, x, y, z);        // blockDim blocks on parallel threads
 *   AscendC::GmFree((void *)x);
 *
 * ICPU_RUN_KF runs each block through npuemu::run_block with the live GmAlloc buffers as the
 * kernel's regions, so every GlobalTensor access is checked against them. A kernel fault prints
 * its message (naming kernel, block and address) to stderr and exits the process with status 1. */
#ifndef NPUEMU_TIKICPULIB_H
#define NPUEMU_TIKICPULIB_H

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdlib.h>
#include <string>
#include <thread>
#include <vector>

#include "kernel_operator.h"
#include "npuemu/launch.h"

enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1 };

namespace npuemu {

struct GmAllocRegistry {
    std::mutex m;
    std::vector<npuemu_gm_region> live;
    std::vector<std::string> names; /* storage for region names, parallel to live */
    uint64_t count = 0;
    KernelMode mode = KernelMode::AIV_MODE;
};

inline GmAllocRegistry &gm_alloc_registry()
{
    static GmAllocRegistry r;
    return r;
}

[[noreturn]] inline void icpu_die(const std::string &msg)
{
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", msg.c_str());
    std::fflush(stderr);
    std::exit(1);
}

/* ICPU_SET_TILING_KEY: the tiling key of the next ICPU_RUN_KF launches (TILING_KEY_IS). */
inline uint64_t &icpu_tiling_key()
{
    static uint64_t key = 0;
    return key;
}

/* The SyncAll barrier of one ICPU_RUN_KF launch (see npu_emu::aicore::LaunchSync). */
class IcpuSync {
public:
    IcpuSync(uint32_t n, uint32_t cores) : n_(n), cores_(cores) {}
    static int arrive_cb(void *self, uint32_t idx, char *err, size_t errlen)
    {
        std::string m = static_cast<IcpuSync *>(self)->arrive(idx);
        if (m.empty()) {
            return 0;
        }
        copy_message(m.c_str(), err, errlen);
        return 1;
    }
    std::string arrive(uint32_t)
    {
        if (n_ > cores_) {
            return "SyncAll with blockDim " + std::to_string(n_) + " on " + std::to_string(cores_) +
                   " threads: the blocks that run first would wait for blocks that can only start when they finish "
                   "(on hardware the kernel hangs)";
        }
        std::unique_lock<std::mutex> g(m_);
        std::string why = stuck();
        if (!why.empty()) {
            return why;
        }
        waiting_++;
        if (waiting_ + finished_ == n_) {
            why = stuck();
            if (!why.empty()) {
                return why;
            }
            waiting_ = 0;
            gen_++;
            cv_.notify_all();
            return "";
        }
        const uint64_t gen = gen_;
        for (;;) {
            cv_.wait(g);
            if (gen_ != gen) {
                return "";
            }
            why = stuck();
            if (!why.empty()) {
                return why;
            }
        }
    }
    void done(uint32_t idx, bool ok)
    {
        std::lock_guard<std::mutex> g(m_);
        finished_++;
        if (!ok && (failed_ < 0 || static_cast<int64_t>(idx) < failed_)) {
            failed_ = idx;
        }
        cv_.notify_all();
    }

private:
    std::string stuck() const
    {
        if (failed_ >= 0) {
            return "SyncAll: block " + std::to_string(failed_) +
                   " failed, so the blocks waiting in SyncAll can never continue";
        }
        if (finished_ > 0 && waiting_ + finished_ == n_) {
            return "SyncAll: " + std::to_string(finished_) + " of the " + std::to_string(n_) +
                   " blocks returned from the kernel without calling SyncAll; on hardware the others wait for them "
                   "forever";
        }
        return "";
    }
    uint32_t n_, cores_;
    uint32_t waiting_ = 0, finished_ = 0;
    int64_t failed_ = -1;
    uint64_t gen_ = 0;
    std::mutex m_;
    std::condition_variable cv_;
};

/* Run blocks 0..blockDim-1 of `kernel` on threads (at most 64 at a time, like the AI cores of
 * one device), each through run_block with the live GmAlloc buffers. Exits 1 on a fault. */
template <class F>
inline void icpu_run(const char *kernel, int64_t block_dim, F &&body)
{
    GmAllocRegistry &reg = gm_alloc_registry();
    if (block_dim <= 0 || block_dim > 65535) {
        icpu_die(std::string("npu-emu: ICPU_RUN_KF(") + kernel + ", " + std::to_string(block_dim) +
                 "): blockDim must be in 1..65535");
    }
    std::vector<npuemu_gm_region> regions;
    std::vector<std::string> names;
    bool aic = false;
    {
        std::lock_guard<std::mutex> g(reg.m);
        /* AIC_MODE: the blocks are cube cores (ASCEND_IS_AIC). The mixed modes run each block
         * once, as a vector core that also does its cube work (Matmul), as kernel launches do. */
        aic = reg.mode == KernelMode::AIC_MODE;
        regions = reg.live;
        names = reg.names;
    }
    for (size_t i = 0; i < regions.size(); ++i) {
        regions[i].name = names[i].c_str();
    }
    const uint32_t n = static_cast<uint32_t>(block_dim);
    const uint32_t nthreads = n < 64 ? n : 64;
    std::atomic<uint32_t> next(0);
    std::vector<std::string> errors(n);
    std::atomic<uint32_t> failed(0);
    IcpuSync sync(n, nthreads);
    auto worker = [&]() {
        for (;;) {
            const uint32_t i = next.fetch_add(1);
            if (i >= n) {
                return;
            }
            char err[4096];
            err[0] = '\0';
            npuemu_block_info info;
            std::memset(&info, 0, sizeof info);
            info.block_idx = i;
            info.block_num = n;
            info.regions = regions.data();
            info.nregions = regions.size();
            info.tiling_key = icpu_tiling_key();
            info.cores = nthreads;
            info.launch = &sync;
            info.sync_all = &IcpuSync::arrive_cb;
            info.err = err;
            info.errlen = sizeof err;
            const int rc = run_block(kernel, &info, [&]() {
                if (aic) {
                    npuemu::ctx().core_type = AscendC::AIC;
                }
                body();
            });
            sync.done(i, rc == 0);
            if (rc != 0) {
                errors[i] = err;
                failed.fetch_add(1);
            }
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(nthreads);
    for (uint32_t t = 0; t < nthreads; ++t) {
        threads.emplace_back(worker);
    }
    for (std::thread &t : threads) {
        t.join();
    }
    if (failed.load() != 0) {
        for (uint32_t i = 0; i < n; ++i) {
            if (!errors[i].empty()) {
                std::string msg = errors[i];
                if (failed.load() > 1) {
                    msg += " (" + std::to_string(failed.load()) + " of " + std::to_string(n) + " blocks failed)";
                }
                icpu_die(msg);
            }
        }
    }
}

} // namespace npuemu

namespace AscendC {

/* Global memory for the CPU-debug path: `size` bytes of zeroed host memory (32-byte aligned),
 * registered as a buffer kernels launched by ICPU_RUN_KF may access. */
inline void *GmAlloc(size_t size)
{
    npuemu::GmAllocRegistry &reg = npuemu::gm_alloc_registry();
    const size_t rounded = (size + 31) / 32 * 32;
    void *p = nullptr;
    if (posix_memalign(&p, 64, rounded ? rounded : 32) != 0 || p == nullptr) {
        npuemu::icpu_die("npu-emu: AscendC::GmAlloc(" + std::to_string(size) + "): out of host memory");
    }
    std::memset(p, 0, rounded ? rounded : 32);
    std::lock_guard<std::mutex> g(reg.m);
    reg.count++;
    reg.live.push_back(npuemu_gm_region{reinterpret_cast<uint64_t>(p), static_cast<uint64_t>(size), p, nullptr});
    reg.names.push_back("GmAlloc#" + std::to_string(reg.count));
    return p;
}

/* Release a GmAlloc buffer. Anything else (or a second free) stops the process with a message. */
inline void GmFree(void *ptr)
{
    npuemu::GmAllocRegistry &reg = npuemu::gm_alloc_registry();
    std::lock_guard<std::mutex> g(reg.m);
    for (size_t i = 0; i < reg.live.size(); ++i) {
        if (reg.live[i].host == ptr) {
            reg.live.erase(reg.live.begin() + static_cast<std::ptrdiff_t>(i));
            reg.names.erase(reg.names.begin() + static_cast<std::ptrdiff_t>(i));
            std::free(ptr);
            return;
        }
    }
    char buf[128];
    std::snprintf(buf, sizeof buf, "npu-emu: AscendC::GmFree(%p): not a live buffer from AscendC::GmAlloc", ptr);
    npuemu::icpu_die(buf);
}

inline void SetKernelMode(KernelMode mode)
{
    npuemu::GmAllocRegistry &reg = npuemu::gm_alloc_registry();
    std::lock_guard<std::mutex> g(reg.m);
    reg.mode = mode;
}

} // namespace AscendC

/* Run `func(args...)` as blockDim blocks (see npuemu::icpu_run). */
#define ICPU_RUN_KF(func, blockDim, ...) npuemu::icpu_run(#func, (blockDim), [&]() { func(__VA_ARGS__); })

/* The tiling key of the following ICPU_RUN_KF launches: TILING_KEY_IS(key) in the kernel is true
 * for it (0 until set). */
#define ICPU_SET_TILING_KEY(key) (npuemu::icpu_tiling_key() = static_cast<uint64_t>(key))

#endif /* NPUEMU_TIKICPULIB_H */
