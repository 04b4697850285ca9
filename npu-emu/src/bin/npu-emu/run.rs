//! `npu-emu run -n N [--devices LIST] [--timeout SECS] [--nnodes M --node-rank I
//! --master-addr A --master-port P] PROGRAM ARGS…`: the launcher.
//!
//! Starts N ranks of PROGRAM with the environment real Ascend launchers set (abi.md §3.3–3.4).
//! With `--nnodes M` (torchrun's options) the job spans M servers: each runs `npu-emu run`
//! for its own N ranks (N may differ per server), node 0's launcher at `A:P` numbers the
//! ranks node by node and hands out one rank table listing every server, and the launchers
//! stop each other's ranks when one fails (see `nodes.rs`). Variables, with R the global
//! rank and N_all the ranks of all nodes:
//!
//! | Variable | Value |
//! |---|---|
//! | `RANK_ID` | the rank R, 0..N_all-1 |
//! | `RANK_SIZE` | N_all |
//! | `ASCEND_DEVICE_ID` | the rank's device (logical id): the i-th of `--devices`, default i |
//! | `RANK_TABLE_FILE` | a version "1.0" rank table written for the job (one server, or every node of a multi-node job) |
//! | `NPU_EMU_JOB_ID` | a random id of the job (the HCCL dialect layer, `headers/compat`, keys its `hcclInit` rendezvous files in the job directory by it) |
//! | `RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `GROUP_RANK` | as torchrun sets them, so `torch.distributed.init_process_group("hccl")` works unmodified |
//! | `MASTER_ADDR`, `MASTER_PORT` | 127.0.0.1 and a free port, unless already set; multi-node: node 0's address and a port free there |
//!
//! The rank table lives in `<node dir>/jobs/<job id>/rank_table.json` and is removed when the
//! job ends. Each rank runs in its own process group (so a stop reaches a wrapper script's
//! children too); each line it prints is prefixed `[rank R] `. When a rank fails (non-zero
//! exit or a signal) the others get SIGTERM, then SIGKILL after a grace period, and the
//! launcher exits non-zero naming the rank and the reason. SIGINT/SIGTERM/SIGHUP sent to the
//! launcher (Ctrl-C) are forwarded to every rank. Exit codes: 0 when every rank exits 0; the
//! failing rank's exit code (or 128 + signal) when a rank fails; 124 on `--timeout`; 128 +
//! signal when the launcher was interrupted; 127 when PROGRAM cannot be started; 2 for a bad
//! command line.

use crate::args::{usage_error, CliError, CliResult};
use npu_emu::config::Config;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long stopped ranks get between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(3);
/// How often the launcher looks at its ranks.
const POLL: Duration = Duration::from_millis(10);

/// Options of `npu-emu run`. Values are read as text and checked by [`job`], so each error
/// names the option and what was expected.
#[derive(clap::Args, Debug, Default)]
#[command(args_override_self = true)]
pub struct RunArgs {
    /// Number of ranks, 1 to 4096 (also -np).
    #[arg(short = 'n', long = "np", visible_alias = "ranks", value_name = "N")]
    pub ranks: Option<String>,
    /// Device of each rank, e.g. 4,5,6,7 (default: rank i uses device i; ranks may share one).
    #[arg(long, value_name = "LIST")]
    pub devices: Option<String>,
    /// Stop the job and fail after SECS seconds.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<String>,
    /// Number of servers of the job; each runs `npu-emu run` for its own ranks (default 1).
    #[arg(long, value_name = "M")]
    pub nnodes: Option<String>,
    /// This server's index in the job, 0 to M-1 (node 0 hosts the rendezvous).
    #[arg(long = "node-rank", value_name = "I")]
    pub node_rank: Option<String>,
    /// Address of node 0, where its launcher listens (default 127.0.0.1).
    #[arg(long = "master-addr", value_name = "ADDR")]
    pub master_addr: Option<String>,
    /// Port of node 0's launcher (default 29500).
    #[arg(long = "master-port", value_name = "PORT")]
    pub master_port: Option<String>,
    /// The program to start, then its own arguments.
    #[arg(value_name = "PROGRAM [ARGS]", trailing_var_arg = true)]
    pub command: Vec<String>,
}

