//! Communicator management exports (`hccl_comm.h`).

use super::{entry, group, ptr};
use crate::comm::{self as cm, hash128, incarnation, join, HcclComm, Member};
use crate::config::{self, CommCfg};
use crate::errors::{
    boundary_value, error_string, non_null, HResult, HcclError, HCCL_E_NOT_SUPPORT, HCCL_E_UNAVAIL,
};
use crate::fingerprint::{opcode, Fp};
use crate::rootinfo::{hostname, random_id, RootInfo, ROOT_INFO_BYTES};
use crate::rt::rt;
use crate::{algo, ranktable};
use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::Ordering;

fn node_dir_str() -> HResult<String> {
    Ok(crate::config()?.node_dir.to_string_lossy().into_owned())
}

#[no_mangle]
pub unsafe extern "C" fn HcclGetRootInfo(rootInfo: *mut u8) -> i32 {
    entry(
        "HcclGetRootInfo",
        std::ptr::null_mut(),
        || format!("rootInfo={}", ptr(rootInfo)),
        || {
            non_null(rootInfo, "rootInfo")?;
            let id = random_id()?;
            let root = crate::cross::start_root_service(&id)?;
            let ri = RootInfo {
                id,
                creator_pid: std::process::id(),
                host: hostname(),
                node_dir: node_dir_str()?,
                root,
            };
            let b = ri.encode()?;
            std::ptr::copy_nonoverlapping(b.as_ptr(), rootInfo, ROOT_INFO_BYTES);
            Ok(())
        },
    )
}

unsafe fn init_root_info(
    n: u32,
    root: *const u8,
    rank: u32,
    cfg: *const u8,
    out: *mut HcclComm,
) -> HResult<()> {
    non_null(root, "rootInfo")?;
    non_null(out, "comm")?;
    if n == 0 {
        return Err(HcclError::para("nRanks=0; expected at least 1"));
    }
    if rank >= n {
        return Err(HcclError::para(format!(
            "rank={rank} is out of range for nRanks={n} (expected 0..{})",
            n - 1
        )));
    }
    let cfg = config::parse(cfg)?;
    let ri = RootInfo::decode(std::slice::from_raw_parts(root, ROOT_INFO_BYTES))?;
    let rt = rt()?;
    let (l, p) = rt.current_device()?;
    let name = cfg
        .name
        .clone()
        .unwrap_or_else(|| format!("hccl_root_{}", cm::public_id(&ri.id)));
    if group::note(group::Kind::Init, "HcclCommInitRootInfo")? {
        // Joined with the other inits of the group at HcclGroupEnd.
        group::hold_init(group::HeldInit {
            id: ri.id,
            root: ri.root,
            n,
            member: Member {
                rank,
                device_logical: l,
                device_phys: p,
            },
            name,
            cfg,
            out,
        });
        return Ok(());
    }
    let member = Member {
        rank,
        device_logical: l,
        device_phys: p,
    };
    let comms = join_root_info(&ri.id, ri.root, n, &[member], &name, &cfg)?;
    *out = cm::register(comms[0].clone());
    Ok(())
}

