//! The causal 1-D convolutions of ops-transformer's `attention/`: `aclnn_fused_causal_conv1d.h`
//! (`torch_npu.npu_fused_causal_conv1d`, the vLLM/Mamba convolution with its state cache),
//! `aclnn_masked_causal_conv1d.h` and `aclnn_masked_causal_conv1d_backward.h`
//! (`torch_npu.npu_masked_causal_conv1d` and its autograd).
//!
//! CANN's operator reference lists all three for Ascend 950PR/950DT only (Atlas A2/A3 ×), so
//! they are exported with CANN's prototypes and refused with ACLNN_ERR_PARAM_INVALID naming
//! the platform on the SoCs npu-emu emulates (see `mhc::ascend950_only`). torch_npu 2.9
//! passes aclnnFusedCausalConv1d more arguments than the published prototype (the APC
//! tensors of a newer revision); the refusal reads none of them.

use super::mhc::ascend950_only;
use std::ffi::c_void;

/// `aclnnFusedCausalConv1dGetWorkspaceSize(x, weight, convStates, queryStartLoc,
/// cacheIndices, initialStateMode, bias, numAcceptedTokens, activationMode, padSlotId,
/// runMode, residualConnection, y, ...)`.
#[no_mangle]
pub unsafe extern "C" fn aclnnFusedCausalConv1dGetWorkspaceSize(
    _x: *const c_void,
    _weight: *const c_void,
    _convStates: *mut c_void,
    _queryStartLoc: *const c_void,
    _cacheIndices: *const c_void,
    _initialStateMode: *const c_void,
    _bias: *const c_void,
    _numAcceptedTokens: *const c_void,
    _activationMode: i64,
    _padSlotId: i64,
    _runMode: i64,
    _residualConnection: i64,
    _y: *const c_void,
    _workspaceSize: *mut u64,
    _executor: *mut *mut c_void,
) -> i32 {
    ascend950_only(
        "aclnnFusedCausalConv1dGetWorkspaceSize",
        "aclnnFusedCausalConv1d",
    )
}

/// `aclnnMaskedCausalConv1dGetWorkspaceSize(x, weight, maskOptional, out, ...)`.
#[no_mangle]
pub unsafe extern "C" fn aclnnMaskedCausalConv1dGetWorkspaceSize(
    _x: *const c_void,
    _weight: *const c_void,
    _maskOptional: *const c_void,
    _out: *const c_void,
    _workspaceSize: *mut u64,
    _executor: *mut *mut c_void,
) -> i32 {
    ascend950_only(
        "aclnnMaskedCausalConv1dGetWorkspaceSize",
        "aclnnMaskedCausalConv1d",
    )
}

/// `aclnnMaskedCausalConv1dBackwardGetWorkspaceSize(gradY, x, weight, maskOptional,
/// gradXOut, gradWeightOut, ...)`.
#[no_mangle]
pub unsafe extern "C" fn aclnnMaskedCausalConv1dBackwardGetWorkspaceSize(
    _gradY: *const c_void,
    _x: *const c_void,
    _weight: *const c_void,
    _maskOptional: *const c_void,
    _gradXOut: *const c_void,
    _gradWeightOut: *const c_void,
    _workspaceSize: *mut u64,
    _executor: *mut *mut c_void,
) -> i32 {
    ascend950_only(
        "aclnnMaskedCausalConv1dBackwardGetWorkspaceSize",
        "aclnnMaskedCausalConv1dBackward",
    )
}

crate::phase2!(
    aclnnFusedCausalConv1d,
    aclnnMaskedCausalConv1d,
    aclnnMaskedCausalConv1dBackward
);
