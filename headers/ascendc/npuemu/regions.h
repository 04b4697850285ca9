/* npu-emu Ascend C CPU headers: the C ABI types shared by generated launch code, libascendcl's
 * npuemu_kernel_launch and the kernel-side headers (kernel contract §2). Also valid C. */
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

/* Runs one block on an emulated AI-core thread. 0 = ok. On a kernel fault writes a
 * NUL-terminated message (already naming kernel, block and address) into err[errlen] and
 * returns non-zero. */
typedef int (*npuemu_block_fn)(const void *args, const npuemu_gm_region *regions, size_t nregions,
                               uint32_t block_idx, uint32_t block_num, char *err, size_t errlen);

/* A pointer argument of a launch, by parameter name. */
typedef struct npuemu_kernel_ptr_arg {
    const char *name;
    const void *value;
} npuemu_kernel_ptr_arg;

#ifdef __cplusplus
}
#endif

#endif /* NPUEMU_REGIONS_H */
