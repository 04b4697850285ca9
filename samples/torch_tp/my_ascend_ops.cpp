// The PyTorch side of my_ascend_ops_plugin: registers torch.ops.my_ascend_ops.custom_linear
// (and set_weight, which gives this process's slice of the layer's weight), implemented for
// NPU tensors by launching the custom_linear Ascend C kernel with ACLRT_LAUNCH_KERNEL on
// torch_npu's current stream. Built against torch_npu's headers (see the Makefile).
#include <ATen/ATen.h>
#include <torch/library.h>

#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "aclrtlaunch_custom_linear.h"

namespace {

// The weight slice [n, k] of this rank, on its NPU (set_weight).
at::Tensor &weight()
{
    static at::Tensor w;
    return w;
}

void set_weight(const at::Tensor &w)
{
    TORCH_CHECK(w.device().type() == c10::DeviceType::PrivateUse1, "set_weight: the weight must be an NPU tensor");
    TORCH_CHECK(w.dim() == 2 && w.scalar_type() == at::kFloat, "set_weight: expected a 2-D float32 weight [n, k]");
    TORCH_CHECK(w.size(0) % 8 == 0 && w.size(1) % 8 == 0, "set_weight: n and k must be multiples of 8");
    weight() = w.contiguous();
}

at::Tensor custom_linear(const at::Tensor &x)
{
    const at::Tensor &w = weight();
    TORCH_CHECK(w.defined(), "custom_linear: call my_ascend_ops_plugin.set_weight first");
    TORCH_CHECK(x.device() == w.device(), "custom_linear: x is on ", x.device(), ", the weight on ", w.device());
    TORCH_CHECK(x.dim() == 2 && x.scalar_type() == at::kFloat, "custom_linear: expected a 2-D float32 input");
    TORCH_CHECK(x.size(1) == w.size(1), "custom_linear: x has ", x.size(1), " features, the weight ", w.size(1));
    at::Tensor xc = x.contiguous();
    const uint32_t m = xc.size(0), k = xc.size(1), n = w.size(0);
    at::Tensor y = at::empty({(int64_t)m, (int64_t)n}, xc.options());
    // stream() first drains torch_npu's task queue, so x's copy to the NPU is enqueued before
    // the kernel on the same stream.
    aclrtStream stream = c10_npu::getCurrentNPUStream().stream();
    const uint32_t blockDim = m < 8 ? m : 8;
    uint32_t ret = ACLRT_LAUNCH_KERNEL(custom_linear)(blockDim, stream, xc.data_ptr(), w.data_ptr(), y.data_ptr(),
                                                      m, n, k);
    TORCH_CHECK(ret == 0, "custom_linear: ACLRT_LAUNCH_KERNEL failed with ", ret);
    return y;
}

} // namespace

TORCH_LIBRARY(my_ascend_ops, m)
{
    m.def("custom_linear(Tensor x) -> Tensor");
    m.def("set_weight(Tensor w) -> ()");
}

TORCH_LIBRARY_IMPL(my_ascend_ops, PrivateUse1, m)
{
    m.impl("custom_linear", &custom_linear);
    m.impl("set_weight", &set_weight);
}