/// What `run` accepts, for an unknown-option message.
pub const OPTIONS: &str = "-n N, --devices LIST, --timeout SECS, --nnodes M, --node-rank I, --master-addr ADDR, --master-port PORT";

/// A parsed `run` command line.
#[derive(Debug, PartialEq)]
pub struct Job {
    pub ranks: usize,
    /// Logical device of each rank.
    pub devices: Vec<u32>,
    pub timeout: Option<Duration>,
    pub program: String,
    pub args: Vec<String>,
    /// A multi-node job (`--nnodes` above 1).
    pub nodes: Option<crate::nodes::NodeOpts>,
}

/// MPI's spelling `-np N` is accepted: rewrite it to `--np` before `clap` reads the options
/// (everything from PROGRAM on is left alone).
pub fn normalize(argv: &mut [String]) {
    let mut i = 0;
    while i < argv.len() {
        let a = argv[i].as_str();
        match a {
            "--" => return,
            "-np" => {
                argv[i] = "--np".to_string();
                i += 2;
            }
            "-n" | "--np" | "--ranks" | "--devices" | "--timeout" | "--nnodes" | "--node-rank"
            | "--master-addr" | "--master-port" => i += 2,
            _ if a.starts_with('-') && a != "-" => i += 1,
            _ => return,
        }
    }
}

/// Parse the arguments after `run` as `main` does; `visible` is the number of devices this
/// process sees.
#[cfg(test)]
pub fn parse(argv: &[String], visible: u32) -> CliResult<Job> {
    use clap::Parser;
    let mut argv = argv.to_vec();
    normalize(&mut argv);
    #[derive(Parser)]
    #[command(name = "run")]
    struct Run {
        #[command(flatten)]
        args: RunArgs,
    }
    let r = Run::try_parse_from(std::iter::once("run".to_string()).chain(argv))
        .map_err(|e| crate::args::from_clap(&e, Some(OPTIONS)))?;
    job(r.args, visible)
}

/// Check the options of a `run` command line; `visible` is the number of devices this
/// process sees.
pub fn job(args: RunArgs, visible: u32) -> CliResult<Job> {
    let ranks = args.ranks.as_deref().map(parse_ranks).transpose()?;
    let devices = args
        .devices
        .as_deref()
        .map(|v| parse_devices(v, visible))
        .transpose()?;
    let timeout = args.timeout.as_deref().map(parse_timeout).transpose()?;
    let Some(program) = args.command.first() else {
        return Err(usage_error(
            "missing PROGRAM: npu-emu run -n N PROGRAM [ARGS...]",
        ));
    };
    let (ranks, devices) = match (ranks, devices) {
        (None, None) => return Err(usage_error("missing -n N (the number of ranks)")),
        (Some(n), Some(d)) if d.len() != n => {
            return Err(usage_error(format!(
                "--devices lists {} devices but -n asks for {n} ranks; give one device per rank",
                d.len()
            )))
        }
        (_, Some(d)) => (d.len(), d),
        (Some(n), None) => {
            if n > visible as usize {
                return Err(usage_error(format!(
                    "-n {n}: this node has only {visible} visible devices; raise NPU_EMU_DEVICES \
                     or give --devices with one device per rank (ranks may share a device)"
                )));
            }
            (n, (0..n as u32).collect())
        }
    };
    Ok(Job {
        ranks,
        devices,
        timeout,
        program: program.clone(),
        args: args.command[1..].to_vec(),
        nodes: parse_nodes(&args)?,
    })
}

