/* npu-emu Ascend C CPU headers: the launch contract between generated launch code
 * (`npu-emu ascendc-stub`), libascendcl.so and the kernel-side headers (kernel contract §2, §3).
 *
 * npuemu_kernel_launch (exported by libascendcl.so) enqueues a launch on a stream; at execution
 * the runtime calls the generated block function once per block on emulated AI-core threads, and
 * the block function calls npuemu::run_block, which sets up the thread's block context, runs the
 * kernel body and turns a kernel fault into the block's error message. The C part is also valid C. */
#ifndef NPUEMU_LAUNCH_H
#define NPUEMU_LAUNCH_H

#include "npuemu/regions.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueue a launch on `stream` (NULL = default stream of the current context). `args`
 * (args_size bytes) are copied at enqueue. Each non-null pointer argument must lie in a device
 * allocation of the stream's device; it becomes one region (the whole allocation containing it).
 * Returns an aclError (0 = ok); errors are recorded for aclGetRecentErrMsg, naming
 * aclrtlaunch_<kernel> and the argument. At execution the runtime runs block_dim blocks
 * (0 < block_dim <= 65535) in parallel on emulated AI-core threads; the task completes when all
 * blocks have returned. Any failed block fails the task: the stream's next synchronize returns
 * ACL_ERROR_RT_AICORE_EXCEPTION (507015) and the recorded message is the block's. */
uint32_t npuemu_kernel_launch(const char *kernel_name, uint32_t block_dim, void *stream,
                              npuemu_block_fn fn, const void *args, size_t args_size,
                              const npuemu_kernel_ptr_arg *ptr_args, size_t n_ptr_args);


#ifdef __cplusplus
}

#include <exception>
#include <utility>

#include "npuemu/context.h"
#include "npuemu/raw_access.h"

namespace npuemu {

/* Copy `msg` into err[errlen] (truncated, always NUL-terminated when errlen > 0). */
inline void copy_message(const char *msg, char *err, size_t errlen)
{
    if (err == nullptr || errlen == 0) {
        return;
    }
    size_t n = std::strlen(msg);
    if (n >= errlen) {
        n = errlen - 1;
    }
    std::memcpy(err, msg, n);
    err[n] = '\0';
}

/* Sets the thread's block context (regions, block index/number, kernel name, ...), runs `body`,
 * catches the kernel fault thrown by GlobalTensor/queue checks (and any other exception), writes
 * its message into info->err. Returns 0 or 1. The context is cleared again before returning. */
template <class F>
int run_block(const char *kernel, const npuemu_block_info *info, F &&body)
{
    BlockContext &c = ctx();
    const BlockContext saved = c;
    c = BlockContext();
    c.kernel = kernel;
    c.regions = info->regions;
    c.nregions = info->nregions;
    c.devmem = info->devmem;
    c.ndevmem = info->ndevmem;
    c.block_idx = info->block_idx;
    c.block_num = info->block_num;
    c.cores = info->cores;
    c.tiling_key = info->tiling_key;
    c.launch = info->launch;
    c.sync_all = info->sync_all;
    c.active = true;
    set_devmem_envelope(info->devmem, info->ndevmem);
    set_builtins(info->block_idx, info->block_num);
    char *err = info->err;
    const size_t errlen = info->errlen;
    int rc = 0;
#if !defined(__cpp_exceptions) && !defined(__EXCEPTIONS)
    std::forward<F>(body)(); /* -fno-exceptions: a fault stops the process (npuemu::fault) */
    (void)err;
    (void)errlen;
#else
    try {
        std::forward<F>(body)();
    } catch (const KernelFault &f) {
        copy_message(f.what(), err, errlen);
        rc = 1;
    } catch (const std::exception &e) {
        std::string m = fault_prefix() + "C++ exception escaped the kernel: " + e.what();
        copy_message(m.c_str(), err, errlen);
        rc = 1;
    } catch (...) {
        std::string m = fault_prefix() + "a C++ exception of unknown type escaped the kernel";
        copy_message(m.c_str(), err, errlen);
        rc = 1;
    }
#endif
    c = saved;
    set_builtins(saved.block_idx, saved.block_num);
    return rc;
}

/* The form without npuemu_block_info (tests, older generated code): no device ranges, no
 * SyncAll. */
template <class F>
int run_block(const char *kernel, const npuemu_gm_region *regions, size_t nregions, uint32_t block_idx,
              uint32_t block_num, char *err, size_t errlen, F &&body)
{
    npuemu_block_info info;
    std::memset(&info, 0, sizeof info);
    info.block_idx = block_idx;
    info.block_num = block_num;
    info.regions = regions;
    info.nregions = nregions;
    info.cores = block_num;
    info.err = err;
    info.errlen = errlen;
    return run_block(kernel, &info, std::forward<F>(body));
}

/* A pointer argument as the kernel sees it. In a checked translation unit (raw_access.h) a
 * canonical device address inside a buffer passed to the kernel becomes the address of the same
 * byte in this process's view of device memory, so kernel code can dereference it (each access
 * checked); otherwise the value is passed as it is. */
template <class T>
inline T kernel_pointer(T p)
{
#if defined(__NPUEMU_GM_CHECK__)
    const uint64_t a = reinterpret_cast<uint64_t>(p);
    const BlockContext &c = ctx();
    for (size_t i = 0; i < c.nregions; ++i) {
        const npuemu_gm_region &r = c.regions[i];
        if (a >= r.dev_addr && a - r.dev_addr <= r.size) {
            return reinterpret_cast<T>(static_cast<uint8_t *>(r.host) + (a - r.dev_addr));
        }
    }
#endif
    return p;
}

} // namespace npuemu

#endif /* __cplusplus */

#endif /* NPUEMU_LAUNCH_H */
