//! Redis URLs as the rate limit takes them (`Config::redis_url`): which this build can
//! use, and how they are shown without their passwords.

/// The schemes this build can connect to (no TLS: `rediss://` is refused).
#[cfg(feature = "redis")]
const SCHEMES: [&str; 5] = ["redis", "valkey", "unix", "redis+unix", "valkey+unix"];

/// Checks that `url` is a Redis URL this build can connect to, and opens the client
/// for it (which connects to nothing). The reason never holds the password.
#[cfg(feature = "redis")]
pub(crate) fn parse_redis_url(url: &str) -> Result<redis::Client, String> {
    let parsed = url::Url::parse(url).map_err(|err| {
        format!("not a URL ({err}); expected redis://[user:password@]host[:port][/db]")
    })?;
    match parsed.scheme() {
        "rediss" | "valkeys" => {
            return Err(format!(
                "{}: TLS to Redis ({}://) is not supported by this build; use redis:// on a \
                 private network or through a TLS tunnel",
                redact_url(url),
                parsed.scheme()
            ));
        }
        scheme if !SCHEMES.contains(&scheme) => {
            return Err(format!(
                "{}: the scheme must be redis:// (or unix:// for a socket), not {scheme}://",
                redact_url(url)
            ));
        }
        _ => {}
    }
    redis::Client::open(url).map_err(|err| {
        format!(
            "{}: {}",
            redact_url(url),
            scrub(&err.to_string(), &secrets(url))
        )
    })
}

/// `url` without its password (`redis://user:***@host`; a socket's `pass=` too), fit
/// for logs and messages; a string that does not parse as a URL is not shown.
pub(crate) fn redact_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return "(a URL that does not parse)".into();
    };
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("***"));
    }
    if parsed.query().is_some() {
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, v)| {
                let v = if k == "pass" || k == "password" {
                    "***".into()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
    }
    parsed.to_string()
}

/// The passwords in `url`, as written and percent-decoded.
#[cfg(feature = "redis")]
pub(crate) fn secrets(url: &str) -> Vec<String> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Vec::new();
    };
    let mut found: Vec<String> = parsed.password().map(str::to_owned).into_iter().collect();
    found.extend(
        parsed
            .query_pairs()
            .filter(|(k, _)| k == "pass" || k == "password")
            .map(|(_, v)| v.into_owned()),
    );
    let decoded: Vec<String> = found
        .iter()
        .filter_map(|s| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
        })
        .collect();
    found.extend(decoded);
    found.retain(|s| !s.is_empty());
    found
}

/// `text` with each of `secrets` replaced by `***`.
#[cfg(feature = "redis")]
pub(crate) fn scrub(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .fold(text.to_owned(), |text, secret| text.replace(secret, "***"))
}

#[cfg(all(test, feature = "redis"))]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_a_message() {
        assert_eq!(
            redact_url("redis://wfs:s3cr%40t@cache:6379/2"),
            "redis://wfs:***@cache:6379/2"
        );
        assert_eq!(redact_url("redis://cache"), "redis://cache");
        assert_eq!(
            redact_url("unix:///run/redis.sock?db=1&pass=s3cret"),
            "unix:///run/redis.sock?db=1&pass=***"
        );
        assert_eq!(
            redact_url("redis//:pw@cache"),
            "(a URL that does not parse)"
        );
        let url = "redis://:s3cr%40t@cache:6379";
        assert_eq!(
            scrub("WRONGPASS s3cr@t / s3cr%40t", &secrets(url)),
            "WRONGPASS *** / ***"
        );
        for bad in [
            "redis//:s3cret@cache",
            "http://:s3cret@cache",
            "rediss://:s3cret@cache",
            "redis://:s3cret@cache/notanumber",
        ] {
            let reason = parse_redis_url(bad).map(|_| ()).unwrap_err();
            assert!(!reason.contains("s3cret"), "{bad}: {reason}");
        }
    }

    #[test]
    fn redis_urls_parse_and_others_are_refused_with_the_reason() {
        for good in [
            "redis://127.0.0.1:6379",
            "redis://:pw@cache/3",
            "redis://user:pw@cache:6380",
            "valkey://cache",
            "unix:///run/redis.sock",
        ] {
            assert!(parse_redis_url(good).is_ok(), "{good}");
        }
        let reason = |url: &str| parse_redis_url(url).map(|_| ()).unwrap_err();
        assert!(
            reason("cache:6379").contains("scheme"),
            "{}",
            reason("cache:6379")
        );
        assert!(reason("not a url").contains("not a URL"));
        assert!(reason("http://cache").contains("redis://"));
        assert!(reason("rediss://cache").contains("TLS"));
    }
}