/// `--nnodes`, `--node-rank`, `--master-addr`, `--master-port`.
fn parse_nodes(a: &RunArgs) -> CliResult<Option<crate::nodes::NodeOpts>> {
    let nnodes = match a.nnodes.as_deref() {
        None => 1,
        Some(v) => match v.parse::<u32>() {
            Ok(n) if (1..=1024).contains(&n) => n,
            _ => {
                return Err(usage_error(format!(
                    "--nnodes {v:?}: expected a number of servers from 1 to 1024"
                )))
            }
        },
    };
    if nnodes == 1 {
        for (name, v) in [
            ("--node-rank", &a.node_rank),
            ("--master-addr", &a.master_addr),
            ("--master-port", &a.master_port),
        ] {
            if v.is_some() && a.nnodes.is_none() {
                return Err(usage_error(format!(
                    "{name} is for a job over several servers: give --nnodes M too"
                )));
            }
        }
        return Ok(None);
    }
    let node_rank = match a.node_rank.as_deref() {
        None => {
            return Err(usage_error(format!(
                "--nnodes {nnodes}: give --node-rank I (0 to {}) on every server",
                nnodes - 1
            )))
        }
        Some(v) => match v.parse::<u32>() {
            Ok(i) if i < nnodes => i,
            _ => {
                return Err(usage_error(format!(
                    "--node-rank {v:?}: expected 0 to {} (--nnodes {nnodes})",
                    nnodes - 1
                )))
            }
        },
    };
    let master_port = match a.master_port.as_deref() {
        None => 29500,
        Some(v) => match v.parse::<u16>() {
            Ok(p) if p > 0 => p,
            _ => {
                return Err(usage_error(format!(
                    "--master-port {v:?}: expected a port from 1 to 65535"
                )))
            }
        },
    };
    let master_addr = a
        .master_addr
        .clone()
        .unwrap_or_else(|| "127.0.0.1".to_string());
    if master_addr.is_empty() {
        return Err(usage_error("--master-addr is empty: give node 0's address"));
    }
    Ok(Some(crate::nodes::NodeOpts {
        nnodes,
        node_rank,
        master_addr,
        master_port,
    }))
}

fn parse_ranks(v: &str) -> CliResult<usize> {
    match v.parse::<usize>() {
        Ok(n) if (1..=4096).contains(&n) => Ok(n),
        _ => Err(usage_error(format!(
            "-n {v:?}: expected a number of ranks from 1 to 4096"
        ))),
    }
}

fn parse_devices(v: &str, visible: u32) -> CliResult<Vec<u32>> {
    let mut list = Vec::new();
    for tok in v.split(',') {
        match tok.trim().parse::<u32>() {
            Ok(d) if d < visible => list.push(d),
            Ok(d) => {
                return Err(usage_error(format!(
                    "--devices {v}: device {d} does not exist; this node has \
                     {visible} visible devices (0..{}) — see NPU_EMU_DEVICES and \
                     ASCEND_RT_VISIBLE_DEVICES",
                    visible.saturating_sub(1)
                )))
            }
            Err(_) => {
                return Err(usage_error(format!(
                    "--devices {v:?}: expected comma-separated device ids such as \
                     0,1,2,3; {tok:?} is not a device id"
                )))
            }
        }
    }
    Ok(list)
}

fn parse_timeout(v: &str) -> CliResult<Duration> {
    match v.parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Ok(Duration::from_secs_f64(s)),
        _ => Err(usage_error(format!(
            "--timeout {v:?}: expected a positive number of seconds"
        ))),
    }
}

/// The version "1.0" rank table of a job on this server (abi.md §3.2): every value a string,
/// `device_id` the physical device.
pub fn rank_table(physical: &[u32]) -> String {
    let devs: Vec<serde_json::Value> = physical
        .iter()
        .enumerate()
        .map(|(r, d)| serde_json::json!({ "device_id": d.to_string(), "rank_id": r.to_string() }))
        .collect();
    let t = serde_json::json!({
        "status": "completed",
        "version": "1.0",
        "server_count": "1",
        "server_list": [ { "server_id": "127.0.0.1", "device": devs } ],
    });
    let mut s = serde_json::to_string_pretty(&t).unwrap_or_default();
    s.push('\n');
    s
}

/// A signal's name ("SIGSEGV"), or its number. (Written here: libc has no names, and `nix`
/// would be a dependency for this table alone.)
pub fn signal_name(sig: i32) -> String {
    let n = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("signal {sig}"),
    };
    n.to_string()
}

/// How a process ended, in words: "exited with code 1", "was killed by SIGSEGV".
pub fn describe(st: ExitStatus) -> String {
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("exited with code {c}"),
        (None, Some(s)) => {
            let core = if st.core_dumped() {
                " (core dumped)"
            } else {
                ""
            };
            format!("was killed by {}{core}", signal_name(s))
        }
        _ => "ended".to_string(),
    }
}

/// The signal received by the launcher (0 = none). Global because the signal handler gets
/// no context pointer; the binary's only process-global item, so it stays beside its handler.
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNALLED.store(sig, Ordering::SeqCst);
}

