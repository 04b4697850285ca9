//! Which host address and port a rank listens on, chosen as CANN chooses them (abi.md §3.4):
//! `HCCL_IF_IP` first; else the first interface `HCCL_SOCKET_IFNAME` selects; else the
//! interfaces in name order, ordinary NICs before `docker*` ones before loopback.
//! `HCCL_SOCKET_FAMILY=AF_INET6` prefers IPv6 addresses. A root listens on the first free
//! port of `HCCL_HOST_SOCKET_PORT_RANGE` when it is set (it comes before
//! `HCCL_IF_BASE_PORT`, as in CANN), else of `HCCL_IF_BASE_PORT` .. +31 (60000 by default).
//! A rank's listener for its peers on other servers (the emulated RoCE links) takes the
//! first free port of `HCCL_NPU_SOCKET_PORT_RANGE`, or any port.
//!
//! The settings are read and checked by `npu_emu::config` ([`HostNet`]).

use crate::errors::{HResult, HcclError, HCCL_E_TCP_CONNECT};
use npu_emu::config::{HostNet, IfnameRule, PortRange};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};

/// A network interface address of this host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iface {
    pub name: String,
    pub addr: IpAddr,
    pub up: bool,
    pub loopback: bool,
}

/// Every address of every interface (getifaddrs), in the order the kernel lists them.
pub fn interfaces() -> Vec<Iface> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return out;
    }
    let mut p = head;
    while !p.is_null() {
        // SAFETY: p is a node of the list getifaddrs returned (freed only after the loop).
        let ifa = unsafe { &*p };
        p = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
            continue;
        }
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: ifa_addr points to a sockaddr whose family says its real type.
        let family = unsafe { (*ifa.ifa_addr).sa_family } as i32;
        let addr = match family {
            libc::AF_INET => {
                // SAFETY: the family is AF_INET, so the sockaddr is a sockaddr_in.
                let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                IpAddr::V4(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)))
            }
            libc::AF_INET6 => {
                // SAFETY: the family is AF_INET6, so the sockaddr is a sockaddr_in6.
                let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr))
            }
            _ => continue,
        };
        let flags = ifa.ifa_flags;
        out.push(Iface {
            name,
            addr,
            up: flags & libc::IFF_UP as u32 != 0,
            loopback: flags & libc::IFF_LOOPBACK as u32 != 0,
        });
    }
    // SAFETY: head came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    out
}

/// Whether an interface name passes a `HCCL_SOCKET_IFNAME` rule.
pub fn rule_selects(rule: &IfnameRule, name: &str) -> bool {
    let hit = rule.names.iter().any(|n| {
        if rule.exact {
            name == n
        } else {
            name.starts_with(n.as_str())
        }
    });
    hit != rule.exclude
}

fn usable(i: &Iface, v6: bool) -> bool {
    if !i.up {
        return false;
    }
    match i.addr {
        IpAddr::V4(_) => true,
        // Link-local IPv6 needs a scope id to be reached; skip it.
        IpAddr::V6(a) => v6 && (a.segments()[0] & 0xffc0) != 0xfe80,
    }
}

/// The address this host's rank advertises, and how it was chosen (for messages).
pub fn choose(cfg: &HostNet, ifaces: &[Iface]) -> HResult<(IpAddr, String)> {
    if let Some(ip) = cfg.if_ip {
        return Ok((ip, format!("HCCL_IF_IP={ip}")));
    }
    let family_rank = |a: &IpAddr| match (a, cfg.ipv6) {
        (IpAddr::V6(_), true) | (IpAddr::V4(_), false) => 0,
        _ => 1,
    };
    let mut cands: Vec<&Iface> = ifaces.iter().filter(|i| usable(i, cfg.ipv6)).collect();
    if let Some(rule) = &cfg.ifname {
        let mut sel: Vec<&Iface> = cands
            .iter()
            .copied()
            .filter(|i| rule_selects(rule, &i.name))
            .collect();
        sel.sort_by(|a, b| (&a.name, family_rank(&a.addr)).cmp(&(&b.name, family_rank(&b.addr))));
        return match sel.first() {
            Some(i) => Ok((i.addr, format!("HCCL_SOCKET_IFNAME={} ({})", rule.text, i.name))),
            None => Err(HcclError::new(
                HCCL_E_TCP_CONNECT,
                format!(
                    "HCCL_SOCKET_IFNAME={} selects no interface that is up with an address; this host has: {}",
                    rule.text,
                    list(ifaces)
                ),
            )),
        };
    }
    let class = |i: &Iface| {
        if i.loopback {
            2
        } else if i.name.starts_with("docker") {
            1
        } else {
            0
        }
    };
    cands.sort_by(|a, b| {
        (class(a), &a.name, family_rank(&a.addr)).cmp(&(class(b), &b.name, family_rank(&b.addr)))
    });
    match cands.first() {
        Some(i) => Ok((i.addr, format!("interface {}", i.name))),
        None => Ok((
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            "no interface is up: loopback".to_string(),
        )),
    }
}

