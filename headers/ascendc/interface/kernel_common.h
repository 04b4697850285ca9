/* npu-emu Ascend C CPU headers: positions, pipes, events and synchronisation, block index,
 * constants.
 *
 * The CPU runs each block's instructions in program order, so every pipe barrier and every
 * set/wait flag between pipes is already satisfied: they are no-ops with the real signatures. */
#ifndef NPUEMU_KERNEL_COMMON_H
#define NPUEMU_KERNEL_COMMON_H

#include <cstdint>

#include "interface/kernel_macros.h"
#include "npuemu/context.h"

/* Hardware pipes (a global enum of the kernel compiler). */
enum pipe_t {
    PIPE_S = 0,
    PIPE_V,
    PIPE_M,
    PIPE_MTE1,
    PIPE_MTE2,
    PIPE_MTE3,
    PIPE_ALL,
    PIPE_MTE4 = 7,
    PIPE_MTE5 = 8,
    PIPE_V2 = 9,
    PIPE_FIX = 10,
};

typedef int32_t event_t;

constexpr event_t EVENT_ID0 = 0, EVENT_ID1 = 1, EVENT_ID2 = 2, EVENT_ID3 = 3, EVENT_ID4 = 4, EVENT_ID5 = 5,
                  EVENT_ID6 = 6, EVENT_ID7 = 7;

/* The system workspace of the block (see AscendC::SetSysWorkspace). */
__aicore__ inline GM_ADDR GetSysWorkSpacePtr() { return static_cast<GM_ADDR>(npuemu::ctx().sys_workspace); }

/* Program-order execution makes barriers and flags between pipes no-ops. */
inline void pipe_barrier(pipe_t) {}
inline void set_flag(pipe_t, pipe_t, event_t) {}
inline void wait_flag(pipe_t, pipe_t, event_t) {}

/* The kernel compiler's cache and barrier intrinsics. The emulated memory is coherent (a scalar
 * write to global memory is visible to every block and every data copy at once) and a block runs
 * in program order, so they have nothing to do. */
enum cache_line_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum dcci_dst_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
enum mem_dsb_t { DSB_ALL = 0, DSB_DDR, DSB_UB, DSB_SEQ };
template <class T>
inline void dcci(__gm__ T *addr, cache_line_t entire)
{
    (void)addr;
    (void)entire;
}
template <class T>
inline void dcci(__gm__ T *addr, cache_line_t entire, dcci_dst_t dst)
{
    (void)addr;
    (void)entire;
    (void)dst;
}
template <class T>
inline void dci(__gm__ T *addr)
{
    (void)addr;
}
inline void dci() {}
inline void dsb(mem_dsb_t) {}
inline void barrier(pipe_t) {}
inline void preload(const void *, int64_t = 0) {}
inline void icache_preload(int64_t) {}

/* The kernel compiler's system-register intrinsics. */
inline int64_t get_block_idx() { return npuemu::ctx().block_idx; }
inline int64_t get_block_num() { return npuemu::ctx().block_num; }
inline int64_t get_subblockid() { return 0; }
inline int64_t get_subblockdim() { return 1; }
/* The system counter (50 MHz on Ascend910B): the time since the process started. */
inline int64_t get_sys_cnt()
{
    return static_cast<int64_t>(npuemu::monotonic_ns() / 20);
}
/* `trap()` / `asm("trap")`: the kernel stops with an AI-core exception. */
[[noreturn]] inline void trap()
{
    npuemu::fault("the kernel executed a trap instruction");
}

namespace AscendC {

enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    C2PIPE2GM,
    C2PIPE2LOCAL,
    MAX,
};
using QuePosition = TPosition;

enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MTE1_FIX,
    FIX_MTE1,
    FIX_FIX,
    MAX,
};

constexpr int32_t ONE_BLK_SIZE = 32;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_BLK_STRIDE = 1;
constexpr uint8_t DEFAULT_REPEAT_STRIDE = 8;
constexpr int32_t MAX_REPEAT_TIMES = 255;
constexpr uint32_t TOTAL_UB_SIZE = npuemu::UB_SIZE;
constexpr int32_t BLOCK_CUBE = 16;
constexpr int32_t DEFAULT_C0_SIZE = 32;
constexpr int32_t CUBE_MAX_SIZE = 256;
constexpr int32_t DEFAULT_BLOCK_SIZE = 256;

/* Index of this block in [0, GetBlockNum()). */
__aicore__ inline int64_t GetBlockIdx()
{
    const npuemu::BlockContext &c = npuemu::ctx();
    if (!c.active) {
        npuemu::fault("AscendC::GetBlockIdx() was called");
    }
    return c.block_idx;
}

/* Number of blocks of the launch (blockDim). */
__aicore__ inline int64_t GetBlockNum()
{
    const npuemu::BlockContext &c = npuemu::ctx();
    if (!c.active) {
        npuemu::fault("AscendC::GetBlockNum() was called");
    }
    return c.block_num;
}

/* One sub-block per block (a block emulates a whole AI core). */
__aicore__ inline int64_t GetSubBlockIdx() { return 0; }
__aicore__ inline int64_t GetSubBlockNum() { return 1; }
__aicore__ inline int64_t GetTaskRation() { return 1; }
__aicore__ inline int64_t GetTaskRatio() { return 1; }

/* Bytes of one data block / of the Unified Buffer. */
__aicore__ inline constexpr int64_t GetDataBlockSizeInBytes() { return 32; }
__aicore__ inline constexpr int64_t GetUBSizeInBytes() { return npuemu::UB_SIZE; }
__aicore__ inline int64_t GetRuntimeUBSize() { return npuemu::UB_SIZE; }
__aicore__ inline int64_t GetArchVersion() { return __NPU_ARCH__ / 10; }
/* Cycles of the system counter (GetSystemCycle): see get_sys_cnt. */
__aicore__ inline int64_t GetSystemCycle() { return ::get_sys_cnt(); }
/* InitSocState: resets the core's registers (atomic mode, mask) to their defaults. */
__aicore__ inline void InitSocState()
{
    npuemu::BlockContext &c = npuemu::ctx();
    c.atomic_op = 0;
    c.mask_counter = false;
    c.mask_hi = c.mask_lo = ~0ull;
}

/* The system workspace (GetSysWorkSpacePtr): the workspace argument of the launch (a kernel
 * parameter named `workspace`), or what SetSysWorkspace set. The high-level APIs of npu-emu use
 * none of it. */
__aicore__ inline void SetSysWorkspace(GM_ADDR workspace) { npuemu::ctx().sys_workspace = workspace; }
using ::GetSysWorkSpacePtr;
/* The user's part of a workspace: npu-emu reserves no system part, the whole buffer is the
 * user's (as with a system workspace size of 0). */
__aicore__ inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) { return workspace; }

template <pipe_t pipe = PIPE_ALL>
__aicore__ inline void PipeBarrier()
{
}

template <HardEvent event>
__aicore__ inline void SetFlag(int32_t eventID)
{
    (void)eventID;
}

template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t eventID)
{
    (void)eventID;
}

} // namespace AscendC

#endif /* NPUEMU_KERNEL_COMMON_H */
