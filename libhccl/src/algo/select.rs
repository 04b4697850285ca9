//! Which algorithm runs an operation (HCCL's selector/executor split): chosen from values
//! every rank agreed on at the call-time rendezvous, so all ranks choose alike.
//!
//! | where the ranks are | algorithm |
//! |---|---|
//! | one server, small operation ([`super::small::fits`]) | [`Algo::Small`]: inputs staged in the control block, one barrier |
//! | one server | [`Algo::Direct`]: each rank reads and writes its peers' buffers directly |
//! | several servers (one rank each included) | [`Algo::Hier`]: direct inside each server, ring / chain / direct messages between servers ([`super::hier`]) |

use super::Op;
use crate::comm::CommInner;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    Small,
    Direct,
    Hier,
}

pub fn select(c: &CommInner, op: &Op) -> Algo {
    if !c.topo.single_server() {
        Algo::Hier
    } else if super::small::fits(c, op) {
        Algo::Small
    } else {
        Algo::Direct
    }
}