fn list(ifaces: &[Iface]) -> String {
    let v: Vec<String> = ifaces
        .iter()
        .map(|i| format!("{} {}{}", i.name, i.addr, if i.up { "" } else { " (down)" }))
        .collect();
    if v.is_empty() {
        "no interfaces".to_string()
    } else {
        v.join(", ")
    }
}

/// First port of the root's range, and whether the user chose it.
pub fn base_port(cfg: &HostNet) -> (u16, bool) {
    match cfg.base_port {
        Some(p) => (p, true),
        None => (60000, false),
    }
}

/// Ports a root tries: 32 from the base, as CANN.
pub const ROOT_PORTS: u16 = 32;

/// Listen as a bootstrap root on `ip`: the first free port of the range; when the user did
/// not set `HCCL_IF_BASE_PORT` and the whole default range is busy (many jobs on one host),
/// any free port (the root info carries it, so nothing else needs to know).
pub fn listen_root(cfg: &HostNet, ip: IpAddr) -> HResult<TcpListener> {
    crate::net::whitelist::get()?;
    if let Some(r) = &cfg.host_ports {
        return listen_in(r, "HCCL_HOST_SOCKET_PORT_RANGE", ip);
    }
    let (base, chosen) = base_port(cfg);
    let mut last = None;
    for port in base..base.saturating_add(ROOT_PORTS) {
        match TcpListener::bind(SocketAddr::new(ip, port)) {
            Ok(l) => return Ok(l),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => last = Some(e),
            Err(e) => return Err(bind_error(ip, port, &e)),
        }
    }
    if !chosen {
        if let Ok(l) = TcpListener::bind(SocketAddr::new(ip, 0)) {
            crate::log(
                npu_emu::config::LogLevel::Info,
                &format!(
                    "ports {base}..{} of {ip} are all in use; the root listens on port {} instead",
                    base + ROOT_PORTS - 1,
                    l.local_addr().map(|a| a.port()).unwrap_or(0)
                ),
            );
            return Ok(l);
        }
    }
    Err(HcclError::new(
        HCCL_E_TCP_CONNECT,
        format!(
            "cannot listen for the ranks on {ip}: ports {base}..{} (HCCL_IF_BASE_PORT) are all in use{}",
            base as u32 + ROOT_PORTS as u32 - 1,
            last.map(|e| format!(" ({e})")).unwrap_or_default()
        ),
    ))
}

/// Listen on `ip`, any port.
pub fn listen_any(ip: IpAddr) -> HResult<TcpListener> {
    TcpListener::bind(SocketAddr::new(ip, 0)).map_err(|e| bind_error(ip, 0, &e))
}

/// A rank's own listener for its peers on other servers: on `ip`, the first free port of
/// `HCCL_NPU_SOCKET_PORT_RANGE`, or any port.
pub fn listen_data(cfg: &HostNet, ip: IpAddr) -> HResult<TcpListener> {
    crate::net::whitelist::get()?;
    match &cfg.npu_ports {
        Some(r) => listen_in(r, "HCCL_NPU_SOCKET_PORT_RANGE", ip),
        None => listen_any(ip),
    }
}

/// Listen on `ip`, on the first free port of `range` (the value of `var`).
pub fn listen_in(range: &PortRange, var: &str, ip: IpAddr) -> HResult<TcpListener> {
    let PortRange::Ports(spans) = range else {
        return listen_any(ip);
    };
    let mut last = None;
    for port in range.ports() {
        match TcpListener::bind(SocketAddr::new(ip, port)) {
            Ok(l) => return Ok(l),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => last = Some(e),
            Err(e) => return Err(bind_error(ip, port, &e)),
        }
    }
    let text: Vec<String> = spans
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    Err(HcclError::new(
        HCCL_E_TCP_CONNECT,
        format!(
            "cannot listen on {ip}: every port of {var}={} is in use{}",
            text.join(","),
            last.map(|e| format!(" ({e})")).unwrap_or_default()
        ),
    ))
}

