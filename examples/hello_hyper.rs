//! The baseline for `scripts/bench-wrk.sh` and `scripts/bench-cores.sh`: a bare hyper
//! hello-world, served the same way `wfs-server` serves the API (hyper-util auto
//! builder, one task per connection). `cargo run --example hello_hyper -- 127.0.0.1:8081`
//!
//! With `--shaped`, it answers what `GET /external/v1/job-roles` answers for ten roles
//! instead of `hello world`: the same headers and an 811-byte JSON body, still with no
//! work behind it. The ratio of the API's read to this one is the share of a request
//! that wfs's own work takes, apart from the bytes it sends (issue 35).

use bytes::Bytes;
use http::{HeaderValue, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use std::convert::Infallible;

/// The size of the API's ten-role answer in the benches (`seed_roles`).
const SHAPED_BODY_LEN: usize = 811;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let bind = args.next().unwrap_or_else(|| "127.0.0.1:8081".into());
    let shaped = args.next().as_deref() == Some("--shaped");
    let body = if shaped {
        let mut json = vec![b' '; SHAPED_BODY_LEN];
        json[0] = b'{';
        json[SHAPED_BODY_LEN - 1] = b'}';
        Bytes::from(json)
    } else {
        Bytes::from_static(b"hello world")
    };
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let body = body.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |_req: Request<Incoming>| {
                let mut response = Response::new(Full::new(body.clone()));
                if shaped {
                    shape(response.headers_mut());
                }
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

/// The headers of the API's answer to an authenticated read (values of the same length).
fn shape(headers: &mut http::HeaderMap) {
    let fixed = [
        (header::CONTENT_TYPE, "application/json"),
        (header::ETAG, "\"pb_gb7bbszUpFg3KSeeM0A\""),
        (header::CACHE_CONTROL, "private"),
        (header::VARY, "Authorization, X-Api-Key, X-Api-Secret"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    headers.insert(
        "x-request-id",
        HeaderValue::from_static("b4040c21-48cc-4939-b851-4ffecf09a079"),
    );
}
