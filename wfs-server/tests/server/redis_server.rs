//! A throwaway `redis-server` for the tests that share counts through Redis:
//! `$WFS_TEST_REDIS_SERVER`, else `redis-server` on `PATH` (Debian's package, which
//! `.ci/run` installs, or Homebrew's), started on a free loopback port, with a
//! password, and stopped by its PID. Without one, those tests are reported as ignored
//! ([`NEEDS_REDIS`]; `wfs-server/build.rs` looks). wfs-server's tests
//! (`redis_rate_limit`, `redis_sign_in`) and the API suite (`tests/api/redis_sign_in.rs`, which
//! includes this file) start it alike.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Why a test that needs Redis is ignored without it, and how to install it.
pub const NEEDS_REDIS: &str = "needs redis-server on PATH or at $WFS_TEST_REDIS_SERVER: apt-get install redis-server (Debian/Ubuntu), brew install redis (macOS)";

/// The `redis-server` to run: as `wfs-server/build.rs` finds it.
pub fn redis_server() -> std::path::PathBuf {
    if let Some(named) = std::env::var_os("WFS_TEST_REDIS_SERVER") {
        return named.into();
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("redis-server"))
                .find(|candidate| candidate.is_file())
        })
        .unwrap_or_else(|| panic!("redis-server is missing: {NEEDS_REDIS}"))
}
/// Redis's password: it must never appear in a log line or a message.
pub const REDIS_PASSWORD: &str = "redis-pw-7f3a9c1e";

/// A throwaway `redis-server` on a loopback port: no persistence, killed by its PID
/// when dropped (also when a test fails).
pub struct Redis {
    child: Option<Child>,
    port: u16,
}

impl Redis {
    /// Starts on a free port.
    pub fn start() -> Self {
        for _ in 0..5 {
            let port = free_port();
            let mut redis = Redis { child: None, port };
            if redis.restart() {
                return redis;
            }
        }
        panic!("redis-server did not start on any of five free ports");
    }

    /// Starts (again) on this port; false when it exits first (the port was taken).
    pub fn restart(&mut self) -> bool {
        let program = redis_server();
        let mut child = Command::new(&program)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(["--requirepass", REDIS_PASSWORD])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| panic!("cannot run {}: {err}", program.display()));
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                return false;
            }
            if self.answers_ping() {
                self.child = Some(child);
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("redis-server did not answer PING on port {}", self.port);
    }

    fn answers_ping(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let ping = format!("AUTH {REDIS_PASSWORD}\r\nPING\r\n",);
        if stream.write_all(ping.as_bytes()).is_err() {
            return false;
        }
        let mut seen = Vec::new();
        let mut buf = [0u8; 64];
        while !String::from_utf8_lossy(&seen).contains("+PONG") {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return false,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        true
    }

    /// Kills it (SIGKILL: no goodbye to its clients) and waits for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The keys matching `pattern` (`KEYS`), sorted.
    pub fn keys(&self, pattern: &str) -> Vec<String> {
        let mut keys: Vec<String> = self
            .ask(&["KEYS", pattern])
            .split("\r\n")
            .filter(|line| !line.is_empty() && !line.starts_with(['*', '$']))
            .map(str::to_owned)
            .collect();
        keys.sort();
        keys
    }

    /// The milliseconds `key` has left to live (`PTTL`: -1 without expiry, -2 absent).
    #[allow(
        dead_code,
        reason = "the API suite reads Redis's keys; wfs-server's tests do not"
    )]
    pub fn pttl(&self, key: &str) -> i64 {
        let answer = self.ask(&["PTTL", key]);
        answer
            .trim()
            .strip_prefix(':')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("PTTL {key}: {answer:?}"))
    }

    /// Redis's raw answer to one command, read on a connection of its own (RESP,
    /// between the AUTH's `+OK` and a closing PING's `+PONG`).
    fn ask(&self, command: &[&str]) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("redis answers");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut request = format!("AUTH {REDIS_PASSWORD}\r\n*{}\r\n", command.len());
        for arg in command {
            request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        request.push_str("PING\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !seen.ends_with(b"+PONG\r\n") {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => panic!("redis stopped answering: {seen:?}"),
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        let text = String::from_utf8(seen).expect("RESP text");
        text.strip_prefix("+OK\r\n")
            .and_then(|t| t.strip_suffix("+PONG\r\n"))
            .unwrap_or_else(|| panic!("unexpected answer: {text:?}"))
            .to_owned()
    }

    pub fn url(&self) -> String {
        format!("redis://:{REDIS_PASSWORD}@127.0.0.1:{}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A loopback port nothing listens on (now).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
