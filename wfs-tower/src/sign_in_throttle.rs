//! The sign-in throttle shared through Redis (`Config::redis_url`): the limits of
//! `wfs_core::service::throttle`, counted by every server using that Redis together,
//! so that a login guessed through several servers behind one load balancer meets the
//! same limits as through one.
//!
//! The counts are the local throttle's sliding logs, exactly, as Redis sorted sets
//! (score: the instant in microseconds on Redis's clock, `TIME`, so servers with
//! skewed clocks agree; member: a random id):
//!
//! - `wfs:si:fail:<login>:<address>`: the failures of a login from an address, at
//!   most [`LOGIN_FAILURES`] kept (the 429 after 10);
//! - `wfs:si:login:<login>`: the failures of a login from all addresses, at most
//!   [`LOGIN_FAILURES_KEPT`] (the slow-down);
//! - `wfs:si:addr:<address>`: the attempts from an address, at most
//!   [`ADDRESS_ATTEMPTS`] (the 429 after 30 a minute).
//!
//! Each expires one window after its newest entry, so Redis keeps nothing for a login
//! or an address gone quiet. Logins and addresses are never stored in clear: each
//! appears as its keyed pseudonym (`Wfs::pseudonyms`: 128 bits of an HMAC-SHA-256
//! under a key derived from the server secret, which every server sharing the Redis
//! shares), so Redis's contents and its `MONITOR` show no email address, and whoever
//! reads them cannot test a guessed login or address without the secret. One Lua
//! script admits an attempt (checks both limits, counts the attempt against the
//! address, and reads the login's failures) and one counts a failure, each atomically,
//! so two servers cannot both let through the last allowed attempt. The waits and the
//! slow-down are then computed by the core's own functions ([`refused`],
//! [`slow_down`]): the same 429, `Retry-After` and delays as without Redis.
//!
//! Redis may not fail a sign-in: a call that errs or does not answer within
//! `Config::redis_timeout` is decided by this process's own [`SignInThrottle`]
//! instead (the same limits, counted per server, as without Redis), counted in
//! [`STORE_ERRORS_TOTAL`] and logged at most once a minute without the password
//! (see `redis_conn`).

use crate::redis_conn::{RedisCalls, RedisConn, Wording};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wfs_core::domain::signed::Pseudonyms;
use wfs_core::service::throttle::{
    ADDRESS_ATTEMPTS, ADDRESS_WINDOW, LOGIN_FAILURES, LOGIN_FAILURES_KEPT, LOGIN_WINDOW, Pending,
    SignInLimits, SignInThrottle, refused, slow_down,
};

/// Counter of sign-in throttle calls that Redis failed (an error or no answer in
/// time), each then decided by the process's own throttle.
pub(crate) const STORE_ERRORS_TOTAL: &str = "wfs_sign_in_throttle_store_errors_total";

/// What the throttle says of Redis, and where it counts Redis's failures.
const WORDING: Wording = Wording {
    what: "sign-in throttle",
    counter: STORE_ERRORS_TOTAL,
    counter_help: "Sign-in throttle calls Redis failed (an error or no answer in time), decided by the process's own throttle instead",
    shared: "shared through Redis by every server using it",
    meanwhile: "sign-ins are served, each process throttles alone until it answers",
    meanwhile_at_start: "serving, each process throttles alone until it does",
    recovered: "sign-in limits are shared again",
};

/// Admits an attempt. `KEYS[1]`: the failures of the login from the address,
/// `KEYS[2]`: the attempts from the address, `KEYS[3]`: the failures of the login.
/// `ARGV`: the login window and limit, the address window and limit (windows in
/// microseconds), `1` when there is an address (else `KEYS[2]` is not touched), and
/// the member to add. Returns `{0, wait}` (refused; microseconds until the oldest
/// counted instant leaves its window) or `{1, failures}` (admitted and counted against
/// the address; the login's failures in its window).
const ADMIT_SCRIPT: &str = r"
if redis.replicate_commands then pcall(redis.replicate_commands) end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local login_window = tonumber(ARGV[1])
local login_limit = tonumber(ARGV[2])
local address_window = tonumber(ARGV[3])
local address_limit = tonumber(ARGV[4])
local has_address = ARGV[5] == '1'
local function wait(key, limit, window)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now - window))
  if redis.call('ZCARD', key) < limit then
    return 0
  end
  local oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
  return math.max(1, math.min(window, window - (now - oldest)))
end
local refused = wait(KEYS[1], login_limit, login_window)
if has_address then
  refused = math.max(refused, wait(KEYS[2], address_limit, address_window))
end
if refused > 0 then
  return {0, refused}
end
if has_address then
  redis.call('ZADD', KEYS[2], string.format('%.0f', now), ARGV[6])
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(address_limit + 1))
  redis.call('PEXPIRE', KEYS[2], math.ceil(address_window / 1000))
