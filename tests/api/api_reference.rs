//! `GET /external/v1/docs`: the interactive API reference (Swagger UI), served whole by
//! the service, working with no internet access (decisions.md, "Operating the
//! reference server").
//!
//! The browser tests drive a headless Chromium (`$WFS_CHROMIUM`, else `chromium`,
//! `chromium-browser` or `google-chrome` on PATH) against a server started here,
//! with every host but 127.0.0.1 unresolvable and a dead proxy for anything else.
//! Without one they are reported as ignored, with the install hint
//! (`wfs-server/build.rs` looks); CI installs it and runs them.
//! It also takes a screenshot; `WFS_UPDATE_SCREENSHOT=1` keeps it as
//! `docs/api-docs.png`.

use crate::browser::{OFFLINE_HEADLESS, chromium};
use crate::helpers::*;
use http::Method;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DOCS: &str = "/external/v1/docs";

/// The `docs/<file>?v=<hash>` URLs the page loads, in order.
fn asset_urls(page: &str) -> Vec<String> {
    page.split(['"', '\''])
        .filter(|part| part.starts_with("docs/"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn the_reference_page_is_public_html_that_loads_only_its_own_assets() {
    let app = TestApp::spawn().await;

    let page = app.send_raw(Req::new(Method::GET, DOCS)).await;

    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page.header("cache-control"), Some("no-cache"));
    assert!(page.header("etag").is_some());
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    let csp = page.header("content-security-policy").unwrap();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    let html = page.text();
    assert!(!html.contains("://"), "no absolute URL on the page: {html}");
    let assets = asset_urls(html);
    assert!(
        assets
            .iter()
            .any(|a| a.starts_with("docs/swagger-ui-bundle.js?v=")),
        "{assets:?}"
    );
    for url in &assets {
        let res = app
            .send_raw(Req::new(Method::GET, &format!("/external/v1/{url}")))
            .await;
        assert_eq!(res.status, 200, "{url}");
        assert!(!res.body.is_empty(), "{url}");
        let expected = match url.split('?').next().unwrap().rsplit('.').next() {
            Some("js") => "text/javascript; charset=utf-8",
            Some("css") => "text/css; charset=utf-8",
            Some("png") => "image/png",
            other => panic!("unexpected asset type {other:?}"),
        };
        assert_eq!(res.header("content-type"), Some(expected), "{url}");
        assert_eq!(
            res.header("cache-control"),
            Some("public, max-age=31536000, immutable"),
            "an asset named by its hash is kept: {url}"
        );
        assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
        assert!(res.header("x-request-id").is_some());
    }
    let init = assets
        .iter()
        .find(|a| a.starts_with("docs/swagger-initializer.js"))
        .unwrap();
    let init = app
        .send_raw(Req::new(Method::GET, &format!("/external/v1/{init}")))
        .await;
    let init = init.text();
    assert!(init.contains(r#""url": "openapi.json""#), "{init}");
    assert!(
        !init.contains("://"),
        "the configuration names no other host: {init}"
    );
}

#[tokio::test]
async fn assets_are_revalidated_by_etag_unless_named_by_their_hash() {
    let app = TestApp::spawn().await;
    let asset = "/external/v1/docs/swagger-ui.css";

    let page = app.send_raw(Req::new(Method::GET, DOCS)).await;
    let plain = app.send_raw(Req::new(Method::GET, asset)).await;
    let stale = app
        .send_raw(Req::new(
            Method::GET,
            &format!("{asset}?v=0000000000000000"),
        ))
        .await;
    let etag = plain.header("etag").unwrap().to_owned();
    let again = app
        .send_raw(Req::new(Method::GET, asset).header("if-none-match", &etag))
        .await;
    let page_again = app
        .send_raw(Req::new(Method::GET, DOCS).header("if-none-match", page.header("etag").unwrap()))
        .await;
    let changed = app
        .send_raw(Req::new(Method::GET, asset).header("if-none-match", "\"something-else\""))
        .await;

    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("cache-control"), Some("no-cache"));
    assert_eq!(stale.header("cache-control"), Some("no-cache"));
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(again.header("etag"), Some(etag.as_str()));
    assert_eq!(page_again.status, 304);
    assert!(page_again.body.is_empty());
    assert_eq!(changed.status, 200);
    assert_eq!(changed.body, plain.body);
}

#[tokio::test]
async fn the_reference_answers_get_only_and_unknown_files_are_404() {
    let app = TestApp::spawn().await;

    let post = app.send(Req::new(Method::POST, DOCS)).await;
    let post_asset = app
        .send(Req::new(Method::DELETE, "/external/v1/docs/swagger-ui.css"))
        .await;

    post.assert_status(405);
    assert_eq!(post.header("allow"), Some("GET"));
    post_asset.assert_status(405);
    for path in [
        "/external/v1/docs/nothing.js",
        "/external/v1/docs/index.html",
        "/external/v1/docs/swagger-ui.js",
        "/external/v1/docs/..%2Fopenapi.json",
        "/external/v1/docs/a/b",
        "/external/v1/docs/",
    ] {
        app.send(Req::new(Method::GET, path))
            .await
            .assert_error(404, "Route not found");
    }
}

#[tokio::test]
async fn the_reference_is_not_an_operation_of_the_openapi_document() {
    let app = TestApp::spawn().await;

    let doc = app
        .send(Req::new(Method::GET, "/external/v1/openapi.json"))
        .await;

    let paths = doc.body["paths"].as_object().unwrap();
    assert!(paths.contains_key("/external/v1/openapi.json"));
    assert!(
        paths.keys().all(|p| !p.starts_with(DOCS)),
        "{:?}",
        paths.keys()
    );
}

#[tokio::test]
async fn the_document_is_json_and_a_client_that_takes_no_json_is_told_so() {
    let app = TestApp::spawn().await;
    let doc = |accept: &str| {
        app.send(Req::new(Method::GET, "/external/v1/openapi.json").header("accept", accept))
    };

    let browser = doc("text/html,application/xhtml+xml,*/*;q=0.8").await;
    let openapi_type = doc("application/vnd.oai.openapi+json;version=3.1").await;
    let yaml_only = doc("application/yaml").await;

    browser.assert_status(200);
    assert_eq!(browser.header("content-type"), Some("application/json"));
    openapi_type.assert_status(200);
    assert_eq!(openapi_type.body["openapi"], "3.1.0");
    yaml_only.assert_status(406);
    assert_eq!(
        yaml_only.body["error"]["message"],
        "The OpenAPI document is served as application/json only"
    );
    assert!(yaml_only.header("x-request-id").is_some());
}

// ------------------------------------------------------------------ in a browser

/// Runs chromium headless on `url` with every host but 127.0.0.1 cut off, and the
/// extra `args` (an action: `--dump-dom` or `--screenshot=...`). Answers its
/// standard output and its log (console messages and network errors included).
/// Fails after two minutes.
fn run_chromium(url: &str, args: &[String], work: &Path) -> (String, String) {
    let out_path = work.join("stdout");
    let err_path = work.join("stderr");
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium())
        .args(OFFLINE_HEADLESS)
        .args([
            "--virtual-time-budget=10000",
            // The page's console messages and failed loads, on stderr.
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium().display()));
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium did not finish within 2 minutes; its stderr:\n{}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        status.success(),
        "chromium failed ({status}); its stderr:\n{}",
        std::fs::read_to_string(&err_path).unwrap_or_default()
    );
    (
        std::fs::read_to_string(&out_path).unwrap(),
        std::fs::read_to_string(&err_path).unwrap_or_default(),
    )
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(wfs_test_chromium),
    ignore = "needs Chromium on PATH (chromium, chromium-browser or google-chrome) or at $WFS_CHROMIUM: apt-get install chromium (Debian/Ubuntu), brew install --cask chromium (macOS)"
)]
async fn in_a_browser_with_no_internet_the_reference_renders_every_operation() {
    let browser = chromium();
    let app = TestApp::spawn().await;
    let base = app.serve_http().await;
    let doc = app
        .send(Req::new(Method::GET, "/external/v1/openapi.json"))
        .await;
    let summaries: Vec<String> = doc.body["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .filter_map(|op| op["summary"].as_str().map(str::to_owned))
        .collect();
    assert!(summaries.iter().any(|s| s == "List job roles"));
    let url = format!("{base}{DOCS}");
    let work = tempfile::tempdir().unwrap();
    let work_path = work.path().to_owned();
    let screenshot = work_path.join("api-docs.png");

    let ((dom, log), (_, shot_log)) = {
        let (url, screenshot) = (url.clone(), screenshot.clone());
        tokio::task::spawn_blocking(move || {
            let dom = run_chromium(&url, &["--dump-dom".to_owned()], &work_path);
            let shot = run_chromium(
                &url,
                &[
                    format!("--screenshot={}", screenshot.display()),
                    "--window-size=1280,1600".to_owned(),
                ],
                &work_path,
            );
            (dom, shot)
        })
        .await
        .unwrap()
    };

    assert!(
        dom.contains("swagger-ui"),
        "{} rendered no Swagger UI:\n{dom}",
        browser.display()
    );
    assert!(
        !dom.contains("Failed to load API definition"),
        "the document did not load:\n{dom}"
    );
    assert!(dom.contains("External Workforce Scheduling API"), "{dom}");
    // Nothing was refused by the page's Content-Security-Policy, and nothing tried
    // to reach another host (it would fail to resolve, or meet the dead proxy).
    for sign in [
        "Content Security Policy",
        "Refused to",
        "ERR_NAME_NOT_RESOLVED",
        "ERR_PROXY_CONNECTION_FAILED",
        "ERR_INTERNET_DISCONNECTED",
        "Uncaught",
    ] {
        assert!(!log.contains(sign), "chromium logged {sign:?}:\n{log}");
    }
    let missing: Vec<&String> = summaries
        .iter()
        .filter(|s| !dom.contains(&html_escape(s)))
        .collect();
    assert!(
        missing.is_empty(),
        "operations not rendered: {missing:?}\n{dom}"
    );
    let png = std::fs::read(&screenshot)
        .unwrap_or_else(|e| panic!("no screenshot ({e}); chromium said:\n{shot_log}"));
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
    if std::env::var_os("WFS_UPDATE_SCREENSHOT").is_some() {
        let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/api-docs.png");
        std::fs::write(&kept, &png).unwrap();
    }
}

/// What the trial page does in the browser: opens the reference in a window of its
/// own (the reference may not be framed), authorizes with the key, and presses
/// "Try it out" then "Execute" on two operations, as a person would. It writes each
/// answer's status and the URL Swagger UI called, or what went wrong.
const TRIAL_PAGE: &str = r#"<!doctype html>
<html><body><pre id="out">pending</pre><script>
const out = document.getElementById("out");
const docs = window.open("/partners/external/v1/docs", "docs");
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
async function until(find, what) {
  for (let i = 0; i < 300; i++) {
    try { const found = find(); if (found) return found; } catch (e) {}
    await sleep(50);
  }
  throw new Error("no " + what);
}
async function tryOut(id) {
  const block = await until(() => docs.document.getElementById(id), id);
  if (!block.classList.contains("is-open")) {
    block.querySelector(".opblock-summary-control").click();
  }
  (await until(() => block.querySelector(".try-out__btn"), "Try it out in " + id)).click();
  (await until(() => block.querySelector("button.execute"), "Execute in " + id)).click();
  const status = await until(
    () => block.querySelector(".live-responses-table tbody .response-col_status"),
    "answer in " + id,
  );
  const url = await until(() => block.querySelector(".request-url pre"), "request URL in " + id);
  return status.textContent.trim() + " " + url.textContent.trim();
}
(async () => {
  try {
    await until(() => docs.ui && docs.document.querySelector(".opblock"), "Swagger UI");
    docs.ui.preauthorizeApiKey("apiKey", "KEY_ID");
    docs.ui.preauthorizeApiKey("apiSecret", "KEY_SECRET");
    const answers = [
      await tryOut("operations-Meta-get_openapi"),
      await tryOut("operations-Job_roles-list_job_roles"),
    ];
    out.textContent = "ANSWERS " + JSON.stringify(answers);
  } catch (e) {
    out.textContent = "FAILED " + e;
  }
})();
</script></body></html>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(wfs_test_chromium),
    ignore = "needs Chromium on PATH (chromium, chromium-browser or google-chrome) or at $WFS_CHROMIUM: apt-get install chromium (Debian/Ubuntu), brew install --cask chromium (macOS)"
)]
async fn under_a_mount_prefix_try_it_out_calls_the_api_under_that_prefix() {
    chromium();
    let app = TestApp::spawn_with(wfs_tower::Config::default().base_path("/partners")).await;
    let key = app.key(&app.company("Acme").await).await;
    let page = TRIAL_PAGE
        .replace("KEY_ID", &key.client_id)
        .replace("KEY_SECRET", &key.secret);
    let host = axum::Router::new()
        .route(
            "/trial.html",
            axum::routing::get(move || async move { axum::response::Html(page) }),
        )
        .nest_service("/partners", app.svc.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, host).await });
    let work = tempfile::tempdir().unwrap();
    let work_path = work.path().to_owned();

    let (dom, log) = tokio::task::spawn_blocking(move || {
        run_chromium(
            &format!("http://{addr}/trial.html"),
            &[
                "--dump-dom".to_owned(),
                "--disable-popup-blocking".to_owned(),
                "--virtual-time-budget=60000".to_owned(),
            ],
            &work_path,
        )
    })
    .await
    .unwrap();

    let answers = dom
        .split_once("ANSWERS ")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .map_or_else(
            || panic!("the trial did not finish:\n{dom}\n{log}"),
            |(answers, _)| answers.replace("&quot;", "\""),
        );
    let answers: Vec<String> = serde_json::from_str(&answers).unwrap();
    let base = format!("http://{addr}/partners/external/v1");
    assert_eq!(
        answers,
        [
            format!("200 {base}/openapi.json"),
            format!("200 {base}/job-roles"),
        ]
    );
}
