"""Complex tensors through torch_npu against CPU torch: the spectrum of torch.fft.rfft (a
COMPLEX64 tensor) through aclnnMul / aclnnAdd / aclnnSub / aclnnDiv (tensor, scalar and
in-place forms), aclnnNeg, aclnnAbs (the real magnitude), aclnnExp, aclnnReduceSum /
aclnnMean, aclnnInplaceCopy and aclnnCast (.to(torch.complex64) of a real tensor, the real
part of a complex one), the views .real / .imag made contiguous, conj().resolve_conj(),
angle (of complex and real tensors), torch.complex
(aclnnComplex), torch.polar (aclnnPolar), an FFT convolution irfft(rfft(a) * rfft(b)) against the direct circular convolution,
fft / ifft, and torch.stft (aclStft) with a window, hop, win_length < n_fft and centre
padding, and its magnitude. Prints PASS/FAIL per case and exits 1 when any case fails.
"""
import sys

import torch
import torch_npu  # noqa: F401

D = "npu"
FAILED = []
torch.manual_seed(0)


def as_real(t):
    return torch.view_as_real(t) if t.is_complex() else t


def chk(name, f, *args, rtol=1e-4, atol=1e-4):
    try:
        rc = f(*args)
        rn = f(*[a.to(D) for a in args])
        assert rn.dtype == rc.dtype, (rn.dtype, rc.dtype)
        assert rn.shape == rc.shape, (rn.shape, rc.shape)
        torch.testing.assert_close(as_real(rn.cpu()), as_real(rc), rtol=rtol, atol=atol)
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


x = torch.randn(4, 8)
z = torch.randn(4, 5)
r = torch.fft.rfft

chk("rfft", lambda a: r(a), x)
chk("mul", lambda a: r(a) * r(a), x)
chk("mul_real", lambda a, b: r(a) * b, x, z)
chk("mul_scalar", lambda a: r(a) * 2.5, x)
chk("add", lambda a: r(a) + r(a), x)
chk("add_alpha", lambda a: torch.add(r(a), r(a).conj().resolve_conj(), alpha=3), x)
chk("sub", lambda a, b: r(a) - r(b), x, x.flip(1))
chk("div", lambda a, b: r(a) / (r(b) + 1), x, x.flip(1))
chk("div_scalar", lambda a: r(a) / 4, x)


def inplace(a, b):
    y = r(a)
    y.mul_(r(b))
    y.add_(r(b), alpha=2)
    y.sub_(1.5)
    y.div_(r(b) + 3)
    return y


chk("inplace", inplace, x, x.flip(0))
chk("neg", lambda a: -r(a), x)
chk("abs", lambda a: r(a).abs(), x)
chk("exp", lambda a: torch.exp(r(a) / 4), x)
chk("sum", lambda a: r(a).sum(), x)
chk("sum_dim", lambda a: r(a).sum(dim=1), x)
chk("mean_dim", lambda a: r(a).mean(dim=0, keepdim=True), x)
chk("real", lambda a: r(a).real.contiguous(), x)
chk("imag", lambda a: r(a).imag.contiguous(), x)
chk("conj", lambda a: r(a).conj().resolve_conj(), x)
chk("to_complex", lambda a: a.to(torch.complex64), x)
chk("complex_clone", lambda a: r(a).clone(), x)
chk("angle", lambda a: r(a).angle(), x)
chk("angle_real", lambda a: a.angle(), x)
chk("torch_complex", lambda a, b: torch.complex(a, b), x, x.flip(1))
chk("polar", lambda a, b: torch.polar(a.abs(), b), x, x.flip(0))
chk("complex_mul_real_part", lambda a, b: (torch.complex(a, b) * torch.complex(b, a)).real.contiguous(), z, z.t().contiguous().t())
chk("irfft", lambda a: torch.fft.irfft(r(a), n=8), x)
chk("fft", lambda a: torch.fft.fft(a), x)
chk("ifft", lambda a: torch.fft.ifft(torch.fft.fft(a)), x)


def fft_conv():
    """irfft(rfft(a) * rfft(b)) on the NPU is the circular convolution of a and b."""
    name = "fft_conv"
    try:
        a, b = torch.randn(3, 16), torch.randn(3, 16)
        got = torch.fft.irfft(torch.fft.rfft(a.to(D)) * torch.fft.rfft(b.to(D)), n=16).cpu()
        want = torch.zeros(3, 16)
        for k in range(16):
            for j in range(16):
                want[:, k] += a[:, j] * b[:, (k - j) % 16]
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        print("PASS", name)
    except Exception as e:  # noqa: BLE001
        FAILED.append(name)
        print("FAIL", name, str(e).splitlines()[0][:300])


fft_conv()

sig = torch.randn(2, 64)
win = torch.hann_window(12)
chk(
    "stft",
    lambda s, w: torch.stft(s, 16, hop_length=4, win_length=12, window=w, return_complex=True),
    sig,
    win,
)
chk(
    "stft_abs",
    lambda s, w: torch.stft(s, 16, hop_length=5, window=w, return_complex=True).abs(),
    sig,
    torch.hann_window(16),
)
chk(
    "stft_nocenter_1d",
    lambda s: torch.stft(s, 8, hop_length=3, center=False, normalized=True, return_complex=True),
    sig[0],
)

print(f"complex_ops: {len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
