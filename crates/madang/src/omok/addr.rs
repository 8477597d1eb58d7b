//! `HOST:PORT` arguments (`--connect`, `--addr`): host names allowed, checked
//! by clap's parser so that a malformed address is refused before anything
//! starts (a screen, a listener, a connection).
//!
//! For connecting ([`HostPort`]) only the shape is checked here; the name is
//! resolved when connecting, so that a referee started after the client is
//! still found. An address to listen on ([`listen_addr`]) is resolved by the
//! parser, since it must name this machine now; port 0 asks for a free port.

use std::fmt;
use std::net::{Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::str::FromStr;

use thiserror::Error;

/// A network address as a person types it: `localhost:9000`,
/// `127.0.0.1:9000`, `[::1]:9000`, `referee.example:9000`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostPort {
    host: String,
    port: u16,
}

/// Why text is not a `HOST:PORT` address.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum AddrError {
    /// No `:PORT` at the end.
    #[error("expected HOST:PORT, like localhost:9000 or 127.0.0.1:9000")]
    NoPort,
    /// The port is not a number from 1 to 65535.
    #[error("the port {0:?} is not a number from 1 to 65535")]
    BadPort(String),
    /// The host is empty or holds characters no host name or IP address has.
    #[error("{0:?} is not a host name or IP address")]
    BadHost(String),
    /// The host name names no address of this machine.
    #[error("{0:?} has no address here")]
    Unresolved(String),
}

/// As `connect` and `bind` take it: `host:port`, IPv6 in brackets.
impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl FromStr for HostPort {
    type Err = AddrError;

    fn from_str(text: &str) -> Result<HostPort, AddrError> {
        if let Ok(addr) = text.parse::<SocketAddr>() {
            if addr.port() == 0 {
                return Err(AddrError::BadPort("0".into()));
            }
            return Ok(HostPort {
                host: addr.ip().to_string(),
                port: addr.port(),
            });
        }
        let (host, port) = text.rsplit_once(':').ok_or(AddrError::NoPort)?;
        let port = match port.parse::<u16>() {
            Ok(p) if p > 0 && port.bytes().all(|b| b.is_ascii_digit()) => p,
            _ => return Err(AddrError::BadPort(port.into())),
        };
        if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            return match inner.parse::<Ipv6Addr>() {
                Ok(ip) => Ok(HostPort {
                    host: ip.to_string(),
                    port,
                }),
                Err(_) => Err(AddrError::BadHost(host.into())),
            };
        }
        if !is_host_name(host) {
            return Err(AddrError::BadHost(host.into()));
        }
        Ok(HostPort {
            host: host.to_ascii_lowercase(),
            port,
        })
    }
}

/// Parses an address to listen on: `127.0.0.1:9000`, `localhost:0`,
/// `[::1]:9000`. A host name is resolved now (IPv4 first); port 0 is
/// allowed.
pub(crate) fn listen_addr(text: &str) -> Result<SocketAddr, AddrError> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    // The shape is a HostPort's, with port 0 allowed.
    let (host, port) = text.rsplit_once(':').ok_or(AddrError::NoPort)?;
    let checked = format!("{host}:{}", if port == "0" { "1" } else { port });
    let shape = checked.parse::<HostPort>()?;
    let port: u16 = port.parse().map_err(|_| AddrError::BadPort(port.into()))?;
    let found: Vec<SocketAddr> = (shape.host.as_str(), port)
        .to_socket_addrs()
        .map_err(|_| AddrError::Unresolved(shape.host.clone()))?
        .collect();
    found
        .iter()
        .find(|a| a.is_ipv4())
        .or(found.first())
        .copied()
        .ok_or(AddrError::Unresolved(shape.host))
}

/// A DNS name (RFC 1123 labels) or a dotted IPv4 address.
fn is_host_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.trim_end_matches('.').split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> String {
        text.parse::<HostPort>()
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .to_string()
    }

    #[test]
    fn host_names_and_ip_addresses() {
        assert_eq!(ok("localhost:9000"), "localhost:9000");
        assert_eq!(ok("LocalHost:9000"), "localhost:9000");
        assert_eq!(ok("127.0.0.1:9000"), "127.0.0.1:9000");
        assert_eq!(ok("[::1]:9000"), "[::1]:9000");
        assert_eq!(ok("referee.example.org:65535"), "referee.example.org:65535");
        assert_eq!(ok("my-host.:1"), "my-host.:1");
    }

    #[test]
    fn malformed_addresses_are_refused_with_the_reason() {
        let err = |text: &str| text.parse::<HostPort>().unwrap_err();
        assert_eq!(err("localhost"), AddrError::NoPort);
        assert_eq!(err(""), AddrError::NoPort);
        assert_eq!(err("localhost:"), AddrError::BadPort(String::new()));
        assert_eq!(err("localhost:0"), AddrError::BadPort("0".into()));
        assert_eq!(err("127.0.0.1:0"), AddrError::BadPort("0".into()));
        assert_eq!(err("localhost:65536"), AddrError::BadPort("65536".into()));
        assert_eq!(err("localhost:+80"), AddrError::BadPort("+80".into()));
        assert_eq!(err("localhost:9x"), AddrError::BadPort("9x".into()));
        assert_eq!(err(":9000"), AddrError::BadHost(String::new()));
        assert_eq!(err("bad host:9000"), AddrError::BadHost("bad host".into()));
        assert_eq!(err("-x:9000"), AddrError::BadHost("-x".into()));
        assert_eq!(err("a..b:9000"), AddrError::BadHost("a..b".into()));
        assert_eq!(err("[nope]:9000"), AddrError::BadHost("[nope]".into()));
        assert_eq!(err("::1:9000"), AddrError::BadHost("::1".into()));
        assert_eq!(err("h\u{1b}[2J:1"), AddrError::BadHost("h\u{1b}[2J".into()));
        assert!(err("localhost").to_string().contains("HOST:PORT"));
    }

    #[test]
    fn listen_addresses_resolve_and_allow_port_zero() {
        assert_eq!(
            listen_addr("localhost:0").unwrap(),
            "127.0.0.1:0".parse().unwrap()
        );
        assert_eq!(
            listen_addr("127.0.0.1:9000").unwrap(),
            "127.0.0.1:9000".parse().unwrap()
        );
        assert_eq!(listen_addr("[::1]:0").unwrap(), "[::1]:0".parse().unwrap());
        assert_eq!(listen_addr("localhost"), Err(AddrError::NoPort));
        assert!(matches!(
            listen_addr("local host:9000"),
            Err(AddrError::BadHost(_))
        ));
        assert!(matches!(
            listen_addr("localhost:70000"),
            Err(AddrError::BadPort(_))
        ));
    }
}
