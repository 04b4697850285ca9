/* npu-emu Ascend C CPU headers: SyncAll, the barrier of all the blocks of a launch.
 *
 * The hard form (SyncAll<isAIVOnly>()) waits until every block of the launch has called it, on
 * the launch's barrier (npu_emu::aicore::LaunchSync / the ICPU_RUN_KF barrier). The soft form
 * (SyncAll(gmWorkspace, ubWorkspace, usedCores)) runs the documented protocol on the GM
 * workspace: each of the first usedCores blocks raises a flag in its own 32-byte slot and waits
 * for the others' flags.
 *
 * What hangs the hardware fails the block here, with a message: blockDim above the cores that run
 * at once (the documented constraint), a block that returns or fails while others wait, a block
 * outside the first usedCores calling the soft form. */
#ifndef NPUEMU_KERNEL_SYNC_ALL_H
#define NPUEMU_KERNEL_SYNC_ALL_H

#include <cstdint>
#include <sched.h>

#include "interface/kernel_common.h"
#include "interface/kernel_tensor.h"
#include "npuemu/context.h"

namespace AscendC {

struct SyncAllConfig {
    pipe_t triggerPipe;
    pipe_t waitPipe;
};
NPUEMU_INLINE_VAR constexpr SyncAllConfig DEFAULT_SYNC_ALL_CONFIG = {PIPE_ALL, PIPE_ALL};

/* Hardware barrier of all the blocks of the launch. */
template <bool isAIVOnly = true, const SyncAllConfig &config = DEFAULT_SYNC_ALL_CONFIG>
__aicore__ inline void SyncAll()
{
    npuemu::BlockContext &c = npuemu::ctx();
    if (!c.active) {
        npuemu::fault("AscendC::SyncAll() was called");
    }
    if (c.sync_all == nullptr) {
        npuemu::fault("AscendC::SyncAll(): this launch has no barrier (the block was not started by a kernel launch "
                      "or ICPU_RUN_KF)");
    }
    char why[1024];
    why[0] = '\0';
    if (c.sync_all(c.launch, c.block_idx, why, sizeof why) != 0) {
        npuemu::fault("%s", why);
    }
}

/* Software barrier of the first usedCores blocks (0: all), through gmWorkspace (at least
 * GetBlockNum() * 32 bytes, zero before the first use) and ubWorkspace (GetBlockNum() * 32 bytes
 * of UB). Each call raises this block's flag by one and waits until the flags of the others
 * reach it, so the workspace serves any number of calls in a row. */
template <bool isAIVOnly = true>
__aicore__ inline void SyncAll(const GlobalTensor<int32_t> &gmWorkspace, const LocalTensor<int32_t> &ubWorkspace,
                               const int32_t usedCores = 0)
{
    npuemu::BlockContext &c = npuemu::ctx();
    if (!c.active) {
        npuemu::fault("AscendC::SyncAll(gmWorkspace, ubWorkspace) was called");
    }
    const uint32_t n = usedCores > 0 ? static_cast<uint32_t>(usedCores) : c.block_num;
    if (usedCores < 0 || n > c.block_num) {
        npuemu::fault("AscendC::SyncAll(gmWorkspace, ubWorkspace, usedCores %d): usedCores must be in 0..%u (the "
                      "launch's blockDim)",
                      usedCores, c.block_num);
    }
    if (c.block_idx >= n) {
        npuemu::fault("AscendC::SyncAll(gmWorkspace, ubWorkspace, usedCores %d) called by block %u, which is not one "
                      "of the %u synchronised blocks (0..%u): the others would never see its flag",
                      usedCores, c.block_idx, n, n - 1);
    }
    if (c.cores != 0 && n > c.cores) {
        npuemu::fault("AscendC::SyncAll: %u blocks on %u cores: the blocks that run first would wait for blocks "
                      "that can only start when they finish (on hardware the kernel hangs)",
                      n, c.cores);
    }
    if (static_cast<uint64_t>(ubWorkspace.GetSize()) * sizeof(int32_t) < static_cast<uint64_t>(c.block_num) * 32) {
        npuemu::fault("AscendC::SyncAll: ubWorkspace holds %u int32_t, it needs GetBlockNum() * 32 bytes (%u)",
                      ubWorkspace.GetSize(), c.block_num * 32);
    }
    const uint64_t need = static_cast<uint64_t>(n) * 32;
    uint8_t *base = npuemu::gm_translate(gmWorkspace.addr_, need, "SyncAll gmWorkspace accesses");
    int32_t *mine = reinterpret_cast<int32_t *>(base + static_cast<uint64_t>(c.block_idx) * 32);
    const int32_t target = __atomic_add_fetch(mine, 1, __ATOMIC_SEQ_CST);
    const uint64_t start = npuemu::monotonic_ns();
    for (uint32_t i = 0; i < n; ++i) {
        int32_t *other = reinterpret_cast<int32_t *>(base + static_cast<uint64_t>(i) * 32);
        uint32_t spins = 0;
        while (__atomic_load_n(other, __ATOMIC_SEQ_CST) < target) {
            if (++spins > 64) {
                sched_yield();
            }
            if (npuemu::monotonic_ns() - start > 60ull * 1000000000ull) {
                npuemu::fault("AscendC::SyncAll(gmWorkspace): block %u did not raise its flag within 60 s (its flag is "
                              "%d, this block waits for %d): it returned, failed, or waits elsewhere",
                              i, __atomic_load_n(other, __ATOMIC_SEQ_CST), target);
            }
        }
    }
}

} // namespace AscendC

#endif /* NPUEMU_KERNEL_SYNC_ALL_H */
