//! Who this process is (rank, size, device) and how the world communicator is built, read
//! from the environment of whatever launched it, and the exchange of HCCL's root info between
//! processes.
//!
//! | Launcher | Variables read | Communicator built by |
//! |---|---|---|
//! | `npu-emu run`, Ascend launchers | `RANK_TABLE_FILE`, `RANK_ID` (`RANK_SIZE` checked) | `HcclCommInitClusterInfo` |
//! | torchrun | `RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`, `TORCHELASTIC_*` | root info through torchrun's TCP store |
//! | by hand (torch-style) | `RANK`, `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT` | root info through a TCP rendezvous rank 0 serves on `MASTER_PORT` |
//! | OpenMPI | `OMPI_COMM_WORLD_RANK`, `_SIZE`, `_LOCAL_RANK`, `PMIX_NAMESPACE` | root info by `MASTER_ADDR`/`MASTER_PORT` if set, else mpi4py's `bcast` if mpi4py imports, else a file |
//! | MPICH / Intel MPI (Hydra) | `PMI_RANK`, `PMI_SIZE`, `MPI_LOCALRANKID` | as OpenMPI |
//! | Slurm (`srun`) | `SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`, `SLURM_JOB_ID`, `SLURM_STEP_ID` | as OpenMPI |
//! | nothing | — | a world of one rank |
//!
//! The device is the thread's current device if one is set (by `torch.npu.set_device` or
//! `aclrtSetDevice`), else `ASCEND_DEVICE_ID`, `DEVICE_ID`, the local rank, the rank, 0 — the
//! first that is set. The file rendezvous writes `hccl-py-rootinfo-<job>-<n>` in
//! `HCCL_PY_RENDEZVOUS_DIR` (default: the temporary directory), which must be shared by the
//! ranks' hosts. Every wait is bounded by `HCCL_CONNECT_TIMEOUT` (seconds, default 120).

use crate::errors::{Error, Result, HCCL_E_TIMEOUT};
use crate::ffi::ROOT_INFO_BYTES;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How the root info travels from rank 0 to the others.
#[derive(Clone, Debug)]
pub enum Exchange {
    /// torchrun's TCP store at `MASTER_ADDR:MASTER_PORT` (through `torch.distributed.TCPStore`).
    TorchStore {
        addr: String,
        port: u16,
        agent: bool,
        prefix: String,
    },
    /// Rank 0 serves the root info on `MASTER_PORT`; the others connect to `MASTER_ADDR`.
    Tcp { addr: String, port: u16 },
    /// `mpi4py.MPI.COMM_WORLD.bcast`, else a file named after the job.
    MpiOrFile { job: Option<String> },
}

/// How the world communicator is built.
#[derive(Clone, Debug)]
pub enum How {
    RankTable(PathBuf),
    RootInfo(Exchange),
    /// A world of one rank.
    Single,
}

/// What the environment says about this process.
#[derive(Clone, Debug)]
pub struct Launch {
    pub rank: u32,
    /// `None` with a rank table and no `RANK_SIZE`: HCCL knows it from the table.
    pub size: Option<u32>,
    pub local_rank: Option<u32>,
    /// `ASCEND_DEVICE_ID` or `DEVICE_ID`.
    pub device: Option<i32>,
    pub how: How,
    /// The launcher, in words, for messages ("torchrun (RANK/WORLD_SIZE)").
    pub source: &'static str,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn num(name: &str) -> Result<Option<u32>> {
    match var(name) {
        None => Ok(None),
        Some(v) => v.trim().parse::<u32>().map(Some).map_err(|_| {
            Error::value(format!(
                "hccl: environment variable {name}='{v}' is not a non-negative integer"
            ))
        }),
    }
}

