//! Raw HTTP/1.1 over std sockets, from any loopback address: what the attack tests
//! need that an HTTP client hides (partial heads, idle keep-alives, who connects from
//! where).

use crate::common::Server;
use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpStream};

/// `GET /livez`, the cheapest request.
pub const LIVEZ: &[u8] = b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n";

/// A connection from 127.0.0.1.
pub fn connect(server: &Server) -> TcpStream {
    let stream = TcpStream::connect(server.addr()).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// A connection from `source`, a loopback address other than 127.0.0.1 such as
/// 127.0.0.2: another client, as far as the server can tell.
pub fn connect_from(server: &Server, source: &str) -> TcpStream {
    connect_to_from(server.addr(), source)
}

/// A connection to `addr` (`127.0.0.1:port`) from `source`, for threads that do not
/// borrow the [`Server`].
pub fn connect_to_from(addr: &str, source: &str) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket
            .bind(SocketAddr::new(source.parse().unwrap(), 0))
            .unwrap();
        socket.connect(addr.parse().unwrap()).await.unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// Reads one response (head, then a `Content-Length` body): its status and body.
pub fn read_response(stream: &mut TcpStream) -> std::io::Result<(u16, String)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::Error::new(
                ErrorKind::UnexpectedEof,
                format!(
                    "closed after {:?} of a response head",
                    String::from_utf8_lossy(&buf)
                ),
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response head: {head:?}"));
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no Content-Length in {head:?}"));
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned();
    Ok((status, body))
}
