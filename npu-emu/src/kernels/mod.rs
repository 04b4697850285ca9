//! Kernels: what an operator computes once the C side (`libascendcl/src/api/op.rs`) has
//! matched its descriptors and attributes, how it runs on a stream, and how a compiled Ascend C
//! kernel's launch runs.
//!
//! Where things live (a new element-wise operator is a new file here; data-format
//! conversions are [`crate::formats`]):
//! - this file: [`enqueue_unary`], one input and one output device range run on a stream.
//! - [`cast`]: the data type conversion of the "Cast" operator (`aclopCast`).
//! - [`launch`]: one launch of a compiled Ascend C kernel, run block by block on a device's
//!   AI cores ([`crate::aicore`]).
//! - [`random`]: the DSA engine's random numbers (`aclrtRandomNumAsync`).

pub mod cast;
pub mod launch;
pub mod random;

use crate::codes::ACL_ERROR_INTERNAL_ERROR;
use crate::memory::Space;
use crate::stream::Stream;
use crate::{Error, Result};
use std::sync::Arc;

/// A device range an operator reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub addr: u64,
    pub len: u64,
}

/// Enqueue `f(input, output)` on `stream`, in order with the stream's other tasks. Both
/// ranges are checked now (live device allocations of this process, no overlap: operators
/// do not run in place) and again when the stream runs the task. Nothing is enqueued when
/// the output is empty. Errors on the stream are reported as "`api` `op` (run on the
/// stream): …"; an error of `f` itself is `ACL_ERROR_INTERNAL_ERROR`.
pub fn enqueue_unary<S>(
    space: &Arc<S>,
    stream: &Stream,
    api: &'static str,
    op: &'static str,
    input: Operand,
    output: Operand,
    f: impl FnOnce(&[u8], &mut [u8]) -> std::result::Result<(), String> + Send + 'static,
) -> Result<()>
where
    S: Space + Send + Sync + 'static,
{
    if output.len == 0 {
        return Ok(());
    }
    let node = space.node();
    node.check(input.addr, input.len, "inputs[0]")?;
    node.check(output.addr, output.len, "outputs[0]")?;
    if input.addr < output.addr + output.len && output.addr < input.addr + input.len {
        return Err(Error::invalid(format!(
            "op type \"{op}\": the output range {:#x}..+{} overlaps the input range \
             {:#x}..+{}: {op} does not run in place",
            output.addr, output.len, input.addr, input.len
        )));
    }
    let space = space.clone();
    stream.enqueue(Box::new(move || {
        let ctx =
            |e: Error| Error::new(e.code, format!("{api} {op} (run on the stream): {}", e.msg));
        let node = space.node();
        let s = node
            .check(input.addr, input.len, "inputs[0]")
            .map_err(ctx)?;
        let d = node
            .check(output.addr, output.len, "outputs[0]")
            .map_err(ctx)?;
        // SAFETY: both ranges were just checked to lie in live allocations and do not
        // overlap (checked at enqueue; allocations do not move).
        let (s, d) = unsafe {
            (
                std::slice::from_raw_parts(s as *const u8, input.len as usize),
                std::slice::from_raw_parts_mut(d, output.len as usize),
            )
        };
        f(s, d).map_err(|e| {
            Error::new(
                ACL_ERROR_INTERNAL_ERROR,
                format!("{api} {op} (run on the stream): {e}"),
            )
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::testing::TestSpace;

    #[test]
    fn unary_operands_are_checked_and_run_on_the_stream() {
        let sp = TestSpace::new("kernels-unary", 1);
        let a = sp.alloc(0, 64);
        sp.write(a, &[3u8; 64]);
        let s = Stream::new("kernels-test").unwrap();
        let (input, output) = (
            Operand { addr: a, len: 32 },
            Operand {
                addr: a + 32,
                len: 32,
            },
        );
        enqueue_unary(&sp, &s, "api", "Twice", input, output, |i, o| {
            o.iter_mut().zip(i).for_each(|(o, i)| *o = i * 2);
            Ok(())
        })
        .unwrap();
        s.synchronize(None).unwrap();
        assert_eq!(sp.read(a + 32, 32), vec![6u8; 32]);

        let overlapping = Operand {
            addr: a + 16,
            len: 32,
        };
        let e =
            enqueue_unary(&sp, &s, "api", "Twice", input, overlapping, |_, _| Ok(())).unwrap_err();
        assert!(e.msg.contains("does not run in place"), "{}", e.msg);
        let past = Operand {
            addr: a + 48,
            len: 32,
        };
        let e = enqueue_unary(&sp, &s, "api", "Twice", input, past, |_, _| Ok(())).unwrap_err();
        assert!(e.msg.contains("outputs[0]"), "{}", e.msg);

        enqueue_unary(&sp, &s, "api", "Fails", input, output, |_, _| {
            Err("no".into())
        })
        .unwrap();
        let e = s.synchronize(None).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_INTERNAL_ERROR);
        assert_eq!(e.msg, "api Fails (run on the stream): no");
    }
}