fn install_signal_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = libc::SA_RESTART;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// A random job id: 16 hex digits from /dev/urandom (no `rand` crate: eight random bytes
/// are all it needs), or from the time and pid if that fails.
fn job_id() -> String {
    let mut b = [0u8; 8];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok();
    if !ok {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        b = (t ^ ((std::process::id() as u64) << 32)).to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Copy each line of `r` to stdout or stderr with `prefix`, one write per line.
fn pump(r: impl Read, prefix: String, to_stderr: bool, live: Arc<AtomicUsize>) {
    let mut r = BufReader::new(r);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        let mut out = Vec::with_capacity(prefix.len() + line.len());
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(&line);
        if to_stderr {
            let mut e = std::io::stderr().lock();
            let _ = e.write_all(&out);
        } else {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(&out);
            let _ = o.flush();
        }
    }
    live.fetch_sub(1, Ordering::SeqCst);
}

fn say(msg: &str) {
    let _ = std::io::stdout().lock().flush();
    eprintln!("npu-emu run: {msg}");
}

struct Rank {
    child: Child,
    pid: i32,
    /// The rank's number in the job (local index + the node's first rank).
    global: usize,
    status: Option<ExitStatus>,
    /// We sent it a stop signal.
    stopped: bool,
}

/// Send `sig` to the process group of every rank still running.
fn signal_all(ranks: &mut [Rank], sig: i32) {
    for r in ranks.iter_mut().filter(|r| r.status.is_none()) {
        // SAFETY: plain syscall; each rank leads its own process group.
        unsafe {
            libc::kill(-r.pid, sig);
        }
        r.stopped = true;
    }
}

fn list(ids: &[usize]) -> String {
    ids.iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `npu-emu run`: the exit code of the job, or of a bad command line.
pub fn main(args: RunArgs) -> ExitCode {
    let code = Config::from_env()
        .map_err(|e| CliError {
            msg: e.msg,
            code: 2,
            usage: false,
        })
        .and_then(|cfg| {
            let job = job(args, cfg.visible_count())?;
            launch(&job, &cfg)
        });
    match code {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("npu-emu run: {}", e.msg);
            if e.usage {
                eprintln!("Run `npu-emu --help` for usage.");
            }
            ExitCode::from(e.code)
        }
    }
}

/// Run `job` to its end: the job directory and rank table, the ranks, their supervision,
/// then the summary. Returns the launcher's exit code.
fn launch(job: &Job, cfg: &Config) -> CliResult<u8> {
    let physical: Vec<u32> = job
        .devices
        .iter()
        .map(|&d| cfg.physical(d as i32).unwrap_or(d))
        .collect();
    // The node directory must be ours and private before a rank table goes in it.
    npu_emu::node::open_dir(&cfg.node_dir).map_err(|e| crate::args::failure(e.msg))?;
    let (place, control) = match &job.nodes {
        None => {
            let id = job_id();
            (
                Place {
                    dir_name: id.clone(),
                    job_id: id,
                    rank_table: rank_table(&physical),
                    first_rank: 0,
                    world: job.ranks,
                    master: torch_rendezvous(),
                    node_rank: 0,
                },
                None,
            )
        }
        Some(o) => {
            let me = crate::nodes::local(job.ranks, physical.clone());
            let (plan, ctl) = crate::nodes::rendezvous(o, &me, job_id(), cfg.connect_timeout)?;
            (
                Place {
                    dir_name: format!("{}-node{}", plan.job_id, o.node_rank),
                    job_id: plan.job_id,
                    rank_table: plan.rank_table,
                    first_rank: plan.first_rank,
                    world: plan.world,
                    master: plan.master,
                    node_rank: o.node_rank,
                },
                Some(ctl),
            )
        }
    };
    let dir = JobDir::create(cfg.node_dir.join("jobs").join(&place.dir_name))?;
    dir.name_launcher()?;
    npu_emu::node::reaper::ensure(cfg, &[]);
    let table = dir.write_rank_table(&place.rank_table)?;
    install_signal_handlers();
    let mut started = start_ranks(job, &table, &place)?;
    let mut outcome = supervise(job, &mut started.ranks, control.as_ref());
    if let Some(c) = &control {
        if let Some(f) = c.finish(&|| SIGNALLED.load(Ordering::SeqCst) != 0) {
            outcome.remote.get_or_insert(f);
        }
    }
    started.drain_output();
    drop(dir);
    Ok(summarize(job, &started.ranks, &outcome))
}

/// Where this launcher's ranks are in the job.
struct Place {
    job_id: String,
    /// Name of the job directory on this node.
    dir_name: String,
    rank_table: String,
    first_rank: usize,
    world: usize,
    /// `MASTER_ADDR`, `MASTER_PORT`.
    master: (String, String),
    node_rank: u32,
}

/// The job's directory, `<node dir>/jobs/<job id>`, removed when the job ends.
struct JobDir(PathBuf);

impl JobDir {
    fn create(path: PathBuf) -> CliResult<JobDir> {
        std::fs::create_dir_all(&path).map_err(|e| {
            crate::args::failure(format!(
                "cannot create the job directory {}: {e}",
                path.display()
            ))
        })?;
        Ok(JobDir(path))
    }

    /// Name this process as the job's launcher: the node's reaper removes the directory once
    /// it is gone, even when it is killed (its ranks then get SIGTERM: PR_SET_PDEATHSIG).
    fn name_launcher(&self) -> CliResult<()> {
        let me = std::process::id();
        let start = npu_emu_ffi::os::process_start_time(me).unwrap_or(0);
        let f = self.0.join(npu_emu::node::reaper::LAUNCHER_FILE);
        std::fs::write(&f, format!("{me} {start}\n"))
            .map_err(|e| crate::args::failure(format!("cannot write {}: {e}", f.display())))
    }

    /// Write the job's rank table; returns its path.
    fn write_rank_table(&self, text: &str) -> CliResult<PathBuf> {
        let table = self.0.join("rank_table.json");
        std::fs::write(&table, text).map_err(|e| {
            crate::args::failure(format!(
                "cannot write the rank table {}: {e}",
                table.display()
            ))
        })?;
        Ok(table)
    }
}

impl Drop for JobDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        if let Some(parent) = self.0.parent() {
            let _ = std::fs::remove_dir(parent); // only when no other job is running
        }
    }
}