/// `Some((rank, size))` when both are set; an error naming the missing one when one is.
fn pair(r: &str, s: &str, launcher: &str) -> Result<Option<(u32, u32)>> {
    match (num(r)?, num(s)?) {
        (None, None) => Ok(None),
        (Some(rank), Some(size)) => {
            if size == 0 || rank >= size {
                return Err(Error::value(format!(
                    "hccl: {r}={rank} and {s}={size} ({launcher}): the rank must be below the size"
                )));
            }
            Ok(Some((rank, size)))
        }
        (Some(_), None) => Err(Error::value(format!(
            "hccl: {r} is set but {s} is not; {launcher} sets both (the rank and the number of ranks)"
        ))),
        (None, Some(_)) => Err(Error::value(format!(
            "hccl: {s} is set but {r} is not; {launcher} sets both (the rank and the number of ranks)"
        ))),
    }
}

/// `MASTER_ADDR` and `MASTER_PORT`: both or neither (an error naming the missing one);
/// `required` makes "neither" an error too when there is more than one rank.
fn master(size: u32, launcher: &str, required: bool) -> Result<Option<(String, u16)>> {
    let a = var("MASTER_ADDR");
    let p = var("MASTER_PORT");
    match (a, p) {
        (Some(a), Some(p)) => {
            let port = p
                .trim()
                .parse::<u16>()
                .ok()
                .filter(|&x| x != 0)
                .ok_or_else(|| {
                    Error::value(format!(
                        "hccl: MASTER_PORT='{p}' is not a TCP port (1-65535)"
                    ))
                })?;
            Ok(Some((a.trim().to_string(), port)))
        }
        (None, None) if !required || size <= 1 => Ok(None),
        (a, _) => {
            let missing = match a {
                Some(_) => "MASTER_PORT is not set",
                None if var("MASTER_PORT").is_some() => "MASTER_ADDR is not set",
                None => "MASTER_ADDR and MASTER_PORT are not set",
            };
            Err(Error::value(format!(
                "hccl: {missing}; with {launcher} the ranks exchange HCCL's root info through \
                 rank 0 at MASTER_ADDR:MASTER_PORT (torchrun sets both)"
            )))
        }
    }
}

