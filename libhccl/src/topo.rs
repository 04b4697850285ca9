//! Where the ranks of a communicator are: which server each rank is on, and which of a
//! server's ranks handles which share ("lane") of an operation's data when servers talk.
//!
//! Ranks of one server reach each other's device memory directly; ranks of different
//! servers only exchange messages. An operation's data is cut into `lanes()` lanes (the
//! largest rank count of any server); lane `j` of server `s` is handled by the server's
//! rank `j mod (ranks on s)`, so every rank of a full server handles one lane and a smaller
//! server's ranks handle several (3 + 1 ranks: the lone rank handles all three lanes).

/// The servers of a communicator and this rank's place in them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topo {
    pub rank: u32,
    pub n: u32,
    /// Server of each rank (0..servers, numbered in order of their lowest rank).
    pub server_of: Vec<u32>,
    /// Ranks of each server, ascending.
    pub servers: Vec<Vec<u32>>,
    /// Index of each rank among the ranks of its server.
    pub local_index: Vec<u32>,
}

impl Topo {
    /// Every rank on one server.
    pub fn single(rank: u32, n: u32) -> Topo {
        Topo::from_keys(rank, &vec![0u32; n as usize])
    }

    /// From any per-rank server key (equal keys = same server).
    pub fn from_keys<K: PartialEq>(rank: u32, keys: &[K]) -> Topo {
        let n = keys.len() as u32;
        let mut server_of = vec![0u32; keys.len()];
        let mut firsts: Vec<usize> = Vec::new();
        for (r, k) in keys.iter().enumerate() {
            match firsts.iter().position(|&f| keys[f] == *k) {
                Some(s) => server_of[r] = s as u32,
                None => {
                    server_of[r] = firsts.len() as u32;
                    firsts.push(r);
                }
            }
        }
        let mut servers: Vec<Vec<u32>> = vec![Vec::new(); firsts.len()];
        let mut local_index = vec![0u32; keys.len()];
        for r in 0..n {
            let s = server_of[r as usize] as usize;
            local_index[r as usize] = servers[s].len() as u32;
            servers[s].push(r);
        }
        Topo {
            rank,
            n,
            server_of,
            servers,
            local_index,
        }
    }

    pub fn my_server(&self) -> u32 {
        self.server_of[self.rank as usize]
    }

    /// Ranks on this rank's server (itself included).
    pub fn local(&self) -> &[u32] {
        &self.servers[self.my_server() as usize]
    }

    pub fn same_server(&self, a: u32, b: u32) -> bool {
        self.server_of[a as usize] == self.server_of[b as usize]
    }

    pub fn single_server(&self) -> bool {
        self.servers.len() == 1
    }

    /// How many lanes the data of a cross-server operation is cut into.
    pub fn lanes(&self) -> u32 {
        self.servers
            .iter()
            .map(|s| s.len() as u32)
            .max()
            .unwrap_or(1)
    }

    /// The rank of server `s` that handles lane (or local index) `j`.
    pub fn handler(&self, s: u32, j: u32) -> u32 {
        let l = &self.servers[s as usize];
        l[(j as usize) % l.len()]
    }

    /// Lanes this rank handles.
    pub fn my_lanes(&self) -> Vec<u32> {
        let s = self.my_server();
        (0..self.lanes())
            .filter(|&j| self.handler(s, j) == self.rank)
            .collect()
    }

    /// Ranks on other servers.
    pub fn remote(&self) -> Vec<u32> {
        (0..self.n)
            .filter(|&q| !self.same_server(q, self.rank))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uneven_servers_and_lanes() {
        // 3 + 1: ranks 0, 1, 2 on server "a", rank 3 on "b".
        let t = Topo::from_keys(3, &["a", "a", "a", "b"]);
        assert_eq!(t.servers, vec![vec![0, 1, 2], vec![3]]);
        assert_eq!(t.lanes(), 3);
        assert_eq!(t.my_lanes(), vec![0, 1, 2]);
        assert_eq!(t.handler(0, 2), 2);
        assert_eq!(t.remote(), vec![0, 1, 2]);
        let t = Topo::from_keys(1, &["a", "a", "a", "b"]);
        assert_eq!(t.my_lanes(), vec![1]);
        assert_eq!(t.local(), &[0, 1, 2]);
        // Interleaved keys keep ranks ascending per server.
        let t = Topo::from_keys(0, &[5, 7, 5, 7]);
        assert_eq!(t.servers, vec![vec![0, 2], vec![1, 3]]);
        assert_eq!(t.local_index, vec![0, 0, 1, 1]);
        assert!(Topo::single(0, 4).single_server());
    }
}
