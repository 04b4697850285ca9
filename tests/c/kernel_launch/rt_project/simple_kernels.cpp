// Kernels in the simple style of CANN's runtime examples (kernel_func/*.cpp): raw __gm__
// pointers, the built-in block_idx / block_num, dcci after scalar writes, asm("trap"), launched
// through wrappers that hold the <<<>>> call. Written from the Ascend C reference.
#include "kernel_operator.h"

// Each block writes what it knows about itself into 8 slots.
extern "C" __global__ __aicore__ void who_am_i(__gm__ int64_t *out)
{
    __gm__ int64_t *slot = out + block_idx * 8;
    slot[0] = block_idx;
    slot[1] = block_num;
    slot[2] = get_block_idx();
    slot[3] = get_block_num();
    slot[4] = AscendC::GetBlockIdx();
    slot[5] = AscendC::GetBlockNum();
    slot[6] = get_subblockid();
    slot[7] = get_sys_cnt() >= 0 ? 1 : 0;
    dcci(slot, cache_line_t::ENTIRE_DATA_CACHE, dcci_dst_t::CACHELINE_OUT);
    dsb(mem_dsb_t::DSB_DDR);
    pipe_barrier(PIPE_ALL);
}

// x[i] += 1 for this block's element (the runtime examples' EasyOP).
extern "C" __global__ __aicore__ void bump(__gm__ uint32_t *x)
{
    x[block_idx] += 1;
}

// Writes 16 elements past the end of a buffer of n elements in the last block (aclrtMalloc
// rounds a size up to 32 bytes and adds 32: the first 8 still land in the allocation).
extern "C" __global__ __aicore__ void write_past_end(__gm__ float *x, uint32_t n)
{
    uint32_t per = n / block_num;
    uint32_t end = block_idx == block_num - 1 ? n + 16 : per * (block_idx + 1);
    for (uint32_t i = per * block_idx; i < end; i++) {
        x[i] = 1.0f;
    }
}

// The trap instruction stops the kernel (the runtime examples' ErrorOP).
extern "C" __global__ __aicore__ void stop_here()
{
    if (block_idx == 1) {
        asm("trap");
    }
}

// Two phases separated by SyncAll: every block publishes a value, then each block sums all.
extern "C" __global__ __aicore__ void two_phase(__gm__ int32_t *pub, __gm__ int32_t *sums)
{
    pub[block_idx] = (int32_t)(block_idx + 1) * 10;
    AscendC::SyncAll();
    int32_t s = 0;
    for (int64_t b = 0; b < block_num; b++) {
        s += pub[b];
    }
    sums[block_idx] = s;
}

// Prints through AscendC::printf from every block.
extern "C" __global__ __aicore__ void say(int value)
{
    AscendC::printf("block %d says %d\n", (int)block_idx, value);
}

void who_am_i_do(uint32_t blockDim, void *stream, int64_t *out) { who_am_i<<<blockDim, nullptr, stream>>>(out); }
void bump_do(uint32_t blockDim, void *stream, uint32_t *x) { bump<<<blockDim, nullptr, stream>>>(x); }
void write_past_end_do(uint32_t blockDim, void *stream, float *x, uint32_t n)
{
    write_past_end<<<blockDim, nullptr, stream>>>(x, n);
}
void stop_here_do(uint32_t blockDim, void *stream) { stop_here<<<blockDim, nullptr, stream>>>(); }
void two_phase_do(uint32_t blockDim, void *stream, int32_t *pub, int32_t *sums)
{
    two_phase<<<blockDim, nullptr, stream>>>(pub, sums);
}
void say_do(uint32_t blockDim, void *stream, int value) { say<<<blockDim, nullptr, stream>>>(value); }
