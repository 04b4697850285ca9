//! HCCL across emulated hosts (network namespaces joined by veth links, see
//! `npu_emu_tests::hosts`).

use npu_emu_tests::hosts::Hosts;
use npu_emu_tests::{run, scratch};

/// The harness itself: two hosts with their own names and addresses reach each other.
#[test]
fn hosts_reach_each_other() {
    let work = scratch("hosts-smoke");
    let h = Hosts::create(2, &work);
    let py = "import socket,sys\n\
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
if sys.argv[1]=='serve':\n    s.bind(('0.0.0.0', 45000)); s.listen(1); c,_=s.accept(); c.sendall(socket.gethostname().encode()); c.close()\n\
else:\n    import time\n    for i in range(100):\n        try:\n            s.connect((sys.argv[2], 45000)); break\n        except OSError:\n            time.sleep(0.05)\n    print(socket.gethostname(), 'got', s.recv(100).decode())\n";
    let mut server = h.command(1, "python3".as_ref(), &work);
    server.args(["-c", py, "serve"]);
    let mut srv = server.spawn().unwrap();
    let mut client = h.command(0, "python3".as_ref(), &work);
    client.args(["-c", py, "connect", &h.ip(1)]);
    let r = run(client);
    let _ = srv.wait();
    r.assert_ok();
    assert!(r.stdout.contains("npuemu-h0 got npuemu-h1"), "{}", r.all());
}
