#!/usr/bin/env python3
"""A misbehaving peer of an npu-emu HCCL job across servers, for the fault tests.

It speaks npu-emu's wire format (libhccl/src/net/frame.rs): the SHA-256 handshake over a key
derived from the communicator id, 40-byte frame headers with an FNV-1a check, join requests
with a rank's record.

    hccl_net_peer.py stranger ROOTINFO_FILE
        connect to the root named in the root info and present a wrong id; print "dropped"
        when the root closes the connection without talking to it
    hccl_net_peer.py garbage ROOTINFO_FILE RANK NRANKS
        join as rank RANK (with the right id, on a server of its own), then, when a real
        rank connects to it, complete the handshake and send garbage instead of frames
"""
import hashlib
import os
import socket
import struct
import sys
import time

HANDSHAKE = b"NPUHCCL1"
TO_ROOT = 0xFFFFFFFF


def read_root_info(path):
    for _ in range(600):
        if os.path.exists(path):
            break
        time.sleep(0.05)
    b = open(path, "rb").read()
    assert b[:16] == b"NPUEMU-HCCLROOT\0", "not an npu-emu root info"
    ident = b[20:36]
    port = struct.unpack_from("<H", b, 40)[0]
    assert b[42] == 4, "IPv4 root expected"
    ip = socket.inet_ntoa(b[112:116])
    return ident, ip, port


def key(ident):
    return hashlib.sha256(b"npu-emu hccl network key v1" + ident).digest()


def mac(k, what, parts):
    h = hashlib.sha256(k + what)
    for p in parts:
        h.update(struct.pack("<I", len(p)) + p)
    return h.digest()


def recv_exact(s, n):
    out = b""
    while len(out) < n:
        c = s.recv(n - len(out))
        if not c:
            raise EOFError("closed after %d of %d bytes" % (len(out), n))
        out += c
    return out


def fnv(b):
    h = 0xCBF29CE484222325
    for x in b:
        h ^= x
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def frame(kind, comm, tag, payload):
    h = b"HFR1" + bytes([kind, 0, 0, 0]) + struct.pack("<QQQ", comm, tag, len(payload))
    return h + struct.pack("<Q", fnv(h)) + payload


def sstr(b):
    return struct.pack("<I", len(b)) + b


def client_handshake(s, k, frm, to):
    ch = recv_exact(s, 24)
    assert ch[:8] == HANDSHAKE
    nonce = os.urandom(16)
    m = mac(k, b"hello", [ch[8:24], nonce, struct.pack("<I", frm), struct.pack("<I", to)])
    s.sendall(HANDSHAKE + nonce + struct.pack("<II", frm, to) + m)
    recv_exact(s, 32)


def server_handshake(s, k):
    nonce = os.urandom(16)
    s.sendall(HANDSHAKE + nonce)
    h = recv_exact(s, 64)
    frm, to = struct.unpack_from("<II", h, 24)
    w = mac(k, b"welcome", [h[8:24], nonce, struct.pack("<I", to), struct.pack("<I", frm)])
    s.sendall(w)
    return frm


def stranger(path):
    ident, ip, port = read_root_info(path)
    s = socket.create_connection((ip, port), timeout=10)
    ch = recv_exact(s, 24)
    wrong = key(bytes(16))
    nonce = os.urandom(16)
    m = mac(wrong, b"hello", [ch[8:24], nonce, struct.pack("<I", 1), struct.pack("<I", TO_ROOT)])
    s.sendall(HANDSHAKE + nonce + struct.pack("<II", 1, TO_ROOT) + m)
    try:
        got = s.recv(100)
    except ConnectionResetError:
        got = b""
    print("dropped" if got == b"" else "ANSWERED %r" % got, flush=True)


def garbage(path, rank, n):
    ident, ip, port = read_root_info(path)
    k = key(ident)
    s = socket.create_connection((ip, port), timeout=30)
    client_handshake(s, k, rank, TO_ROOT)
    lst = socket.socket()
    lst.bind((s.getsockname()[0], 0))
    lst.listen(8)
    addr = "%s:%d" % lst.getsockname()
    rec = (struct.pack("<III", rank, os.getpid(), 0) + sstr(socket.gethostname().encode())
           + sstr(b"/nowhere") + sstr(os.urandom(32)) + sstr(os.urandom(32)) + sstr(b"fake-server")
           + sstr(addr.encode()))
    s.sendall(frame(5, 0, 0, struct.pack("<I", n) + rec))
    hdr = recv_exact(s, 40)
    recv_exact(s, struct.unpack_from("<Q", hdr, 24)[0])
    assert hdr[4] == 6, "no roster (kind %d)" % hdr[4]
    print("joined as rank %d" % rank, flush=True)
    lst.settimeout(60)
    conns = []
    # Ranks below this one connect to it; answer each with garbage.
    for _ in range(rank):
        c, _ = lst.accept()
        frm = server_handshake(c, k)
        c.sendall(b"\xde\xad\xbe\xef" * 16)
        print("sent garbage to rank %d" % frm, flush=True)
        conns.append(c)
    time.sleep(10)


if __name__ == "__main__":
    if sys.argv[1] == "stranger":
        stranger(sys.argv[2])
    elif sys.argv[1] == "garbage":
        garbage(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("unknown mode " + sys.argv[1])