/// Read the launcher's variables.
pub fn detect() -> Result<Launch> {
    let device = match num("ASCEND_DEVICE_ID")? {
        Some(d) => Some(d as i32),
        None => num("DEVICE_ID")?.map(|d| d as i32),
    };
    // npu-emu run and the Ascend launchers: a rank table.
    if let Some(table) = var("RANK_TABLE_FILE") {
        let rank = num("RANK_ID")?.ok_or_else(|| {
            Error::value(format!(
                "hccl: RANK_TABLE_FILE={table} is set but RANK_ID is not; the launcher must set \
                 RANK_ID to this process's rank in the table"
            ))
        })?;
        let path = PathBuf::from(&table);
        if !path.is_file() {
            return Err(Error::value(format!(
                "hccl: RANK_TABLE_FILE={table} does not exist or is not a file"
            )));
        }
        let size = num("RANK_SIZE")?;
        if let Some(s) = size {
            if rank >= s {
                return Err(Error::value(format!(
                    "hccl: RANK_ID={rank} is not below RANK_SIZE={s}"
                )));
            }
        }
        return Ok(Launch {
            rank,
            size,
            local_rank: None,
            device,
            how: How::RankTable(path),
            source: "a rank table (RANK_TABLE_FILE/RANK_ID)",
        });
    }
    // torchrun, or torch-style variables set by hand.
    if let Some((rank, size)) = pair("RANK", "WORLD_SIZE", "torchrun")? {
        let local_rank = num("LOCAL_RANK")?;
        let how = match master(size, "RANK/WORLD_SIZE", true)? {
            None => How::Single,
            Some((addr, port)) => {
                if var("TORCHELASTIC_RUN_ID").is_some() {
                    let prefix = format!(
                        "hccl_py/{}/{}",
                        var("TORCHELASTIC_RUN_ID").unwrap_or_default(),
                        var("TORCHELASTIC_RESTART_COUNT").unwrap_or_else(|| "0".into())
                    );
                    How::RootInfo(Exchange::TorchStore {
                        addr,
                        port,
                        agent: var("TORCHELASTIC_USE_AGENT_STORE").as_deref() == Some("True"),
                        prefix,
                    })
                } else {
                    How::RootInfo(Exchange::Tcp { addr, port })
                }
            }
        };
        let how = if size == 1 { How::Single } else { how };
        return Ok(Launch {
            rank,
            size: Some(size),
            local_rank,
            device,
            how,
            source: if var("TORCHELASTIC_RUN_ID").is_some() {
                "torchrun (RANK/WORLD_SIZE)"
            } else {
                "RANK/WORLD_SIZE"
            },
        });
    }
    // MPI launchers and Slurm. OpenMPI first: mpirun inside a Slurm allocation inherits
    // SLURM_PROCID from the allocation, the same in every rank.
    let job_pmix = var("PMIX_NAMESPACE").or_else(|| var("OMPI_MCA_ess_base_jobid"));
    let slurm_job = var("SLURM_JOB_ID")
        .map(|j| format!("slurm{j}.{}", var("SLURM_STEP_ID").unwrap_or_default()));
    let mpi: [(&str, &str, &str, &'static str, Option<String>); 3] = [
        (
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK",
            "OpenMPI (OMPI_COMM_WORLD_RANK/SIZE)",
            job_pmix.clone(),
        ),
        (
            "PMI_RANK",
            "PMI_SIZE",
            "MPI_LOCALRANKID",
            "an MPI launcher (PMI_RANK/PMI_SIZE)",
            job_pmix.clone().or_else(|| var("PMI_JOBID")),
        ),
        (
            "SLURM_PROCID",
            "SLURM_NTASKS",
            "SLURM_LOCALID",
            "Slurm (SLURM_PROCID/SLURM_NTASKS)",
            slurm_job,
        ),
    ];
    for (r, s, l, source, job) in mpi {
        if let Some((rank, size)) = pair(r, s, source)? {
            let how = if size == 1 {
                How::Single
            } else {
                match master(size, source, false)? {
                    Some((addr, port)) => How::RootInfo(Exchange::Tcp { addr, port }),
                    None => How::RootInfo(Exchange::MpiOrFile { job }),
                }
            };
            return Ok(Launch {
                rank,
                size: Some(size),
                local_rank: num(l)?,
                device,
                how,
                source,
            });
        }
    }
    if let Some((rank, size)) = pair("RANK_ID", "RANK_SIZE", "the launcher")? {
        let how = if size == 1 {
            How::Single
        } else {
            match master(size, "RANK_ID/RANK_SIZE", false)? {
                Some((addr, port)) => How::RootInfo(Exchange::Tcp { addr, port }),
                None => {
                    return Err(Error::value(format!(
                        "hccl: RANK_ID={rank} and RANK_SIZE={size} are set but RANK_TABLE_FILE is \
                         not; set RANK_TABLE_FILE to the job's rank table (npu-emu run does), or \
                         MASTER_ADDR and MASTER_PORT so that the ranks can exchange HCCL's root \
                         info through rank 0"
                    )))
                }
            }
        };
        return Ok(Launch {
            rank,
            size: Some(size),
            local_rank: None,
            device,
            how,
            source: "RANK_ID/RANK_SIZE",
        });
    }
    Ok(Launch {
        rank: 0,
        size: Some(1),
        local_rank: None,
        device,
        how: How::Single,
        source: "no launcher (a single process)",
    })
}

/// `HCCL_CONNECT_TIMEOUT` (seconds; default 120), which bounds every rendezvous wait.
pub fn connect_timeout() -> Duration {
    let s = var("HCCL_CONNECT_TIMEOUT")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(120);
    Duration::from_secs(s)
}

fn timeout_err(what: String) -> Error {
    Error::hccl(
        HCCL_E_TIMEOUT,
        format!(
            "{what} (HCCL_CONNECT_TIMEOUT={} s)",
            connect_timeout().as_secs()
        ),
    )
}

/// Share rank 0's root info with every rank of the world; `gen` numbers the world
/// communicators of this job (a new one after `destroy()`).
pub fn share(
    py: Python<'_>,
    ex: &Exchange,
    rank: u32,
    size: u32,
    gen: u64,
    mine: Option<Vec<u8>>,
) -> Result<Vec<u8>> {
    match ex {
        Exchange::Tcp { addr, port } => {
            let (addr, port) = (addr.clone(), *port);
            py.detach(move || {
                if rank == 0 {
                    let ri = mine.unwrap_or_default();
                    tcp_serve(port, size, gen, &ri)?;
                    Ok(ri)
                } else {
                    tcp_fetch(&addr, port, rank, size, gen)
                }
            })
        }
        Exchange::TorchStore {
            addr,
            port,
            agent,
            prefix,
        } => torch_store(py, addr, *port, *agent, prefix, rank, size, gen, mine),
        Exchange::MpiOrFile { job } => {
            if let Some(r) = mpi4py(py, rank, size, mine.clone())? {
                return Ok(r);
            }
            let job = job.clone().ok_or_else(|| {
                Error::value(
                    "hccl: this MPI/Slurm job has no job id in its environment (PMIX_NAMESPACE, \
                     OMPI_MCA_ess_base_jobid, PMI_JOBID or SLURM_JOB_ID) and mpi4py is not \
                     installed, so the ranks cannot exchange HCCL's root info; install mpi4py or \
                     set MASTER_ADDR and MASTER_PORT",
                )
            })?;
            let path = rendezvous_file(&job, gen);
            py.detach(move || file_share(&path, rank, mine))
        }
    }
}

/// Rank 0 removes what the exchange left behind once the communicator exists.
pub fn cleanup(ex: &Exchange, rank: u32, gen: u64) {
    if let (Exchange::MpiOrFile { job: Some(job) }, 0) = (ex, rank) {
        let _ = std::fs::remove_file(rendezvous_file(job, gen));
    }
}

const MAGIC: &[u8; 8] = b"HCCLPY01";

/// Rank 0: serve the root info to `size - 1` ranks on `port`.
fn tcp_serve(port: u16, size: u32, gen: u64, ri: &[u8]) -> Result<()> {
    let l = TcpListener::bind(("0.0.0.0", port)).map_err(|e| {
        Error::hccl(
            11,
            format!(
                "hccl: rank 0 cannot listen on MASTER_PORT={port} to hand out HCCL's root info: \
                 {e} (is another job using the port?)"
            ),
        )
    })?;
    l.set_nonblocking(true)
        .map_err(|e| Error::Runtime(format!("hccl: listen socket: {e}")))?;
    let deadline = Instant::now() + connect_timeout();
    let mut served = vec![false; size as usize];
    served[0] = true;
    while served.iter().any(|s| !s) {
        match l.accept() {
            Ok((mut s, _)) => {
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let mut hello = [0u8; 24];
                if s.read_exact(&mut hello).is_err() || &hello[..8] != MAGIC {
                    continue; // not one of ours
                }
                let g = u64::from_le_bytes(hello[8..16].try_into().unwrap_or_default());
                let r = u32::from_le_bytes(hello[16..20].try_into().unwrap_or_default());
                let n = u32::from_le_bytes(hello[20..24].try_into().unwrap_or_default());
                if g != gen {
                    continue; // an earlier or later communicator's request: it retries
                }
                let ok = n == size && r < size && r != 0;
                let _ = s.write_all(&[if ok { 0 } else { 1 }]);
                if !ok {
                    return Err(Error::value(format!(
                        "hccl: a process that says it is rank {r} of {n} connected to rank 0 \
                         (of {size} ranks) at MASTER_PORT={port}: the ranks disagree on \
                         WORLD_SIZE or RANK"
                    )));
                }
                if s.write_all(ri).is_ok() {
                    served[r as usize] = true;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() > deadline {
                    let missing: Vec<String> = served
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| !**s)
                        .map(|(i, _)| i.to_string())
                        .collect();
                    return Err(timeout_err(format!(
                        "hccl: rank 0 waited for ranks [{}] to fetch HCCL's root info at \
                         MASTER_PORT={port}, and they never came",
                        missing.join(", ")
                    )));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(Error::Runtime(format!("hccl: accept: {e}"))),
        }
    }
    Ok(())
}

/// Ranks 1..: fetch the root info from rank 0, retrying until it listens.
fn tcp_fetch(addr: &str, port: u16, rank: u32, size: u32, gen: u64) -> Result<Vec<u8>> {
    let deadline = Instant::now() + connect_timeout();
    let mut last = String::from("no answer");
    loop {
        let addrs: Vec<SocketAddr> = match (addr, port).to_socket_addrs() {
            Ok(a) => a.collect(),
            Err(e) => {
                return Err(Error::value(format!(
                    "hccl: MASTER_ADDR={addr} does not resolve: {e}"
                )))
            }
        };
        for a in &addrs {
            match TcpStream::connect_timeout(a, Duration::from_secs(2)) {
                Ok(mut s) => {
                    let mut hello = Vec::with_capacity(24);
                    hello.extend_from_slice(MAGIC);
                    hello.extend_from_slice(&gen.to_le_bytes());
                    hello.extend_from_slice(&rank.to_le_bytes());
                    hello.extend_from_slice(&size.to_le_bytes());
                    let left = deadline.saturating_duration_since(Instant::now());
                    let _ = s.set_read_timeout(Some(left.max(Duration::from_millis(100))));
                    let mut status = [0u8; 1];
                    let mut ri = vec![0u8; ROOT_INFO_BYTES];
                    match s
                        .write_all(&hello)
                        .and_then(|_| s.read_exact(&mut status))
                        .and_then(|_| {
                            if status[0] == 0 {
                                s.read_exact(&mut ri)
                            } else {
                                Ok(())
                            }
                        }) {
                        Ok(()) if status[0] == 0 => return Ok(ri),
                        Ok(()) => {
                            return Err(Error::value(format!(
                                "hccl: rank 0 at {addr}:{port} refused rank {rank} of {size}: the \
                                 ranks disagree on WORLD_SIZE or RANK"
                            )))
                        }
                        Err(e) => last = e.to_string(),
                    }
                }
                Err(e) => last = e.to_string(),
            }
        }
        if Instant::now() > deadline {
            return Err(timeout_err(format!(
                "hccl: rank {rank} could not get HCCL's root info from rank 0 at \
                 MASTER_ADDR={addr} MASTER_PORT={port}: {last}"
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[allow(clippy::too_many_arguments)]
fn torch_store(
    py: Python<'_>,
    addr: &str,
    port: u16,
    agent: bool,
    prefix: &str,
    rank: u32,
    size: u32,
    gen: u64,
    mine: Option<Vec<u8>>,
) -> Result<Vec<u8>> {
    let pyerr = |what: &str, e: PyErr| {
        Error::Runtime(format!(
            "hccl: {what} (torchrun's TCP store at {addr}:{port}): {e}"
        ))
    };
    let dist = py
        .import("torch.distributed")
        .map_err(|e| pyerr("cannot import torch.distributed", e))?;
    let secs = connect_timeout().as_secs();
    let td = py
        .import("datetime")
        .and_then(|m| m.getattr("timedelta"))
        .and_then(|t| {
            let kw = PyDict::new(py);
            kw.set_item("seconds", secs)?;
            t.call((), Some(&kw))
        })
        .map_err(|e| pyerr("datetime", e))?;
    let kw = PyDict::new(py);
    let store = (|| -> PyResult<Bound<'_, PyAny>> {
        kw.set_item("host_name", addr)?;
        kw.set_item("port", port)?;
        kw.set_item("world_size", size)?;
        kw.set_item("is_master", rank == 0 && !agent)?;
        kw.set_item("timeout", &td)?;
        kw.set_item("wait_for_workers", false)?;
        dist.getattr("TCPStore")?.call((), Some(&kw))
    })()
    .map_err(|e| pyerr("cannot connect", e))?;
    let key = format!("{prefix}/root_info/{gen}");
    let out = if rank == 0 {
        let ri = mine.unwrap_or_default();
        store
            .call_method1("set", (key.as_str(), PyBytes::new(py, &ri)))
            .map_err(|e| pyerr("cannot publish HCCL's root info", e))?;
        ri
    } else {
        let v = store.call_method1("get", (key.as_str(),)).map_err(|e| {
            timeout_err(format!(
                "hccl: rank {rank} did not get HCCL's root info from rank 0 through torchrun's \
                 TCP store at {addr}:{port} (key {key}): {e}"
            ))
        })?;
        v.extract::<Vec<u8>>()
            .map_err(|e| pyerr("root info is not bytes", e))?
    };
    if out.len() != ROOT_INFO_BYTES {
        return Err(Error::Runtime(format!(
            "hccl: the root info under {key} has {} bytes, not {ROOT_INFO_BYTES}",
            out.len()
        )));
    }
    // Rank 0's store (when it serves) must live until every rank has read the key.
    crate::comm::keep_alive(store.unbind());
    Ok(out)
}

/// `mpi4py.MPI.COMM_WORLD.bcast` when mpi4py imports; `None` when it does not.
fn mpi4py(py: Python<'_>, rank: u32, size: u32, mine: Option<Vec<u8>>) -> Result<Option<Vec<u8>>> {
    let Ok(mpi) = py.import("mpi4py.MPI") else {
        return Ok(None);
    };
    let r = (|| -> PyResult<Option<Vec<u8>>> {
        let world = mpi.getattr("COMM_WORLD")?;
        let (wr, ws): (u32, u32) = (
            world.call_method0("Get_rank")?.extract()?,
            world.call_method0("Get_size")?.extract()?,
        );
        if (wr, ws) != (rank, size) {
            return Ok(None);
        }
        let obj = match &mine {
            Some(ri) if rank == 0 => PyBytes::new(py, ri).into_any(),
            _ => py.None().into_bound(py),
        };
        let kw = PyDict::new(py);
        kw.set_item("root", 0)?;
        let v = world.call_method("bcast", (obj,), Some(&kw))?;
        Ok(Some(v.extract::<Vec<u8>>()?))
    })();
    r.map_err(|e| {
        Error::Runtime(format!(
            "hccl: mpi4py bcast of HCCL's root info failed: {e}"
        ))
    })
}

fn rendezvous_file(job: &str, gen: u64) -> PathBuf {
    let dir = var("HCCL_PY_RENDEZVOUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let clean: String = job
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("hccl-py-rootinfo-{clean}-{gen}"))
}

fn file_share(path: &std::path::Path, rank: u32, mine: Option<Vec<u8>>) -> Result<Vec<u8>> {
    if rank == 0 {
        let ri = mine.unwrap_or_default();
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, &ri)
            .and_then(|_| std::fs::rename(&tmp, path))
            .map_err(|e| {
                Error::Runtime(format!(
                    "hccl: cannot write HCCL's root info to {}: {e} (set HCCL_PY_RENDEZVOUS_DIR \
                     to a writable directory shared by the ranks)",
                    path.display()
                ))
            })?;
        return Ok(ri);
    }
    let deadline = Instant::now() + connect_timeout();
    loop {
        if let Ok(b) = std::fs::read(path) {
            if b.len() == ROOT_INFO_BYTES {
                return Ok(b);
            }
        }
        if Instant::now() > deadline {
            return Err(timeout_err(format!(
                "hccl: rank {rank} waited for rank 0 to write HCCL's root info to {} (a \
                 multi-host job needs HCCL_PY_RENDEZVOUS_DIR on a shared filesystem, mpi4py, \
                 or MASTER_ADDR and MASTER_PORT)",
                path.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
