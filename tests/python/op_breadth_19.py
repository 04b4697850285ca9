"""The torch operations that reach the aclnn operators of `ops/math19.rs`, `ops/convert19.rs`
and `ops/cv19.rs` through torch_npu: torch._chunk_cat (-> aclnnChunkCat for contiguous
float32 / float16 / bfloat16 inputs split along dimension 0, including the out= form that
widens float16 to float32), each against CPU torch. The other operators of those files are
reached by torch_npu 2.9 only on Ascend950 (IoU, CIoU, ConfusionTranspose) or not at all.
Prints PASS/FAIL per case and exits 1 when any case fails.
"""
import sys

import torch
import torch_npu  # noqa: F401

D = "npu"
FAILED = []
torch.manual_seed(0)


def chk(name, f, *args, rtol=1e-4, atol=1e-5):
    try:
        rc = f(*[[t.clone() for t in a] if isinstance(a, list) else a for a in args])
        rn = f(*[[t.to(D) for t in a] if isinstance(a, list) else a for a in args])
        assert rn.device.type == D, f"result on {rn.device}"
        assert rn.dtype == rc.dtype, f"dtype {rn.dtype}, expected {rc.dtype}"
        torch.testing.assert_close(rn.cpu(), rc, rtol=rtol, atol=atol, equal_nan=True)
        print("PASS", name)
    except Exception as e:
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


ts = [torch.randn(5, 2), torch.randn(2, 3), torch.randn(7)]
chk("chunk_cat", lambda l: torch._chunk_cat(l, 0, 3), ts)
chk("chunk_cat_half", lambda l: torch._chunk_cat(l, 0, 2), [t.half() for t in ts])
chk("chunk_cat_bf16", lambda l: torch._chunk_cat(l, 0, 4), [t.bfloat16() for t in ts])
chk("chunk_cat_3d", lambda l: torch._chunk_cat(l, 0, 2), [torch.randn(3, 2, 2), torch.randn(4, 1, 3)])
chk("chunk_cat_more_chunks", lambda l: torch._chunk_cat(l, 0, 6), [torch.randn(2, 3), torch.randn(1, 1)])


def chunk_cat_out(l, dt):
    out = torch.empty(0, dtype=dt, device=l[0].device)
    return torch._chunk_cat(l, 0, 3, out=out)


chk("chunk_cat_out_widen", lambda l: chunk_cat_out(l, torch.float32), [t.half() for t in ts])
chk("chunk_cat_dim1_fallback", lambda l: torch._chunk_cat(l, 1, 2), [torch.randn(2, 5), torch.randn(2, 3)])

print(f"op_breadth_19: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
