//! Why torch_npu called an aclop operator npu-emu does not have.
//!
//! npu-emu computes operators with aclnn (`libopapi.so`); it models only a few aclop
//! operators. torch_npu's op-plugin calls `aclopCompileAndExecute` for a torch operator only
//! when `libopapi.so` lacks that operator's aclnn function (`DO_COMPATIBILITY`), and says so
//! in a warning through `aclAppLog` when `ASCEND_GLOBAL_LOG_LEVEL` is 2 or lower:
//! `"aclnnX or aclnnXGetWorkspaceSize not in libopapi.so, or libopapi.so not found. Will
//! call acl_op::y(...)"`. [`note_log`] keeps the latest of those; [`explain`] turns them
//! into the end of the "op type T is not supported" message, naming the aclnn function and
//! the torch operator when torch_npu told us, and saying how to have it told otherwise. An
//! aclop call that runs [`forget`]s them: the fallback was served, so a later unsupported
//! operator is not blamed on it.

use crate::globals::FALLBACKS_SEEN as SEEN;

/// How many fallbacks [`SEEN`] keeps.
const KEEP: usize = 32;

/// Look at an `aclAppLog` line for op-plugin's fallback warning.
pub fn note_log(msg: &str) {
    let Some(i) = msg.find("GetWorkspaceSize not in ") else {
        return;
    };
    let Some(j) = msg.find("Will call ") else {
        return;
    };
    // "... aclnnX or aclnnXGetWorkspaceSize not in ...": the text right before
    // "GetWorkspaceSize" is the function's name.
    let head = &msg[..i];
    let Some(aclnn) = head
        .split_whitespace()
        .next_back()
        .filter(|w| w.starts_with("aclnn"))
    else {
        return;
    };
    let call = msg[j + "Will call ".len()..].trim().to_string();
    let mut s = SEEN.lock();
    s.retain(|(a, _)| a != aclnn);
    if s.len() == KEEP {
        s.pop_front();
    }
    s.push_back((aclnn.to_string(), call));
}

/// An aclop call ran: the fallbacks noted before it were served (a later unsupported
/// operator is not theirs).
pub fn forget() {
    let mut s = SEEN.lock();
    if !s.is_empty() {
        s.clear();
    }
}

/// "Triu" -> "triu", "StatelessDropOutGenMask" -> "stateless_drop_out_gen_mask".
fn snake(op_type: &str) -> String {
    let mut out = String::new();
    for (i, ch) in op_type.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

/// The sentence that ends "op type `op_type` is not supported".
pub fn explain(op_type: &str) -> String {
    let s = SEEN.lock();
    let want = [op_type.to_ascii_lowercase(), snake(op_type)];
    // The fallback whose acl_op call names this op type, else the latest one.
    let hit = s
        .iter()
        .rev()
        .find(|(a, call)| {
            let c = call.to_ascii_lowercase();
            want.iter().any(|w| c.contains(&format!("::{w}")))
                || a.to_ascii_lowercase() == format!("aclnn{}", want[0])
        })
        .or(s.back());
    match hit {
        Some((aclnn, call)) => format!(
            "torch_npu called it because libopapi.so has no {aclnn} (nor {aclnn}GetWorkspaceSize) for the torch operator; it fell back to {call}. \
             npu-emu computes operators with aclnn: the torch operator needs {aclnn} in libopapi.so"
        ),
        None => "torch_npu calls an aclop operator when libopapi.so lacks the torch operator's aclnn function, \
                 and for the few APIs op-plugin implements only with aclop (npu-emu computes operators with aclnn); \
                 run with ASCEND_GLOBAL_LOG_LEVEL=2 to have torch_npu name the aclnn function and the torch operator here"
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fallback_warning_names_the_function_and_the_call() {
        note_log("[histc:54][HistcKernelNpuOpApi.cpp] [PTA]:aclnnHistc or aclnnHistcGetWorkspaceSize not in libopapi.so, or libopapi.so not found. Will call acl_op::histc(self, bins, min_arg, max_arg)");
        let e = explain("Histogram");
        assert!(e.contains("no aclnnHistc"), "{e}");
        assert!(
            e.contains("acl_op::histc(self, bins, min_arg, max_arg)"),
            "{e}"
        );
        note_log("[triu:1][x.cpp] [PTA]:aclnnTriu or aclnnTriuGetWorkspaceSize not in libopapi.so, or libopapi.so not found. Will call acl_op::triu(self, diagonal)");
        assert!(explain("Histogram").contains("aclnnTriu")); // the latest when none matches by name
        assert!(explain("Triu").contains("acl_op::triu"));
        note_log("an unrelated line");
        assert!(explain("Triu").contains("aclnnTriu"));
    }
}
