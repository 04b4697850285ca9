"""torch.conv_tbc through torch_npu (aclnnConvTbc, and aclnnConvTbcBackward for its gradient)
against CPU torch, float32, with and without padding. Prints PASS/FAIL per case and exits 1
when any case fails."""
import sys

import torch
import torch_npu  # noqa: F401

FAILED = []
torch.manual_seed(0)
for pad in (0, 1, 2):
    name = f"conv_tbc pad {pad}"
    try:
        x, w, b = torch.randn(7, 3, 4), torch.randn(3, 4, 5), torch.randn(5)
        cpu = [t.clone().requires_grad_(True) for t in (x, w, b)]
        npu = [t.npu().requires_grad_(True) for t in (x, w, b)]
        a = torch.conv_tbc(*cpu, pad)
        o = torch.conv_tbc(*npu, pad)
        torch.testing.assert_close(o.detach().cpu(), a.detach(), rtol=1e-4, atol=1e-5)
        g = torch.randn(a.shape)
        (a * g).sum().backward()
        (o * g.npu()).sum().backward()
        for p, q in zip(cpu, npu):
            torch.testing.assert_close(q.grad.cpu(), p.grad, rtol=1e-4, atol=1e-5)
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, (str(e).splitlines() or [""])[0][:300])
print(f"conv_tbc: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