pub fn bind_error(ip: IpAddr, port: u16, e: &std::io::Error) -> HcclError {
    let hint = if e.kind() == std::io::ErrorKind::AddrNotAvailable {
        " (it is not an address of this host: check HCCL_IF_IP / HCCL_SOCKET_IFNAME)"
    } else {
        ""
    };
    HcclError::new(
        HCCL_E_TCP_CONNECT,
        format!("cannot listen on {}: {e}{hint}", SocketAddr::new(ip, port)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ifc(name: &str, addr: &str, up: bool) -> Iface {
        let addr: IpAddr = addr.parse().unwrap();
        Iface {
            name: name.into(),
            addr,
            up,
            loopback: addr.is_loopback(),
        }
    }

    fn rule(text: &str) -> IfnameRule {
        npu_emu::config::parse_ifname(text).unwrap()
    }

    #[test]
    fn cann_order() {
        let all = vec![
            ifc("lo", "127.0.0.1", true),
            ifc("docker0", "172.17.0.1", true),
            ifc("eth1", "10.0.1.5", true),
            ifc("eth0", "10.0.0.5", false),
            ifc("enp3", "10.0.3.5", true),
            ifc("eth1", "fd00::5", true),
        ];
        let mut cfg = HostNet::default();
        assert_eq!(choose(&cfg, &all).unwrap().0.to_string(), "10.0.3.5");
        cfg.ipv6 = true;
        assert_eq!(choose(&cfg, &all).unwrap().0.to_string(), "10.0.3.5");
        cfg.ipv6 = false;
        cfg.ifname = Some(rule("eth"));
        assert_eq!(choose(&cfg, &all).unwrap().0.to_string(), "10.0.1.5");
        cfg.ifname = Some(rule("^eth,enp"));
        assert_eq!(choose(&cfg, &all).unwrap().0.to_string(), "172.17.0.1");
        cfg.ifname = Some(rule("=lo"));
        assert_eq!(choose(&cfg, &all).unwrap().0.to_string(), "127.0.0.1");
        cfg.ifname = Some(rule("=eth0"));
        let e = choose(&cfg, &all).unwrap_err();
        assert!(
            e.msg
                .contains("HCCL_SOCKET_IFNAME==eth0 selects no interface"),
            "{}",
            e.msg
        );
        assert!(e.msg.contains("eth0 10.0.0.5 (down)"), "{}", e.msg);
        cfg.if_ip = Some("10.9.9.9".parse().unwrap());
        assert_eq!(choose(&cfg, &all).unwrap().0.to_string(), "10.9.9.9");
        let only_lo = vec![
            ifc("lo", "127.0.0.1", true),
            ifc("docker0", "172.17.0.1", true),
        ];
        assert_eq!(
            choose(&HostNet::default(), &only_lo).unwrap().0.to_string(),
            "172.17.0.1"
        );
    }

    #[test]
    fn this_host_has_an_address_and_ports() {
        let (ip, _) = choose(&HostNet::default(), &interfaces()).unwrap();
        let l = listen_any(ip).unwrap();
        assert_ne!(l.local_addr().unwrap().port(), 0);
        let e = listen_any("203.0.113.77".parse().unwrap()).unwrap_err();
        assert!(e.msg.contains("not an address of this host"), "{}", e.msg);
    }

    #[test]
    fn port_ranges_come_first_and_are_walked_in_order() {
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        // Two free ports next to each other are not guaranteed: take two the OS gives.
        let a = listen_any(ip).unwrap();
        let b = listen_any(ip).unwrap();
        let (pa, pb) = (
            a.local_addr().unwrap().port(),
            b.local_addr().unwrap().port(),
        );
        drop(b);
        let mut cfg = HostNet {
            host_ports: npu_emu::config::parse_port_range(&format!("{pa},{pb}")),
            base_port: Some(1024),
            ..HostNet::default()
        };
        // pa is busy (a holds it), so the root takes pb, ahead of HCCL_IF_BASE_PORT.
        let r = listen_root(&cfg, ip).unwrap();
        assert_eq!(r.local_addr().unwrap().port(), pb);
        let e = listen_root(&cfg, ip).unwrap_err();
        assert!(
            e.msg.contains(&format!(
                "every port of HCCL_HOST_SOCKET_PORT_RANGE={pa},{pb} is in use"
            )),
            "{}",
            e.msg
        );
        drop(r);
        cfg.npu_ports = npu_emu::config::parse_port_range(&pb.to_string());
        let d = listen_data(&cfg, ip).unwrap();
        assert_eq!(d.local_addr().unwrap().port(), pb);
        cfg.npu_ports = npu_emu::config::parse_port_range("auto");
        assert_ne!(
            listen_data(&cfg, ip).unwrap().local_addr().unwrap().port(),
            0
        );
    }
}