/// The ranks of a root-info communicator meet at the root (which tells them where every
/// rank is), connect to the ranks on other servers, and meet the ranks of their own server
/// in its control block. `members` are ranks of this process.
pub fn join_root_info(
    id: &[u8; 16],
    root: std::net::SocketAddr,
    n: u32,
    members: &[Member],
    name: &str,
    cfg: &CommCfg,
) -> HResult<Vec<std::sync::Arc<cm::CommInner>>> {
    let conf = crate::config()?;
    let node = crate::bootstrap::node_key(&conf.node_dir);
    let host = hostname();
    let placed = crate::cross::place(
        id,
        &[root],
        true,
        n,
        members,
        &|_| (node, host.clone()),
        name,
        &|_| Ok(()),
    )?;
    cm::join_placed(*id, &conf.node_dir, placed, name, cfg, rt()?)
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommInitRootInfo(
    nRanks: u32,
    rootInfo: *const u8,
    rank: u32,
    comm: *mut HcclComm,
) -> i32 {
    entry(
        "HcclCommInitRootInfo",
        std::ptr::null_mut(),
        || {
            format!(
                "nRanks={nRanks}, rootInfo={}, rank={rank}, comm={}",
                ptr(rootInfo),
                ptr(comm)
            )
        },
        || init_root_info(nRanks, rootInfo, rank, std::ptr::null(), comm),
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommInitRootInfoConfig(
    nRanks: u32,
    rootInfo: *const u8,
    rank: u32,
    config: *const u8,
    comm: *mut HcclComm,
) -> i32 {
    entry(
        "HcclCommInitRootInfoConfig",
        std::ptr::null_mut(),
        || {
            format!(
                "nRanks={nRanks}, rootInfo={}, rank={rank}, config={}, comm={}",
                ptr(rootInfo),
                ptr(config),
                ptr(comm)
            )
        },
        || {
            non_null(config, "config")?;
            init_root_info(nRanks, rootInfo, rank, config, comm)
        },
    )
}

unsafe fn init_cluster(
    path: *const c_char,
    rank: u32,
    cfg: *const u8,
    out: *mut HcclComm,
) -> HResult<()> {
    non_null(path, "clusterInfo")?;
    non_null(out, "comm")?;
    let bytes = CStr::from_ptr(path).to_bytes();
    if bytes.is_empty() || bytes.len() >= 4096 {
        return Err(HcclError::para(format!(
            "clusterInfo path has {} bytes; expected 1 to 4095",
            bytes.len()
        )));
    }
    let path = String::from_utf8_lossy(bytes).into_owned();
    let cfg = config::parse(cfg)?;
    let table = ranktable::load(&path)?;
    let n = table.ranks.len() as u32;
    if rank >= n {
        return Err(HcclError::para(format!(
            "rank={rank} is not a rank_id of rank table {path:?}, which lists ranks 0..{}",
            n - 1
        )));
    }
    let rt = rt()?;
    let (l, p) = rt.current_device()?;
    let e = &table.ranks[rank as usize];
    if e.device_id != p {
        return Err(HcclError::new(
            HCCL_E_UNAVAIL,
            format!(
                "rank table {path:?} gives rank {rank} device_id \"{}\" (server {:?}) but the current device is logical {l} = physical {p}; call aclrtSetDevice with the device of this rank",
                e.device_id, e.server_id
            ),
        ));
    }
    let canon = std::fs::canonicalize(&path)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or(path.clone());
    // Two jobs started with the same table must never meet: the job's identity is part
    // of the communicator id.
    let job = ranktable::job_identity();
    let key = if table.multi_server() {
        // The servers' copies of the table may live at different paths: the job alone
        // tells one job from another.
        hash128(&[
            b"ranktable-servers",
            table.canonical.as_bytes(),
            job.value.as_bytes(),
        ])
    } else {
        hash128(&[
            b"ranktable",
            table.canonical.as_bytes(),
            canon.as_bytes(),
            job.value.as_bytes(),
        ])
    };
    if cm::live_from_table(&key, rank) {
        return Err(HcclError::para(format!(
            "rank {rank} of rank table {path:?} already has a live communicator in this process; destroy it before initialising again"
        )));
    }
    let inc = incarnation(&key, rank);
    let id = hash128(&[&key, &inc.to_le_bytes()]);
    let name = cfg
        .name
        .clone()
        .unwrap_or_else(|| "hccl_world_group".to_string());
    let member = Member {
        rank,
        device_logical: l,
        device_phys: p,
    };
    let comms = if table.multi_server() {
        join_table_servers(&table, &path, &id, member, &name, &cfg)
    } else {
        join(
            id,
            &crate::config()?.node_dir,
            n,
            &[member],
            &name,
            &cfg,
            rt,
        )
    }
    .map_err(|mut e| {
        if e.code == crate::errors::HCCL_E_TIMEOUT {
            e.msg.push_str(&format!(
                "\n    (ranks of rank table {path:?} meet only within one job; this rank's job is {}: every rank of the job must see the same, so start them with one launcher or export the same JOB_ID to each)",
                job.describe()
            ));
        }
        e
    })?;
    *comms[0].origin.lock() = Some(key);
    *out = cm::register(comms[0].clone());
    Ok(())
}

/// A rank table listing several servers: rank 0 is the root (listening on its
/// `device_port`, see `RankTable::root_endpoints`), ranks of one `server_id` share memory,
/// the others connect over TCP.
fn join_table_servers(
    table: &ranktable::RankTable,
    path: &str,
    id: &[u8; 16],
    member: Member,
    name: &str,
    cfg: &CommCfg,
) -> HResult<Vec<std::sync::Arc<cm::CommInner>>> {
    let conf = crate::config()?;
    let (port, ips) = table.root_endpoints();
    if member.rank == 0 {
        crate::net::whitelist::get()?;
        let l = std::net::TcpListener::bind(std::net::SocketAddr::from(([0, 0, 0, 0], port)))
            .map_err(|e| {
                HcclError::new(
                    crate::errors::HCCL_E_TCP_CONNECT,
                    format!(
                        "rank 0 of rank table {path:?} cannot listen on port {port} for the other servers' ranks: {e} (the port is rank 0's device_port, else 16666 + its device_id; is another job using this rank table?)"
                    ),
                )
            })?;
        let (all, idle) = crate::cross::root_patience(conf.connect_timeout);
        crate::bootstrap::start_root(l, crate::net::frame::key(id), name.to_string(), all, idle)?;
    }
    let roots: Vec<std::net::SocketAddr> = ips
        .into_iter()
        .map(|ip| std::net::SocketAddr::new(ip, port))
        .collect();
    let server_of = |r: u32| {
        let sid = table.ranks[r as usize].server_id.clone();
        (crate::cross::server_key(&sid), sid)
    };
    let placed = crate::cross::place(
        id,
        &roots,
        false,
        table.ranks.len() as u32,
        &[member],
        &server_of,
        name,
        &crate::cross::check_table_servers,
    )?;
    cm::join_placed(*id, &conf.node_dir, placed, name, cfg, rt()?)
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommInitClusterInfo(
    clusterInfo: *const c_char,
    rank: u32,
    comm: *mut HcclComm,
) -> i32 {
    entry(
        "HcclCommInitClusterInfo",
        std::ptr::null_mut(),
        || {
            format!(
                "clusterInfo={}, rank={rank}, comm={}",
                cstr(clusterInfo),
                ptr(comm)
            )
        },
        || init_cluster(clusterInfo, rank, std::ptr::null(), comm),
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommInitClusterInfoConfig(
    clusterInfo: *const c_char,
    rank: u32,
    config: *mut u8,
    comm: *mut HcclComm,
) -> i32 {
    entry(
        "HcclCommInitClusterInfoConfig",
        std::ptr::null_mut(),
        || {
            format!(
                "clusterInfo={}, rank={rank}, config={}, comm={}",
                cstr(clusterInfo),
                ptr(config),
                ptr(comm)
            )
        },
        || {
            non_null(config, "config")?;
            init_cluster(clusterInfo, rank, config, comm)
        },
    )
}

unsafe fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        "NULL".into()
    } else {
        format!("{:?}", CStr::from_ptr(p).to_string_lossy())
    }
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommInitAll(
    ndev: u32,
    devices: *mut i32,
    comms: *mut HcclComm,
) -> i32 {
    entry(
        "HcclCommInitAll",
        std::ptr::null_mut(),
        || {
            format!(
                "ndev={ndev}, devices={}, comms={}",
                ptr(devices),
                ptr(comms)
            )
        },
        || {
            non_null(devices, "devices")?;
            non_null(comms, "comms")?;
            if ndev == 0 {
                return Err(HcclError::para("ndev=0; expected at least 1"));
            }
            let devs = std::slice::from_raw_parts(devices, ndev as usize).to_vec();
            for (i, d) in devs.iter().enumerate() {
                if let Some(j) = devs[..i].iter().position(|x| x == d) {
                    return Err(HcclError::para(format!(
                        "devices[{i}]={d} repeats devices[{j}]; each device may appear once"
                    )));
                }
            }
            let rt = rt()?;
            let mut members = Vec::new();
            for (i, &d) in devs.iter().enumerate() {
                let p = rt.logical_to_physical(d).map_err(|e| {
                    HcclError::para(format!(
                        "devices[{i}]={d} is not a usable device: {}",
                        e.msg
                    ))
                })?;
                members.push(Member {
                    rank: i as u32,
                    device_logical: d,
                    device_phys: p,
                });
            }
            let id = random_id()?;
            let name = format!("hccl_all_{}", cm::public_id(&id));
            let cs = join(
                id,
                &crate::config()?.node_dir,
                ndev,
                &members,
                &name,
                &CommCfg::default(),
                rt,
            )?;
            for (i, c) in cs.into_iter().enumerate() {
                *comms.add(i) = cm::register(c);
            }
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclCreateSubCommConfig(
    comm: *mut HcclComm,
    rankNum: u32,
    rankIds: *mut u32,
    subCommId: u64,
    subCommRankId: u32,
    config: *mut u8,
    subComm: *mut HcclComm,
) -> i32 {
    let parent_h = if comm.is_null() {
        std::ptr::null_mut()
    } else {
        *comm
    };
    entry(
        "HcclCreateSubCommConfig",
        parent_h,
        || {
            format!(
                "comm={}, rankNum={rankNum}, rankIds={}, subCommId={subCommId}, subCommRankId={subCommRankId}, config={}, subComm={}",
                ptr(comm),
                ptr(rankIds),
                ptr(config),
                ptr(subComm)
            )
        },
        || {
            non_null(comm, "comm")?;
            let parent = cm::get(*comm)?;
            non_null(subComm, "subComm")?;
            if rankIds.is_null() {
                // This rank does not join the sub-communicator.
                *subComm = std::ptr::null_mut();
                return Ok(());
            }
            if rankNum == 0 || rankNum > parent.n {
                return Err(HcclError::para(format!(
                    "rankNum={rankNum}; expected 1 to {} (the size of the parent communicator)",
                    parent.n
                )));
            }
            let ids = std::slice::from_raw_parts(rankIds, rankNum as usize).to_vec();
            for (i, &r) in ids.iter().enumerate() {
                if r >= parent.n {
                    return Err(HcclError::para(format!(
                        "rankIds[{i}]={r} is not a rank of the parent communicator (size {})",
                        parent.n
                    )));
                }
                if i > 0 && ids[i - 1] >= r {
                    return Err(HcclError::para(format!(
                        "rankIds must be sorted ascending without repeats, but rankIds[{}]={} and rankIds[{i}]={r}",
                        i - 1,
                        ids[i - 1]
                    )));
                }
            }
            if subCommRankId >= rankNum {
                return Err(HcclError::para(format!(
                    "subCommRankId={subCommRankId} is out of range for rankNum={rankNum}"
                )));
            }
            if ids[subCommRankId as usize] != parent.rank {
                return Err(HcclError::para(format!(
                    "rankIds[subCommRankId={subCommRankId}]={} but this is rank {} of the parent communicator",
                    ids[subCommRankId as usize], parent.rank
                )));
            }
            let cfg = config::parse(config)?;
            let name = cfg
                .name
                .clone()
                .unwrap_or_else(|| format!("{}_sub_{subCommId}", parent.name));
            let idb: Vec<u8> = ids.iter().flat_map(|r| r.to_le_bytes()).collect();
            let key = hash128(&[b"sub", &parent.id, &subCommId.to_le_bytes(), &idb]);
            let inc = incarnation(&key, subCommRankId);
            let id = hash128(&[&key, &inc.to_le_bytes()]);
            let node = parent
                .shm
                .path
                .parent()
                .map(|p| p.to_path_buf())
                .unwrap_or_default();
            let member = Member {
                rank: subCommRankId,
                device_logical: parent.device_logical,
                device_phys: parent.device_phys,
            };
            // Where the sub-communicator's ranks are: on the parent's servers, reached over
            // the parent's connections.
            let keys: Vec<u32> = ids
                .iter()
                .map(|&r| parent.topo.server_of[r as usize])
                .collect();
            let topo = crate::topo::Topo::from_keys(subCommRankId, &keys);
            let cross = match &parent.cross {
                Some(x) if !topo.single_server() => Some(x.sub(&id, subCommRankId, &ids)),
                _ => None,
            };
            let cs = cm::join_placed(
                id,
                &node,
                vec![(member, cm::Placement { topo, cross })],
                &name,
                &cfg,
                parent.rt,
            )?;
            *subComm = cm::register(cs[0].clone());
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclCommDestroy(comm: HcclComm) -> i32 {
    entry(
        "HcclCommDestroy",
        std::ptr::null_mut(),
        || format!("comm={}", ptr(comm)),
        || {
            // CANN: a NULL comm is skipped with a warning, and the call succeeds.
            if comm.is_null() {
                crate::log(
                    npu_emu::config::LogLevel::Warning,
                    "HcclCommDestroy: comm is NULL: an empty comm given, nothing to destroy",
                );
                return Ok(());
            }
            let c = cm::unregister(comm)?;
            // Collectives that ran ahead of their peers finish first.
            crate::defer::finish_all(&c);
            // And the wait of a collective completed at its call for its peers.
            crate::defer::settle_gate(&c);
            c.destroy();
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclGetRankSize(comm: HcclComm, rankSize: *mut u32) -> i32 {
    entry(
        "HcclGetRankSize",
        comm,
        || format!("comm={}, rankSize={}", ptr(comm), ptr(rankSize)),
        || {
            let c = cm::get(comm)?;
            non_null(rankSize, "rankSize")?;
            *rankSize = c.n;
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclGetRankId(comm: HcclComm, rank: *mut u32) -> i32 {
    entry(
        "HcclGetRankId",
        comm,
        || format!("comm={}, rank={}", ptr(comm), ptr(rank)),
        || {
            let c = cm::get(comm)?;
            non_null(rank, "rank")?;
            *rank = c.rank;
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclGetCommName(comm: HcclComm, commName: *mut c_char) -> i32 {
    entry(
        "HcclGetCommName",
        comm,
        || format!("comm={}, commName={}", ptr(comm), ptr(commName)),
        || {
            let c = cm::get(comm)?;
            non_null(commName, "commName")?;
            let b = c.name.as_bytes();
            let l = b.len().min(127);
            std::ptr::copy_nonoverlapping(b.as_ptr(), commName as *mut u8, l);
            *commName.add(l) = 0;
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclGetCommAsyncError(comm: HcclComm, asyncError: *mut i32) -> i32 {
    entry(
        "HcclGetCommAsyncError",
        comm,
        || format!("comm={}, asyncError={}", ptr(comm), ptr(asyncError)),
        || {
            let c = cm::get(comm)?;
            non_null(asyncError, "asyncError")?;
            *asyncError = c.async_error.load(Ordering::Relaxed);
            Ok(())
        },
    )
}

#[no_mangle]
pub extern "C" fn HcclGetErrorString(code: i32) -> *const c_char {
    boundary_value("HcclGetErrorString", c"unknow error".as_ptr(), || {
        error_string(code).as_ptr()
    })
}

/// `HCCL_COMM_CONFIG_RESERVED` of our `hccl_types.h`: every config item below it is
/// supported.
#[no_mangle]
pub extern "C" fn HcclGetCommConfigCapability() -> u32 {
    11
}

fn deterministic_default() -> i32 {
    match std::env::var("HCCL_DETERMINISTIC")
        .ok()
        .as_deref()
        .map(str::trim)
    {
        Some("true") | Some("TRUE") | Some("1") => 1,
        Some("strict") | Some("STRICT") => 2,
        _ => 0,
    }
}

#[no_mangle]
pub extern "C" fn HcclSetConfig(config: i32, configValue: i32) -> i32 {
    entry(
        "HcclSetConfig",
        std::ptr::null_mut(),
        || format!("config={config}, configValue={configValue}"),
        || {
            if config != 0 {
                return Err(HcclError::new(
                    HCCL_E_NOT_SUPPORT,
                    format!("config={config} is not supported; only HCCL_DETERMINISTIC (0) is"),
                ));
            }
            if !(0..=2).contains(&configValue) {
                return Err(HcclError::para(format!(
                "HCCL_DETERMINISTIC value {configValue}; expected 0 (off), 1 (on) or 2 (strict)"
            )));
            }
            crate::globals::DETERMINISTIC.store(configValue, Ordering::Relaxed);
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclGetConfig(config: i32, configValue: *mut i32) -> i32 {
    entry(
        "HcclGetConfig",
        std::ptr::null_mut(),
        || format!("config={config}, configValue={}", ptr(configValue)),
        || {
            non_null(configValue, "configValue")?;
            if config != 0 {
                return Err(HcclError::new(
                    HCCL_E_NOT_SUPPORT,
                    format!("config={config} is not supported; only HCCL_DETERMINISTIC (0) is"),
                ));
            }
            let v = crate::globals::DETERMINISTIC.load(Ordering::Relaxed);
            *configValue = if v < 0 { deterministic_default() } else { v };
            Ok(())
        },
    )
}

#[no_mangle]
pub unsafe extern "C" fn HcclBarrier(comm: HcclComm, stream: *mut c_void) -> i32 {
    entry(
        "HcclBarrier",
        comm,
        || format!("comm={}, stream={}", ptr(comm), ptr(stream)),
        || {
            let c = cm::get(comm)?;
            non_null(stream, "stream")?;
            let fp = Fp::new(opcode::BARRIER);
            let op = algo::Op::new(opcode::BARRIER, String::new());
            // On idle streams the rendezvous is the barrier (nothing is enqueued);
            // otherwise it is enqueued like any collective.
            super::ops::launch_coll(&c, fp, op, stream, false)
        },
    )
}
