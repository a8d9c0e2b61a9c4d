//! A fair share of the server under attack, through the real binary: connection
//! slots held by idle keep-alives from many addresses go to a newcomer, the last
//! slots are kept for addresses that hold none, and HTTP/2 (whose flow control can
//! pin whole answers) is not served.
//!
//! Attackers connect from 127.0.1.x and 127.0.0.3, the other tenant from 127.0.0.2
//! (on Linux every 127.0.0.0/8 address is the loopback), so the server tells them
//! apart as it would distinct clients.

use crate::common::{Server, sqlite_url};
use crate::raw::{LIVEZ, connect_from, connect_to_from, read_response};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The other tenant's `GET /livez` from `source` on a new connection: its status (or
/// what went wrong within `limit`) and how long it took.
fn probe(server: &Server, source: &str, limit: Duration) -> (Result<u16, String>, Duration) {
    let asked = Instant::now();
    let mut conn = connect_from(server, source);
    conn.set_read_timeout(Some(limit)).unwrap();
    let answer = conn
        .write_all(LIVEZ)
        .and_then(|()| read_response(&mut conn))
        .map(|(status, _)| status)
        .map_err(|err| err.to_string());
    (answer, asked.elapsed())
}

/// A keep-alive client from `source` that sends `GET /livez` every `every` and is
/// otherwise idle: in no deadline (not reading a head, never idle for the idle
/// deadline). When the server closes it, it reconnects at once, as an attacker
/// would; returns how many times it was closed.
fn idle_keep_alive(
    server: &Server,
    source: String,
    every: Duration,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    let addr = server.addr().to_owned();
    let connect = move || connect_to_from(&addr, &source);
    std::thread::spawn(move || {
        let mut closed = 0;
        let mut conn = connect();
        while !stop.load(Ordering::Relaxed) {
            conn.set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            let answered = conn
                .write_all(LIVEZ)
                .and_then(|()| read_response(&mut conn))
                .is_ok_and(|(status, _)| status == 200);
            if !answered {
                closed += 1;
                conn = connect();
                continue;
            }
            std::thread::sleep(every);
        }
        closed
    })
}

#[test]
fn idle_keep_alives_from_many_addresses_give_their_slots_to_a_newcomer() {
    // Arrange: 16 slots, each held by a keep-alive connection from an address of its
    // own (127.0.1.1 to 127.0.1.16; the reserve admits an address holding none), each
    // sending `GET /livez` every 2 s and otherwise idle, reconnecting when closed.
    // Scaled from the probe: 16 addresses x 64 such connections on 1,024 slots.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::serve(&sqlite_url(&dir))
        .args(&["--max-connections", "16"])
        .start();
    let stop = Arc::new(AtomicBool::new(false));
    let attackers: Vec<_> = (1..=16)
        .map(|n| {
            idle_keep_alive(
                &server,
                format!("127.0.1.{n}"),
                Duration::from_secs(2),
                stop.clone(),
            )
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));

    // Act: the other tenant asks five times, each on a new connection.
    let probes: Vec<_> = (0..5)
        .map(|_| {
            let answer = probe(&server, "127.0.0.2", Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(300));
            answer
        })
        .collect();
    stop.store(true, Ordering::Relaxed);
    let closed: usize = attackers.into_iter().map(|a| a.join().unwrap()).sum();

    // Assert: every probe answered within the 10 s the document promises (in about
    // a second: the longest-idle connections are closed for it).
    println!("idle keep-alives: probes {probes:?}; attackers' connections closed {closed} times");
    for (answer, took) in &probes {
        assert_eq!(answer, &Ok(200), "a probe, after {took:?}");
        assert!(*took < Duration::from_secs(10), "a probe waited {took:?}");
    }
    assert!(closed > 0, "no idle keep-alive was closed to make room");
}

#[test]
fn the_last_slots_are_kept_for_an_address_that_holds_none() {
    // Arrange: 8 slots (one kept in reserve), no per-address cap to speak of; an
    // attacker from 127.0.0.3 opens 8 connections that each send half a request head
    // (so none is idle: each is in its 10 s head deadline).
    let dir = tempfile::tempdir().unwrap();
    let server = Server::serve(&sqlite_url(&dir))
        .args(&[
            "--max-connections",
            "8",
            "--max-connections-per-address",
            "64",
        ])
        .start();
    let mut attacker: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut conn = connect_from(&server, "127.0.0.3");
            conn.write_all(b"GET /livez HTTP/1.1\r\n").unwrap();
            std::thread::sleep(Duration::from_millis(50));
            conn
        })
        .collect();

    // Act
    let (answer, took) = probe(&server, "127.0.0.2", Duration::from_secs(9));
    let last = attacker.last_mut().unwrap();
    // The refusal is answered once its request head is whole.
    last.write_all(b"Host: x\r\n\r\n").unwrap();
    last.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let refused = read_response(last);

    // Assert: the newcomer took the reserve at once; the attacker's eighth was
    // refused with the error body.
    println!("reserve: the newcomer was answered {answer:?} after {took:?}");
    assert_eq!(answer, Ok(200), "after {took:?}");
    assert!(
        took < Duration::from_secs(3),
        "the newcomer waited {took:?}"
    );
    let (status, body) = refused.expect("the attacker's eighth connection got an answer");
    assert_eq!(status, 429, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], 429);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clients that hold none"),
        "{body}"
    );
}

#[test]
fn http2_is_not_served_and_http1_goes_on() {
    // Arrange
    let dir = tempfile::tempdir().unwrap();
    let server = Server::serve(&sqlite_url(&dir)).start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    // Act: a real HTTP/2 client, prior knowledge over cleartext (h2c), with the
    // flow-control window an attacker would offer: none.
    let answered = runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
        let (client, connection) = h2::client::Builder::new()
            .initial_window_size(0)
            .handshake::<_, bytes::Bytes>(tcp)
            .await
            .map_err(|err| format!("handshake: {err}"))?;
        let driver = tokio::spawn(connection);
        let mut client = client
            .ready()
            .await
            .map_err(|err| format!("ready: {err}"))?;
        let request = http::Request::get(format!("http://{}/livez", server.addr()))
            .body(())
            .unwrap();
        let (response, _) = client
            .send_request(request, true)
            .map_err(|err| format!("send: {err}"))?;
        let response = tokio::time::timeout(Duration::from_secs(5), response)
            .await
            .map_err(|_| "no answer within 5 s".to_owned())?
            .map_err(|err| format!("response: {err}"))?;
        driver.abort();
        Ok::<_, String>(response.status())
    });

    // Assert: no HTTP/2 answer; the raw preface is closed unanswered (hyper's HTTP/1
    // parser knows it and closes); HTTP/1.1 goes on.
    println!("HTTP/2 prior knowledge: {answered:?}");
    assert!(
        answered.is_err(),
        "an HTTP/2 request was served: {answered:?}"
    );
    let mut raw = connect_from(&server, "127.0.0.2");
    raw.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut answer = Vec::new();
    let read = raw.read_to_end(&mut answer);
    assert!(
        read.is_ok() && answer.is_empty(),
        "{read:?} {:?}",
        String::from_utf8_lossy(&answer)
    );
    let (status, _) = probe(&server, "127.0.0.2", Duration::from_secs(5));
    assert_eq!(status, Ok(200));
}