end
local since = '(' .. string.format('%.0f', now - login_window)
return {1, redis.call('ZCOUNT', KEYS[3], since, '+inf')}
";

/// Counts a failure. `KEYS[1]`: the failures of the login from the address,
/// `KEYS[2]`: the failures of the login. `ARGV`: the window (microseconds), the
/// limit kept under `KEYS[1]`, the limit kept under `KEYS[2]`, the member to add.
const FAILED_SCRIPT: &str = r"
if redis.replicate_commands then pcall(redis.replicate_commands) end
local clock = redis.call('TIME')
local now = string.format('%.0f', tonumber(clock[1]) * 1000000 + tonumber(clock[2]))
local ttl = math.ceil(tonumber(ARGV[1]) / 1000)
local kept = {tonumber(ARGV[2]), tonumber(ARGV[3])}
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], now, ARGV[4])
  redis.call('ZREMRANGEBYRANK', KEYS[i], 0, -(kept[i] + 1))
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return 1
";

/// The prefix of every key the throttle writes.
const KEY_PREFIX: &str = "wfs:si:";

/// The Redis keys of one attempt (see the module docs).
#[derive(Debug, PartialEq, Eq)]
struct Keys {
    failures: String,
    address: String,
    login: String,
}

impl Keys {
    fn of(names: &Pseudonyms, login: &str, address: Option<IpAddr>) -> Self {
        let login = names.of("login", login);
        let address = address.map_or_else(
            || "none".to_owned(),
            |a| names.of("address", &a.to_string()),
        );
        Self {
            failures: format!("{KEY_PREFIX}fail:{login}:{address}"),
            address: format!("{KEY_PREFIX}addr:{address}"),
            login: format!("{KEY_PREFIX}login:{login}"),
        }
    }
}

/// A member no other attempt uses: two at the same microsecond are both counted.
fn member() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// The sign-in limits counted in Redis, falling back to this process's own.
pub(crate) struct SharedSignInThrottle {
    calls: RedisCalls,
    admit: redis::Script,
    failed: redis::Script,
    /// Decides while Redis does not answer.
    local: SignInThrottle,
    /// Names logins and addresses in Redis.
    names: Pseudonyms,
}

impl std::fmt::Debug for SharedSignInThrottle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedSignInThrottle")
    }
}

impl SharedSignInThrottle {
    /// The throttle on `conn`; inside a Tokio runtime it also connects and loads its
    /// scripts in the background, warning when Redis does not answer.
    pub(crate) fn new(conn: Arc<RedisConn>, names: Pseudonyms) -> Arc<Self> {
        let throttle = Arc::new(Self {
            names,
            calls: RedisCalls::new(conn, WORDING),
            admit: redis::Script::new(ADMIT_SCRIPT),
            failed: redis::Script::new(FAILED_SCRIPT),
            local: SignInThrottle::default(),
        });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let throttle = throttle.clone();
            runtime.spawn(async move {
                let scripts = [&throttle.admit, &throttle.failed];
                throttle.calls.check_at_start(&scripts).await;
            });
        }
        throttle
    }

    async fn admit_shared(
        &self,
        login: &str,
        address: Option<IpAddr>,
    ) -> Option<Result<Duration, Duration>> {
        let keys = Keys::of(&self.names, login, address);
        let (admitted, value) = self
            .calls
            .run(|mut con| async move {
                self.admit
                    .key(&keys.failures)
                    .key(&keys.address)
                    .key(&keys.login)
                    .arg(micros(LOGIN_WINDOW))
                    .arg(LOGIN_FAILURES)
                    .arg(micros(ADDRESS_WINDOW))
                    .arg(ADDRESS_ATTEMPTS)
                    .arg(if address.is_some() { "1" } else { "0" })
                    .arg(member())
                    .invoke_async::<(i64, i64)>(&mut con)
                    .await
            })
            .await?;
        let value = u64::try_from(value).unwrap_or(0);
        Some(if admitted == 1 {
            Ok(slow_down(usize::try_from(value).unwrap_or(usize::MAX)))
        } else {
            Err(refused(Duration::from_micros(value)))
        })
    }

    async fn failed_shared(&self, login: &str, address: Option<IpAddr>) -> Option<()> {
        let keys = Keys::of(&self.names, login, address);
        self.calls
            .run(|mut con| async move {
                self.failed
                    .key(&keys.failures)
                    .key(&keys.login)
                    .arg(micros(LOGIN_WINDOW))
                    .arg(LOGIN_FAILURES)
                    .arg(LOGIN_FAILURES_KEPT)
                    .arg(member())
                    .invoke_async::<i64>(&mut con)
                    .await
            })
            .await
            .map(drop)
    }
}

