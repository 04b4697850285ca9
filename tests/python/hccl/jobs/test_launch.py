"""Whole jobs, started the way users start them: `npu-emu run`, torch-style variables set by
hand, OpenMPI's mpirun, Slurm's and MPICH's variables, torchrun; what each rank sees; one clear
error for each missing or inconsistent variable; and HCCL's failures (mismatched calls, a send
nobody receives, a dead peer, a rank that never comes) reaching Python as HcclError with HCCL's
message. Each job runs on a private emulated node and is killed if it outlives its limit."""

import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

LAUNCH_VARS = [
    "RANK_TABLE_FILE", "RANK_ID", "RANK_SIZE", "ASCEND_DEVICE_ID", "DEVICE_ID", "NPU_EMU_JOB_ID",
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "LOCAL_WORLD_SIZE",
    "PMIX_NAMESPACE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_JOBID", "MPI_LOCALRANKID",
    "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_ID", "SLURM_STEP_ID",
    "HCCL_PY_RENDEZVOUS_DIR", "ASCEND_RT_VISIBLE_DEVICES",
]
_n = itertools.count()


@pytest.fixture
def job(tmp_path):
    """Run jobs on a private node: job(script, ranks_env_list or launcher args, ...)."""
    node = f"/dev/shm/npu-emu-test-pyjobs-{os.getpid()}-{next(_n)}"
    base = {k: v for k, v in os.environ.items()
            if k not in LAUNCH_VARS and not k.startswith(("OMPI_", "TORCHELASTIC_"))}
    base.update(NPU_EMU_NODE_DIR=node, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")

    class Job:
        env = base
        dir = tmp_path

        def script(self, body, prelude=""):
            p = tmp_path / f"job{next(_n)}.py"
            p.write_text(textwrap.dedent(prelude) + textwrap.dedent(body))
            return str(p)

        def procs(self, path, envs, timeout=90, extra=None):
            """One process per env dict (by hand); returns [(code, output)]."""
            ps = []
            for e in envs:
                env = dict(base, **(extra or {}), **{k: str(v) for k, v in e.items()})
                ps.append(subprocess.Popen([sys.executable, path], env=env, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, text=True,
                                           start_new_session=True))
            out = []
            for p in ps:
                try:
                    o, _ = p.communicate(timeout=timeout)
                except subprocess.TimeoutExpired:
                    for q in ps:
                        try:
                            os.killpg(q.pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                    pytest.fail(f"job still running after {timeout} s (killed)")
                out.append((p.returncode, o))
            return out

        def cmd(self, argv, timeout=120, extra=None):
            env = dict(base, **(extra or {}))
            p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=timeout)
            return p.returncode, p.stdout

    yield Job()
    shutil.rmtree(node, ignore_errors=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


WHO = """
import hccl, numpy as np
r, n = hccl.get_rank(), hccl.get_world_size()
x = np.full(4, r + 1, dtype=np.float32)
hccl.all_reduce(x, op=hccl.Sum)
assert (x == n * (n + 1) / 2).all(), x
print(f"rank {r} of {n} on device {hccl.get_device()}: ok")
"""


def lines(outs):
    return "\n----\n".join(o for _, o in outs)


def test_no_launcher_is_a_world_of_one(job):
    [(code, out)] = job.procs(job.script(WHO), [{}])
    assert code == 0, out
    assert "rank 0 of 1 on device 0: ok" in out


def test_npu_emu_run(job):
    code, out = job.cmd(["npu-emu", "run", "-n", "3", sys.executable, job.script(WHO)])
    assert code == 0, out
    for r in range(3):
        assert f"[rank {r}] rank {r} of 3 on device {r}: ok" in out, out


def test_npu_emu_run_shared_devices(job):
    code, out = job.cmd(["npu-emu", "run", "--devices", "2,2", sys.executable, job.script(WHO)])
    assert code == 0, out
    assert "rank 1 of 2 on device 2: ok" in out, out


def test_torch_style_variables_by_hand(job):
    port = free_port()
    envs = [dict(RANK=r, WORLD_SIZE=3, LOCAL_RANK=r, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
            for r in range(3)]
    outs = job.procs(job.script(WHO), envs)
    for r, (code, out) in enumerate(outs):
        assert code == 0, lines(outs)
        assert f"rank {r} of 3 on device {r}: ok" in out


def test_torch_style_world_of_one_needs_no_master(job):
    [(code, out)] = job.procs(job.script(WHO), [dict(RANK=0, WORLD_SIZE=1)])
    assert code == 0 and "rank 0 of 1" in out, out


def test_slurm_variables_and_the_rendezvous_file(job):
    envs = [dict(SLURM_PROCID=r, SLURM_NTASKS=2, SLURM_LOCALID=r, SLURM_JOB_ID=4242, SLURM_STEP_ID=0,
                 HCCL_PY_RENDEZVOUS_DIR=str(job.dir)) for r in range(2)]
    outs = job.procs(job.script(WHO), envs)
    for r, (code, out) in enumerate(outs):
        assert code == 0, lines(outs)
        assert f"rank {r} of 2 on device {r}: ok" in out
    assert not list(job.dir.glob("hccl-py-rootinfo-*")), "rank 0 removes the root-info file"


def test_mpich_variables(job):
    envs = [dict(PMI_RANK=r, PMI_SIZE=2, MPI_LOCALRANKID=r, PMI_JOBID="kvs_77",
                 HCCL_PY_RENDEZVOUS_DIR=str(job.dir)) for r in range(2)]
    outs = job.procs(job.script(WHO), envs)
    assert all(c == 0 for c, _ in outs), lines(outs)


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="OpenMPI's mpirun is not installed")
def test_openmpi_mpirun(job):
    argv = ["mpirun", "-n", "3", "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    code, out = job.cmd(argv + [sys.executable, job.script(WHO)])
    assert code == 0, out
    for r in range(3):
        assert f"rank {r} of 3 on device {r}: ok" in out, out


def have_torch():
    try:
        import torch.distributed  # noqa: F401
        return True
    except Exception:
        return False


@pytest.mark.skipif(not have_torch(), reason="torch is not installed")
def test_torchrun(job):
    port = free_port()
    code, out = job.cmd([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                         "--master-addr", "127.0.0.1", "--master-port", str(port),
                         job.script(WHO)], timeout=240,
                        extra={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert code == 0, out
    assert "rank 0 of 2 on device 0: ok" in out and "rank 1 of 2 on device 1: ok" in out, out


@pytest.mark.parametrize("env,msg", [
    (dict(RANK=0), "RANK is set but WORLD_SIZE is not"),
    (dict(WORLD_SIZE=2), "WORLD_SIZE is set but RANK is not"),
    (dict(RANK=0, WORLD_SIZE=2), "MASTER_ADDR and MASTER_PORT are not set"),
    (dict(RANK=0, WORLD_SIZE=2, MASTER_ADDR="127.0.0.1"), "MASTER_PORT is not set"),
    (dict(RANK=0, WORLD_SIZE=2, MASTER_PORT=1234), "MASTER_ADDR is not set"),
    (dict(RANK=0, WORLD_SIZE=2, MASTER_ADDR="h", MASTER_PORT="http"), "MASTER_PORT='http' is not a TCP port"),
    (dict(RANK=2, WORLD_SIZE=2), "the rank must be below the size"),
    (dict(RANK="x", WORLD_SIZE=2), "RANK='x' is not a non-negative integer"),
    (dict(RANK_ID=0, RANK_SIZE=2), "RANK_ID=0 and RANK_SIZE=2 are set but RANK_TABLE_FILE is not"),
    (dict(RANK_TABLE_FILE="/nonexistent/table.json", RANK_ID=0), "RANK_TABLE_FILE=/nonexistent/table.json does not exist"),
    (dict(RANK_TABLE_FILE="/etc/hostname"), "RANK_TABLE_FILE=/etc/hostname is set but RANK_ID is not"),
    (dict(OMPI_COMM_WORLD_RANK=0), "OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is not"),
    (dict(SLURM_NTASKS=4), "SLURM_NTASKS is set but SLURM_PROCID is not"),
    (dict(SLURM_PROCID=0, SLURM_NTASKS=2), "no job id in its environment"),
    (dict(ASCEND_DEVICE_ID=99), "rank 0 would use device 99 (ASCEND_DEVICE_ID), but this process sees 8 devices"),
])
def test_one_clear_error_for_what_is_missing(job, env, msg):
    prelude = ""
    body = """
    import hccl
    try:
        hccl.get_rank()
    except ValueError as e:
        print("ValueError:", e)
        raise SystemExit(3)
    """
    [(code, out)] = job.procs(job.script(body, prelude), [env], timeout=30)
    assert code == 3, out
    assert msg in out, out
    assert out.count("ValueError:") == 1


def test_ranks_that_disagree_on_the_world_size(job):
    port = free_port()
    prelude = ""
    body = """
    import hccl
    try:
        hccl.init_comm_group()
    except Exception as e:
        print(type(e).__name__, e)
        raise SystemExit(3)
    """
    envs = [dict(RANK=0, WORLD_SIZE=2, MASTER_ADDR="127.0.0.1", MASTER_PORT=port),
            dict(RANK=1, WORLD_SIZE=3, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)]
    outs = job.procs(job.script(body, prelude), envs, extra={"HCCL_CONNECT_TIMEOUT": "20"})
    assert all(c == 3 for c, _ in outs), lines(outs)
    assert "the ranks disagree on WORLD_SIZE or RANK" in lines(outs)


ERR = """
import sys, time, os, hccl, numpy as np
r = int(os.environ.get("RANK", os.environ.get("RANK_ID", "0")))
def fail(e):
    print(f"rank {r}: {type(e).__name__} code={getattr(e, 'code', None)} name={getattr(e, 'name', None)}")
    print(f"rank {r}: message: {e}")
    sys.stdout.flush()
    os._exit(3)
"""


def test_mismatched_calls_reach_every_rank(job):
    prelude = ERR
    body = """
    n = 512 if r == 1 else 1024
    try:
        hccl.all_reduce(np.zeros(n, dtype=np.float32))
    except hccl.HcclError as e:
        assert isinstance(e, RuntimeError)
        fail(e)
    print(f"rank {r}: no error")
    """
    # By hand, so that no launcher stops the other ranks when the first one fails.
    port = free_port()
    envs = [dict(RANK=r, WORLD_SIZE=3, MASTER_ADDR="127.0.0.1", MASTER_PORT=port) for r in range(3)]
    outs = job.procs(job.script(body, prelude), envs, extra={"HCCL_EXEC_TIMEOUT": "30"})
    out = lines(outs)
    for r in range(3):
        assert outs[r][0] == 3, out
        assert f"rank {r}: HcclError code=1 name=HCCL_E_PARA" in outs[r][1], out
    msg = [l for l in outs[0][1].splitlines() if l.startswith("rank 0: message:")][0]
    assert "HCCL_E_PARA (1): HcclAllReduce" in msg and "differ in count" in msg, msg
    assert "HcclAllReduce(count=1024" in out and "HcclAllReduce(count=512" in out, out


def test_a_send_nobody_receives_times_out_naming_the_peer(job):
    prelude = ERR
    body = """
    hccl.init_comm_group()
    if r == 0:
        try:
            hccl.send(np.zeros(16, dtype=np.float32), dst=1)
        except hccl.HcclError as e:
            open(os.environ["DONE"], "w").close()
            fail(e)
    else:
        while not os.path.exists(os.environ["DONE"]):
            time.sleep(0.05)
    """
    done = str(job.dir / "done")
    code, out = job.cmd(["npu-emu", "run", "-n", "2", sys.executable, job.script(body, prelude)],
                        extra={"HCCL_EXEC_TIMEOUT": "2", "DONE": done})
    assert code == 3, out
    assert "rank 0: HcclError code=9 name=HCCL_E_TIMEOUT" in out, out
    assert "timed out after 2 s" in out and "rank 1 to post the HcclRecv matching this HcclSend" in out, out


def test_a_dead_peer_is_named(job):
    prelude = ERR
    body = """
    hccl.init_comm_group()
    if r == 2:
        os.kill(os.getpid(), 9)
    try:
        hccl.all_reduce(np.zeros(1024, dtype=np.float32))
    except hccl.HcclError as e:
        fail(e)
    """
    port = free_port()
    envs = [dict(RANK=r, WORLD_SIZE=3, MASTER_ADDR="127.0.0.1", MASTER_PORT=port) for r in range(3)]
    outs = job.procs(job.script(body, prelude), envs, extra={"HCCL_EXEC_TIMEOUT": "60", "HCCL_CONNECT_TIMEOUT": "30"})
    assert outs[2][0] == -9, lines(outs)
    for r in (0, 1):
        code, out = outs[r]
        assert code == 3, lines(outs)
        assert "HcclError" in out and "rank 2 (pid" in out and "died" in out, out


def test_a_rank_that_never_comes(job):
    prelude = ERR
    body = """
    try:
        hccl.init_comm_group()
    except hccl.HcclError as e:
        fail(e)
    """
    port = free_port()
    outs = job.procs(job.script(body, prelude), [dict(RANK=0, WORLD_SIZE=3, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)],
                     extra={"HCCL_CONNECT_TIMEOUT": "2"})
    code, out = outs[0]
    assert code == 3, out
    assert "HcclError code=9 name=HCCL_E_TIMEOUT" in out
    assert "rank 0 waited for ranks [1, 2] to fetch HCCL's root info at MASTER_PORT" in out, out
    assert "HCCL_CONNECT_TIMEOUT=2 s" in out
    outs = job.procs(job.script(body, prelude), [dict(RANK=1, WORLD_SIZE=2, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)],
                     extra={"HCCL_CONNECT_TIMEOUT": "2"})
    code, out = outs[0]
    assert code == 3 and "rank 1 could not get HCCL's root info from rank 0 at MASTER_ADDR=127.0.0.1" in out, out


def test_rank_table_device_mismatch_is_hccls_message(job):
    """A rank table naming another device than the process's: HCCL's own check, with where it
    happened."""
    table = job.dir / "table.json"
    table.write_text('{"status": "completed", "version": "1.0", "server_count": "1", "server_list": '
                     '[{"server_id": "127.0.0.1", "device": [{"device_id": "3", "rank_id": "0"}]}]}')
    prelude = ERR
    body = """
    try:
        hccl.init_comm_group()
    except hccl.HcclError as e:
        fail(e)
    """
    [(code, out)] = job.procs(job.script(body, prelude), [dict(RANK_TABLE_FILE=table, RANK_ID=0, ASCEND_DEVICE_ID=1)])
    assert code == 3, out
    assert "HcclCommInitClusterInfo" in out, out
    assert "building the world communicator of rank 0 from a rank table" in out and "on device 1" in out, out


def test_import_without_the_libraries(job):
    env = {k: v for k, v in job.env.items() if k not in ("LD_LIBRARY_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")}
    p = subprocess.run([sys.executable, "-c", "import hccl"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=60)
    assert p.returncode != 0
    assert "ImportError: hccl: cannot load libascendcl.so" in p.stdout, p.stdout
    assert "source the set_env.sh" in p.stdout


def test_found_through_ascend_home_path(job):
    """Without LD_LIBRARY_PATH, ASCEND_HOME_PATH/lib64 is where the libraries are found."""
    env = {k: v for k, v in job.env.items() if k != "LD_LIBRARY_PATH"}
    p = subprocess.run([sys.executable, "-c", "import hccl; print(hccl.__libraries__); print(hccl.get_world_size())"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert p.returncode == 0, p.stdout
    assert os.environ["ASCEND_HOME_PATH"] + "/lib64/libhccl.so" in p.stdout, p.stdout


def have_torch_npu():
    p = subprocess.run([sys.executable, "-c", "import torch, torch_npu"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=300)
    return p.returncode == 0


def test_torch_npu_on_another_device_is_explained(job):
    """NPU tensors made before any hccl call (torch_npu picks npu:0) in a rank meant for npu:1:
    HCCL's device check fails, and the error says what to do."""
    if not have_torch_npu():
        if os.environ.get("HCCL_TEST_REQUIRE_NPU") == "1":
            pytest.fail("HCCL_TEST_REQUIRE_NPU=1 but torch_npu does not import")
        pytest.skip("torch_npu is not installed")
    table = job.dir / "table.json"
    table.write_text('{"status": "completed", "version": "1.0", "server_count": "1", "server_list": '
                     '[{"server_id": "127.0.0.1", "device": [{"device_id": "1", "rank_id": "0"}]}]}')
    prelude = ERR
    body = """
    import torch, torch_npu
    x = torch.ones(4).npu()
    try:
        hccl.all_reduce(x)
    except hccl.HcclError as e:
        fail(e)
    """
    [(code, out)] = job.procs(job.script(body, prelude), [dict(RANK_TABLE_FILE=table, RANK_ID=0, ASCEND_DEVICE_ID=1)],
                              timeout=300)
    assert code == 3, out
    assert "HcclError code=7 name=HCCL_E_UNAVAIL" in out, out
    assert "torch_npu was already using npu:0 while ASCEND_DEVICE_ID says 1: call torch.npu.set_device(1)" in out, out
