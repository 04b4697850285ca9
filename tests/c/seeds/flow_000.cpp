// Seed document 000's RunDistributedFlow (samples/distributed_add/seed_000_run_distributed_flow.inc)
// with the declarations it assumes, for compile checks only (-fsyntax-only): with the
// compatibility layer ahead of the real headers it compiles; against the real headers alone it
// must fail on HCCL_SUM, as it does against CANN's.
#include "hccl/hccl.h"
#include "acl/acl.h"

#include <cstdint>

static HcclComm comm = nullptr;
static void *x_dev = nullptr;
static void *y_dev = nullptr;
static void *z_dev = nullptr;
static uint64_t count = 0;
void RunAddCustom(aclrtStream stream, void *x, void *y, void *z);

#include "seed_000_run_distributed_flow.inc"