/// The running ranks and the threads copying their output.
struct Started {
    ranks: Vec<Rank>,
    pumps: Vec<JoinHandle<()>>,
    /// Output pipes still open.
    live: Arc<AtomicUsize>,
}

/// `MASTER_ADDR` and `MASTER_PORT` for the ranks' torch.distributed rendezvous: the
/// caller's, else 127.0.0.1 and a port that is free now (as torchrun picks one).
fn torch_rendezvous() -> (String, String) {
    let addr = std::env::var("MASTER_ADDR").unwrap_or_else(|_| "127.0.0.1".to_string());
    let port = match std::env::var("MASTER_PORT") {
        Ok(p) => p,
        Err(_) => std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port().to_string())
            .unwrap_or_else(|_| "29500".to_string()),
    };
    (addr, port)
}

/// The command that starts rank `r`: its environment, piped output, and its own process
/// group; it dies with the launcher.
fn rank_command(job: &Job, r: usize, table: &Path, place: &Place, stdin_is_tty: bool) -> Command {
    let g = place.first_rank + r;
    let mut cmd = Command::new(&job.program);
    cmd.args(&job.args)
        .env("RANK_ID", g.to_string())
        .env("RANK_SIZE", place.world.to_string())
        .env("ASCEND_DEVICE_ID", job.devices[r].to_string())
        .env("RANK_TABLE_FILE", table)
        .env("NPU_EMU_JOB_ID", &place.job_id)
        .env("RANK", g.to_string())
        .env("WORLD_SIZE", place.world.to_string())
        .env("LOCAL_RANK", r.to_string())
        .env("LOCAL_WORLD_SIZE", job.ranks.to_string())
        .env("GROUP_RANK", place.node_rank.to_string())
        .env("MASTER_ADDR", &place.master.0)
        .env("MASTER_PORT", &place.master.1)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if g == 0 && !stdin_is_tty {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .process_group(0);
    // SAFETY: prctl is async-signal-safe; a rank dies with the launcher.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    cmd
}

/// Start every rank with its output pumps. If one cannot start, the ones started are
/// killed and the error (exit code 127) names the rank and the program.
fn start_ranks(job: &Job, table: &Path, place: &Place) -> CliResult<Started> {
    // SAFETY: isatty on a valid descriptor number.
    let stdin_is_tty = unsafe { libc::isatty(0) } == 1;
    let mut s = Started {
        ranks: Vec::with_capacity(job.ranks),
        pumps: Vec::new(),
        live: Arc::new(AtomicUsize::new(0)),
    };
    for r in 0..job.ranks {
        let mut child = match rank_command(job, r, table, place, stdin_is_tty).spawn() {
            Ok(c) => c,
            Err(e) => {
                signal_all(&mut s.ranks, libc::SIGKILL);
                for r in s.ranks.iter_mut() {
                    let _ = r.child.wait();
                }
                let why = if e.kind() == std::io::ErrorKind::NotFound {
                    "no such program (give a path, or put it on PATH)".to_string()
                } else {
                    e.to_string()
                };
                return Err(CliError {
                    msg: format!(
                        "cannot start rank {}: {}: {why}",
                        place.first_rank + r,
                        job.program
                    ),
                    code: 127,
                    usage: false,
                });
            }
        };
        s.pump_output(&mut child, place.first_rank + r);
        let pid = child.id() as i32;
        s.ranks.push(Rank {
            child,
            pid,
            global: place.first_rank + r,
            status: None,
            stopped: false,
        });
    }
    Ok(s)
}

impl Started {
    /// Copy rank `r`'s stdout and stderr, each line prefixed `[rank R] `.
    fn pump_output(&mut self, child: &mut Child, r: usize) {
        let prefix = format!("[rank {r}] ");
        if let Some(o) = child.stdout.take() {
            self.live.fetch_add(1, Ordering::SeqCst);
            let (p, l) = (prefix.clone(), self.live.clone());
            self.pumps
                .push(std::thread::spawn(move || pump(o, p, false, l)));
        }
        if let Some(e) = child.stderr.take() {
            self.live.fetch_add(1, Ordering::SeqCst);
            let (p, l) = (prefix, self.live.clone());
            self.pumps
                .push(std::thread::spawn(move || pump(e, p, true, l)));
        }
    }

    /// Let the output pumps drain; a rank's background child may hold a pipe open, so do
    /// not wait for it forever.
    fn drain_output(&mut self) {
        let drain_until = Instant::now() + Duration::from_secs(2);
        while self.live.load(Ordering::SeqCst) > 0 && Instant::now() < drain_until {
            std::thread::sleep(Duration::from_millis(5));
        }
        if self.live.load(Ordering::SeqCst) == 0 {
            for p in self.pumps.drain(..) {
                let _ = p.join();
            }
        }
    }
}

/// How a job ended, as [`supervise`] saw it.
#[derive(Default)]
struct Outcome {
    /// The first rank that failed on its own, and how.
    first_failure: Option<(usize, ExitStatus)>,
    timed_out: bool,
    /// The signal that interrupted the launcher.
    interrupted: Option<i32>,
    /// A failure on another node of a multi-node job, in words.
    remote: Option<String>,
}

/// Watch the ranks until all have ended: forward the launcher's signals, stop the others
/// when one fails or the timeout passes, and escalate to SIGKILL after the grace period.
fn supervise(job: &Job, ranks: &mut [Rank], control: Option<&crate::nodes::Control>) -> Outcome {
    let start = Instant::now();
    let mut out = Outcome::default();
    let mut kill_at: Option<Instant> = None;
    loop {
        forward_signals(ranks, &mut out, &mut kill_at);
        reap(ranks, &mut out);
        if let Some((i, st)) = out.first_failure {
            if kill_at.is_none() {
                if let Some(c) = control {
                    c.report_failure(&format!("rank {} {}", ranks[i].global, describe(st)));
                }
                signal_all(ranks, libc::SIGTERM);
                kill_at = Some(Instant::now() + GRACE);
            }
        }
        if let Some(f) = control.and_then(|c| c.failed_elsewhere()) {
            if out.remote.is_none() && kill_at.is_none() && out.first_failure.is_none() {
                let running = running(ranks);
                if !running.is_empty() {
                    say(&format!(
                        "{f}; stopping the ranks of this node ({})",
                        list(&running)
                    ));
                    signal_all(ranks, libc::SIGTERM);
                    kill_at = Some(Instant::now() + GRACE);
                }
                out.remote = Some(f);
            }
        }
        if let Some(t) = job.timeout {
            if !out.timed_out && kill_at.is_none() && start.elapsed() >= t {
                out.timed_out = true;
                say(&format!(
                    "timed out after {} s; ranks still running: {}; stopping them",
                    t.as_secs_f64(),
                    list(&running(ranks))
                ));
                signal_all(ranks, libc::SIGTERM);
                kill_at = Some(Instant::now() + GRACE);
            }
        }
        if ranks.iter().all(|r| r.status.is_some()) {
            return out;
        }
        if kill_at.is_some_and(|k| Instant::now() >= k) {
            say(&format!(
                "ranks {} did not stop within {} s; sending SIGKILL",
                list(&running(ranks)),
                GRACE.as_secs()
            ));
            signal_all(ranks, libc::SIGKILL);
            kill_at = Some(Instant::now() + Duration::from_secs(3600));
        }
        std::thread::sleep(POLL);
    }
}

/// Forward a signal the launcher received to every rank (a second one kills them).
fn forward_signals(ranks: &mut [Rank], out: &mut Outcome, kill_at: &mut Option<Instant>) {
    let sig = SIGNALLED.swap(0, Ordering::SeqCst);
    if sig == 0 {
        return;
    }
    if out.interrupted.is_some() {
        // A second Ctrl-C: no more grace.
        signal_all(ranks, libc::SIGKILL);
    } else {
        say(&format!(
            "received {}; forwarding it to every rank",
            signal_name(sig)
        ));
        out.interrupted = Some(sig);
        signal_all(ranks, sig);
        kill_at.get_or_insert(Instant::now() + GRACE);
    }
}

/// Collect the ranks that ended; the first to fail on its own is the job's failure.
fn reap(ranks: &mut [Rank], out: &mut Outcome) {
    for (i, r) in ranks.iter_mut().enumerate() {
        if r.status.is_some() {
            continue;
        }
        if let Ok(Some(st)) = r.child.try_wait() {
            r.status = Some(st);
            let failed = !st.success();
            if failed && out.first_failure.is_none() && !r.stopped && out.interrupted.is_none() {
                out.first_failure = Some((i, st));
                say(&format!(
                    "rank {} {}; stopping the other ranks",
                    r.global,
                    describe(st)
                ));
            }
        }
    }
}

/// The ranks still running (their numbers in the job).
fn running(ranks: &[Rank]) -> Vec<usize> {
    ranks
        .iter()
        .filter(|r| r.status.is_none())
        .map(|r| r.global)
        .collect()
}

/// Say how the job ended and give the launcher's exit code.
fn summarize(job: &Job, ranks: &[Rank], out: &Outcome) -> u8 {
    let first = out.first_failure.map(|f| f.0);
    let stopped: Vec<usize> = (0..ranks.len())
        .filter(|&i| ranks[i].stopped && Some(i) != first)
        .map(|i| ranks[i].global)
        .collect();
    let mut stopped_note = if stopped.is_empty() {
        String::new()
    } else {
        format!(" (stopped: rank {})", list(&stopped))
    };
    // Ranks that failed on their own besides the first (e.g. all ranks of a collective).
    let also: Vec<String> = (0..ranks.len())
        .filter(|&i| Some(i) != first && !ranks[i].stopped)
        .filter_map(|i| match ranks[i].status {
            Some(st) if !st.success() => Some(format!("rank {} {}", ranks[i].global, describe(st))),
            _ => None,
        })
        .collect();
    if !also.is_empty() {
        stopped_note.push_str(&format!("; also failed: {}", also.join(", ")));
    }
    if let Some(sig) = out.interrupted {
        say(&format!(
            "interrupted by {}{stopped_note}",
            signal_name(sig)
        ));
        return (128 + sig) as u8;
    }
    if let Some((i, st)) = out.first_failure {
        say(&format!(
            "job failed: rank {} {}{stopped_note}",
            ranks[i].global,
            describe(st)
        ));
        let code = match (st.code(), st.signal()) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            _ => 1,
        };
        return u8::try_from(code).ok().filter(|&c| c != 0).unwrap_or(1);
    }
    if out.timed_out {
        let t = job.timeout.unwrap_or_default().as_secs_f64();
        say(&format!("job failed: timed out after {t} s{stopped_note}"));
        return 124;
    }
    if let Some(f) = &out.remote {
        say(&format!("job failed on another node: {f}{stopped_note}"));
        return 1;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parse_command_lines() {
        let j = parse(&v(&["-n", "4", "prog", "-n", "x"]), 8).unwrap();
        assert_eq!(j.ranks, 4);
        assert_eq!(j.devices, vec![0, 1, 2, 3]);
        assert_eq!(j.program, "prog");
        assert_eq!(j.args, v(&["-n", "x"]));
        let j = parse(&v(&["--devices=4,5", "--timeout", "2.5", "p"]), 8).unwrap();
        assert_eq!((j.ranks, j.devices.clone()), (2, vec![4, 5]));
        assert_eq!(j.timeout, Some(Duration::from_millis(2500)));
        let e = parse(&v(&["-n", "9", "p"]), 8).unwrap_err();
        assert!(e.msg.contains("only 8 visible devices"), "{}", e.msg);
        let e = parse(&v(&["-n", "2", "--devices", "0", "p"]), 8).unwrap_err();
        assert!(
            e.msg.contains("lists 1 devices but -n asks for 2"),
            "{}",
            e.msg
        );
        let e = parse(&v(&["--devices", "0,8", "p"]), 8).unwrap_err();
        assert!(e.msg.contains("device 8 does not exist"), "{}", e.msg);
        assert!(parse(&v(&["-n", "2"]), 8)
            .unwrap_err()
            .msg
            .contains("missing PROGRAM"));
        assert!(parse(&v(&["p"]), 8).unwrap_err().msg.contains("missing -n"));
        assert!(parse(&v(&["-x", "p"]), 8)
            .unwrap_err()
            .msg
            .contains("unknown option"));
    }

    #[test]
    fn multi_node_options() {
        let j = parse(
            &v(&[
                "--nnodes",
                "2",
                "--node-rank",
                "1",
                "--master-addr",
                "10.0.0.1",
                "--master-port",
                "6000",
                "-n",
                "3",
                "p",
            ]),
            8,
        )
        .unwrap();
        assert_eq!(
            j.nodes,
            Some(crate::nodes::NodeOpts {
                nnodes: 2,
                node_rank: 1,
                master_addr: "10.0.0.1".into(),
                master_port: 6000
            })
        );
        assert_eq!(j.ranks, 3);
        let j = parse(
            &v(&["--nnodes", "2", "--node-rank", "0", "-n", "1", "p"]),
            8,
        )
        .unwrap();
        let o = j.nodes.unwrap();
        assert_eq!(
            (o.master_addr.as_str(), o.master_port),
            ("127.0.0.1", 29500)
        );
        assert_eq!(
            parse(&v(&["--nnodes", "1", "-n", "1", "p"]), 8)
                .unwrap()
                .nodes,
            None
        );
        for (args, want) in [
            (
                vec!["--nnodes", "2", "-n", "1", "p"],
                "give --node-rank I (0 to 1)",
            ),
            (
                vec!["--nnodes", "2", "--node-rank", "2", "-n", "1", "p"],
                "--node-rank \"2\": expected 0 to 1",
            ),
            (vec!["--nnodes", "0", "-n", "1", "p"], "--nnodes \"0\""),
            (
                vec![
                    "--nnodes",
                    "2",
                    "--node-rank",
                    "0",
                    "--master-port",
                    "0",
                    "-n",
                    "1",
                    "p",
                ],
                "--master-port \"0\"",
            ),
            (
                vec!["--node-rank", "1", "-n", "1", "p"],
                "give --nnodes M too",
            ),
        ] {
            let e = parse(&v(&args), 8).unwrap_err();
            assert!(e.msg.contains(want), "{args:?}: {}", e.msg);
        }
    }

    #[test]
    fn rank_table_is_version_1_0_with_strings() {
        let t: serde_json::Value = serde_json::from_str(&rank_table(&[3, 5])).unwrap();
        assert_eq!(t["version"], "1.0");
        assert_eq!(t["server_count"], "1");
        let devs = &t["server_list"][0]["device"];
        assert_eq!(devs[1]["device_id"], "5");
        assert_eq!(devs[1]["rank_id"], "1");
        assert_eq!(t["server_list"][0]["server_id"], "127.0.0.1");
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(describe(ExitStatus::from_raw(1 << 8)), "exited with code 1");
        assert_eq!(
            describe(ExitStatus::from_raw(libc::SIGKILL)),
            "was killed by SIGKILL"
        );
    }
}
