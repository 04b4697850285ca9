"""Which aclnn functions npu-emu's libopapi.so (the install tree's) exports.

Tests of torch operators whose aclnn function is not built yet skip with the missing names
(torch_npu would fall back to the aclop path, which npu-emu does not model, and a failed
operator leaves torch_npu's task queue unusable for the rest of the process). When the
function appears in libopapi.so the case runs.
"""
import ctypes
import os

import pytest

_lib = ctypes.CDLL(os.path.join(os.environ["ASCEND_HOME_PATH"], "lib64", "libopapi.so"))


def missing(*names):
    """The names (and their GetWorkspaceSize halves) libopapi.so does not export."""
    out = []
    for n in names:
        for sym in (n, n + "GetWorkspaceSize"):
            if not hasattr(_lib, sym):
                out.append(sym)
    return out


def require(*names):
    """Skip the calling test unless libopapi.so has every aclnn function in `names`."""
    gone = missing(*names)
    if gone:
        pytest.skip("libopapi.so lacks " + ", ".join(gone))
