//! Names of the status codes the libraries return, for messages (abi.md §2.3). The values
//! themselves are declared where each library uses them; this is the one table of names, used
//! by `libhccl.so` and by the Python module (`import hccl`), which loads it at run time.

/// The C name of an `HcclResult` value, or `None` for a value HCCL does not define.
pub fn hccl_result_name(code: i32) -> Option<&'static str> {
    Some(match code {
        0 => "HCCL_SUCCESS",
        1 => "HCCL_E_PARA",
        2 => "HCCL_E_PTR",
        3 => "HCCL_E_MEMORY",
        4 => "HCCL_E_INTERNAL",
        5 => "HCCL_E_NOT_SUPPORT",
        6 => "HCCL_E_NOT_FOUND",
        7 => "HCCL_E_UNAVAIL",
        8 => "HCCL_E_SYSCALL",
        9 => "HCCL_E_TIMEOUT",
        10 => "HCCL_E_OPEN_FILE_FAILURE",
        11 => "HCCL_E_TCP_CONNECT",
        12 => "HCCL_E_ROCE_CONNECT",
        13 => "HCCL_E_TCP_TRANSFER",
        14 => "HCCL_E_ROCE_TRANSFER",
        15 => "HCCL_E_RUNTIME",
        16 => "HCCL_E_DRV",
        17 => "HCCL_E_PROFILING",
        18 => "HCCL_E_CCE",
        19 => "HCCL_E_NETWORK",
        20 => "HCCL_E_AGAIN",
        21 => "HCCL_E_REMOTE",
        22 => "HCCL_E_SUSPENDING",
        23 => "HCCL_E_OPRETRY_FAIL",
        24 => "HCCL_E_OOM",
        1041 => "HCCL_E_IN_STATUS",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_defined_and_undefined_codes() {
        assert_eq!(hccl_result_name(9), Some("HCCL_E_TIMEOUT"));
        assert_eq!(hccl_result_name(1041), Some("HCCL_E_IN_STATUS"));
        assert_eq!(hccl_result_name(25), None);
        assert_eq!(hccl_result_name(-1), None);
    }
}