impl SignInLimits for SharedSignInThrottle {
    fn admit<'a>(
        &'a self,
        login: &'a str,
        address: Option<IpAddr>,
    ) -> Pending<'a, Result<Duration, Duration>> {
        Box::pin(async move {
            match self.admit_shared(login, address).await {
                Some(answer) => answer,
                None => self.local.admit_at(login, address, Instant::now()),
            }
        })
    }

    fn failed<'a>(&'a self, login: &'a str, address: Option<IpAddr>) -> Pending<'a, ()> {
        Box::pin(async move {
            if self.failed_shared(login, address).await.is_none() {
                self.local.failed_at(login, address, Instant::now());
            }
        })
    }

    fn failed_from<'a>(&'a self, login: &'a str, address: Option<IpAddr>) -> Pending<'a, bool> {
        Box::pin(async move {
            if address.is_none() {
                return true;
            }
            let key = Keys::of(&self.names, login, address).failures;
            // The key expires one window after its newest failure: it exists while any
            // failure from that address is in the window.
            let shared = self
                .calls
                .run(|mut con| async move {
                    redis::cmd("EXISTS")
                        .arg(&key)
                        .query_async::<i64>(&mut con)
                        .await
                })
                .await;
            // Failures counted here while Redis did not answer count too.
            shared.is_some_and(|found| found > 0)
                || self.local.failed_from_at(login, address, Instant::now())
        })
    }

    /// Forgets in this process too: failures counted here during an outage must not
    /// shut the login out at this address during the next one.
    fn succeeded<'a>(&'a self, login: &'a str, address: Option<IpAddr>) -> Pending<'a, ()> {
        Box::pin(async move {
            self.local.forget(login, address);
            let key = Keys::of(&self.names, login, address).failures;
            self.calls
                .run(
                    |mut con| async move { redis::cmd("DEL").arg(&key).exec_async(&mut con).await },
                )
                .await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_neither_the_login_nor_the_address_and_keep_them_apart() {
        let names = Pseudonyms::derive(b"a server secret of at least 32 bytes..", "t");
        let here: IpAddr = "203.0.113.9".parse().unwrap();
        let keys = Keys::of(&names, "ann@acme.test", Some(here));
        for key in [&keys.failures, &keys.address, &keys.login] {
            assert!(key.starts_with(KEY_PREFIX), "{key}");
            assert!(!key.contains("ann"), "{key}");
            assert!(!key.contains("203.0.113"), "{key}");
        }
        assert_eq!(keys.login.len(), KEY_PREFIX.len() + "login:".len() + 32);
        assert_eq!(
            keys,
            Keys::of(&names, "ann@acme.test", Some(here)),
            "stable"
        );
        let elsewhere = Keys::of(
            &names,
            "ann@acme.test",
            Some("203.0.113.10".parse().unwrap()),
        );
        assert_eq!(elsewhere.login, keys.login, "one login, all addresses");
        assert_ne!(elsewhere.failures, keys.failures);
        assert_ne!(
            Keys::of(&names, "bob@acme.test", Some(here)).failures,
            keys.failures
        );
        assert!(
            Keys::of(&names, "ann@acme.test", None)
                .failures
                .ends_with(":none")
        );
        let other = Pseudonyms::derive(b"another secret of at least 32 bytes..", "t");
        assert_ne!(
            Keys::of(&other, "ann@acme.test", Some(here)),
            keys,
            "keyed by the server secret"
        );
    }

    #[tokio::test]
    async fn a_redis_that_refuses_connections_leaves_the_throttle_to_the_process() {
        // A loopback port nothing listens on: every connection is refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = crate::config::Config {
            redis_url: Some(format!("redis://127.0.0.1:{port}")),
            redis_timeout: Duration::from_secs(5),
            ..crate::config::Config::default()
        };
        let names = Pseudonyms::derive(b"a server secret of at least 32 bytes..", "t");
        let throttle = SharedSignInThrottle::new(RedisConn::open(&config).unwrap(), names);
        let here = Some("203.0.113.9".parse().unwrap());
        // Every answer comes from the process's throttle, with its limits.
        for _ in 0..LOGIN_FAILURES {
            assert_eq!(throttle.admit("ann", here).await, Ok(Duration::ZERO));
            throttle.failed("ann", here).await;
        }
        let wait = throttle.admit("ann", here).await.unwrap_err();
        assert!(wait > LOGIN_WINDOW - Duration::from_secs(60), "{wait:?}");
        throttle.succeeded("ann", here).await;
        // Admitted again here; the login's failures from all addresses still slow it.
        assert_eq!(
            throttle.admit("ann", here).await,
            Ok(wfs_core::service::throttle::SLOW_DOWN_STEP)
        );
    }
}
