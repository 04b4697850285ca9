/* npu-emu Ascend C CPU headers: the C ABI types shared by generated launch code, libascendcl's
 * npuemu_kernel_launch / aclrtLaunchKernel and the kernel-side headers (kernel contract §2).
 * Also valid C. */
#ifndef NPUEMU_REGIONS_H
#define NPUEMU_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One buffer handed to the kernel. */
typedef struct npuemu_gm_region {
    uint64_t dev_addr; /* canonical device address of the start of the allocation */
    uint64_t size;     /* bytes of the allocation */
    void *host;        /* read-write alias of dev_addr in this process */
    const char *name;  /* the kernel parameter's name, e.g. "x" */
} npuemu_gm_region;

/* The whole HBM of one device: its canonical range and this process's read-write alias of it.
 * Kernel code sees its pointer arguments as alias addresses (the canonical range has no access
 * rights); an access through a __gm__ pointer that lands in an alias range but outside every
 * region is an out-of-bounds access of the kernel. */
typedef struct npuemu_mem_range {
    uint64_t dev_addr; /* canonical address of byte 0 */
    uint64_t size;     /* bytes */
    void *host;        /* alias of byte 0 */
} npuemu_mem_range;

/* Everything a block needs besides the kernel's arguments. */
typedef struct npuemu_block_info {
    uint32_t block_idx;
    uint32_t block_num;
    const npuemu_gm_region *regions;
    size_t nregions;
    const npuemu_mem_range *devmem; /* may be NULL (CPU-debug path: GM is host memory) */
    size_t ndevmem;
    uint64_t tiling_key;            /* TILING_KEY_IS: the key of the launched entry (0 by default) */
    uint32_t cores;                 /* blocks that can run at once (SyncAll needs block_num <= cores) */
    uint32_t reserved;
    void *launch;                   /* passed back to sync_all */
    /* SyncAll: returns 0 once every block of the launch has arrived; otherwise writes why it
     * cannot (a block failed or returned without arriving) into err and returns non-zero. */
    int (*sync_all)(void *launch, uint32_t block_idx, char *err, size_t errlen);
    char *err;                      /* the block's failure message (NUL-terminated) */
    size_t errlen;
} npuemu_block_info;

/* Runs one block on an emulated AI-core thread. 0 = ok. On a kernel fault writes a
 * NUL-terminated message (already naming kernel, block and address) into info->err and
 * returns non-zero. */
typedef int (*npuemu_block_fn)(const void *args, const npuemu_block_info *info);

/* A pointer argument of a launch, by parameter name. */
typedef struct npuemu_kernel_ptr_arg {
    const char *name;
    const void *value;
} npuemu_kernel_ptr_arg;

#ifdef __cplusplus
}
#endif

#endif /* NPUEMU_REGIONS_H */
