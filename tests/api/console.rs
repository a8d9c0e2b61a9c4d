//! The admin console (`GET /external/v1/console`), in a real browser: a headless
//! Chromium driven over the DevTools Protocol (`browser.rs`) against the service
//! served over HTTP here, on the suite's database (SQLite, or PostgreSQL with
//! `WFS_TEST_DATABASE_URL`). A company's super admin signs in, makes, uses, rotates and
//! revokes keys, points an endpoint at a loopback receiver, sends it a test event,
//! replays, reads and filters the audit log, and signs out; errors show the API's own
//! message. Without a Chromium these tests are reported as ignored, with the install
//! hint; CI installs it. `WFS_UPDATE_SCREENSHOT=1` keeps a screenshot of each screen in
//! `docs/console/`.

use crate::browser::Browser;
use crate::helpers::*;
use crate::receiver::Receiver;
use http::Method;
use serde_json::json;
use std::path::PathBuf;
use wfs_core::service::webhooks::WebhookSettings;

const CONSOLE: &str = "/external/v1/console";

/// Saves a screenshot of the page as `docs/console/<name>.png` when asked to.
async fn keep_screenshot(browser: &mut Browser, name: &str) {
    if std::env::var_os("WFS_UPDATE_SCREENSHOT").is_none() {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/console");
    std::fs::create_dir_all(&dir).unwrap();
    browser.screenshot(&dir.join(format!("{name}.png"))).await;
}

/// Signs in on the console's form.
async fn sign_in(browser: &mut Browser, email: &str, password: &str) {
    browser.fill("#signin-email", email).await;
    browser.fill("#signin-password", password).await;
    browser.submit("#signin-form").await;
}

/// Clicks `button` in the table row `row` (a selector of the row) and confirms the
/// dialog that names the key or endpoint.
async fn confirm_in_row(browser: &mut Browser, row: &str, button: &str, names: &str) {
    browser.click(&format!("{row} {button}")).await;
    browser.wait_for("document.querySelector('#confirm-dialog').open").await;
    let text = browser.text("#confirm-text").await;
    assert!(text.contains(names), "the confirmation names {names}: {text}");
    browser.click("#confirm-ok").await;
}

/// The secret the once-panel shows, and its client id, after waiting for it.
async fn shown_secret(browser: &mut Browser) -> (String, String) {
    browser
        .wait_for("!document.querySelector('#secret-panel').hidden && document.querySelector('#secret-value').textContent")
        .await;
    let panel = browser.text("#secret-panel").await;
    assert!(panel.contains("It will not be shown again"), "{panel}");
    (
        browser.text("#secret-client-id").await,
        browser.text("#secret-value").await,
    )
}

/// A key as the API's callers use it.
fn key(client_id: &str, secret: &str) -> Key {
    Key {
        id: String::new(),
        client_id: client_id.to_owned(),
        secret: secret.to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(wfs_test_chromium),
    ignore = "needs Chromium on PATH (chromium, chromium-browser or google-chrome) or at $WFS_CHROMIUM: apt-get install chromium (Debian/Ubuntu), brew install --cask chromium (macOS)"
)]
async fn a_super_admin_manages_keys_webhooks_and_the_audit_log_in_the_console() {
    let app = TestApp::spawn_with_webhook_settings(
        WebhookSettings::default().allow_private_targets(true),
    )
    .await;
    let company = app.company("Console").await;
    let base = app.serve_http().await;
    let receiver = Receiver::ok().await;
    let worker = Worker::start(&app);
    let mut browser = Browser::launch(1280).await;

    // Sign in.
    browser.goto(&format!("{base}{CONSOLE}")).await;
    browser.wait_for("document.body.dataset.state === 'signed-out'").await;
    // The page's weight and first paint, for docs/console.md (`--nocapture` shows it).
    let loaded = browser
        .eval(
            "new Promise(done => { \
              const report = paint => done({paint, bytes: performance.getEntriesByType('resource') \
                .concat(performance.getEntriesByType('navigation')) \
                .map(e => [e.name.split('/').pop(), e.decodedBodySize, e.encodedBodySize])}); \
              const look = () => { \
                const e = performance.getEntriesByName('first-contentful-paint')[0]; \
                e ? report(e.startTime) : requestAnimationFrame(look); }; \
              look(); setTimeout(() => report(null), 2000); })",
        )
        .await;
    eprintln!("console page load: {loaded}");
    keep_screenshot(&mut browser, "sign-in").await;
    sign_in(&mut browser, &company.email, PASSWORD).await;
    browser.wait_for("document.body.dataset.state === 'signed-in'").await;
    assert!(!browser.text("#session-expiry").await.is_empty());

    // Create a key: its secret is shown once and works against the API.
    browser.click("#nav-keys").await;
    browser.fill("#key-name", "Payroll sync").await;
    for scope in ["workforce:read", "workforce:write"] {
        browser
            .click(&format!("#key-scopes input[value='{scope}']"))
            .await;
    }
    browser.submit("#key-create-form").await;
    let (client_id, secret) = shown_secret(&mut browser).await;
    keep_screenshot(&mut browser, "keys-secret-once").await;
    app.get(&key(&client_id, &secret), "/external/v1/job-roles")
        .await
        .assert_status(200);
    browser.click("#secret-dismiss").await;
    let page = browser.text("body").await;
    assert!(!page.contains(&secret), "the secret is gone once dismissed");
    let row = format!("#keys-table tr[data-client-id='{client_id}']");
    browser.wait_for(&format!("document.querySelector(\"{row}\")")).await;
    let listed = browser.text(&row).await;
    assert!(listed.contains("Payroll sync") && listed.contains("workforce:write"), "{listed}");

    // Rotate: the old secret is refused at once, the new one works.
    confirm_in_row(&mut browser, &row, ".key-rotate", &client_id).await;
    let (rotated_id, rotated) = shown_secret(&mut browser).await;
    assert_eq!(rotated_id, client_id);
    assert_ne!(rotated, secret);
    app.get(&key(&client_id, &secret), "/external/v1/job-roles")
        .await
        .assert_status(401);
    app.get(&key(&client_id, &rotated), "/external/v1/job-roles")
        .await
        .assert_status(200);
    browser.click("#secret-dismiss").await;

    // Revoke, after a confirmation naming the key.
    confirm_in_row(&mut browser, &row, ".key-revoke", "Payroll sync").await;
    browser
        .wait_for(&format!(
            "document.querySelector(\"{row}\")?.innerText.includes('revoked')"
        ))
        .await;
    app.get(&key(&client_id, &rotated), "/external/v1/job-roles")
        .await
        .assert_status(401);
    keep_screenshot(&mut browser, "keys").await;

    // An endpoint on a loopback receiver, a test event, its delivery listed.
    browser.click("#nav-webhooks").await;
    browser.wait_for("document.querySelector('#endpoint-create-form')").await;
    browser.fill("#endpoint-url", &receiver.url).await;
    browser.fill("#endpoint-description", "Loopback receiver").await;
    browser.submit("#endpoint-create-form").await;
    let endpoint_row = "#endpoints-table tbody tr";
    browser
        .wait_for(&format!("document.querySelector('{endpoint_row}')"))
        .await;
    assert!(browser.text(endpoint_row).await.contains(&receiver.url));
    browser.click(&format!("{endpoint_row} .endpoint-test")).await;
    let test = receiver.wait_for(1).await;
    assert_eq!(test[0].json()["type"], "webhook.test");
    browser.click(&format!("{endpoint_row} .endpoint-deliveries")).await;
    browser
        .wait_for("[...document.querySelectorAll('#deliveries-table .delivery-status')].some(c => c.innerText.includes('succeeded'))")
        .await;
    keep_screenshot(&mut browser, "webhooks").await;

    // A change the endpoint subscribes to, delivered; then a replay of the last two
    // days sends the window's events again, each under its own event id.
    let writer = app.key(&company).await;
    app.create_role(&writer, "Night nurse").await;
    let delivered = receiver.wait_for(2).await;
    assert_eq!(delivered[1].json()["type"], "job_role.created");
    // The server's clock is pinned: a replay runs up to now, and now is after the event.
    app.clock.advance(chrono::Duration::minutes(1));
    browser.fill("#replay-from", "2026-11-17T00:00").await;
    browser.submit("#replay-form").await;
    browser
        .wait_for("document.querySelector('#status').innerText.includes('queued')")
        .await;
    // The window's events are queued again.
    let status = browser.text("#status").await;
    assert!(status.contains("2 deliveries queued"), "{status}");
    let again = receiver.wait_for(4).await;
    let role_event = again[1].id().to_owned();
    assert!(
        again[2..].iter().any(|r| r.id() == role_event),
        "the role's event is sent again under its own id"
    );

    // The audit log, newest first, filtered by action.
    browser.click("#nav-audit").await;
    browser.wait_for("document.querySelector('#audit-table tbody tr')").await;
    keep_screenshot(&mut browser, "audit-log").await;
    browser.fill("#audit-action", "api_key.revoked").await;
    browser.submit("#audit-filter-form").await;
    browser
        .wait_for("[...document.querySelectorAll('#audit-table .audit-action')].length > 0")
        .await;
    let actions = browser
        .eval("[...document.querySelectorAll('#audit-table .audit-action')].map(c => c.innerText)")
        .await;
    // Only the key revoked above: the console's own key is still live.
    assert_eq!(actions, json!(["api_key.revoked"]));

    // Sign out: the console's key is revoked with the session, and nothing is shown.
    browser.click("#signout").await;
    browser.wait_for("document.body.dataset.state === 'signed-out'").await;
    assert!(!browser.shown("#nav").await);
    let stored = browser
        .eval("localStorage.length + sessionStorage.length + document.cookie.length")
        .await;
    assert_eq!(stored, json!(0), "nothing of the session was ever stored");
    let keys = app.list_keys(&company).await;
    let console_key = keys
        .iter()
        .find(|k| k["name"] == "wfs console session")
        .expect("the console made a key for the webhook routes");
    assert_eq!(console_key["status"], "revoked");
    assert!(browser.errors.is_empty(), "{:?}", browser.errors);
    worker.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(wfs_test_chromium),
    ignore = "needs Chromium on PATH (chromium, chromium-browser or google-chrome) or at $WFS_CHROMIUM: apt-get install chromium (Debian/Ubuntu), brew install --cask chromium (macOS)"
)]
async fn under_a_mount_prefix_by_keyboard_a_wrong_password_and_an_expired_token_show_the_apis_message() {
    let app = TestApp::spawn_with(wfs_tower::Config::default().base_path("/partners")).await;
    let company = app.company("Prefixed").await;
    let base = app.serve_http().await;
    // 320 CSS pixels: a phone's width, and a 1280 px window at 400 % zoom (WCAG 1.4.10).
    let mut browser = Browser::launch(320).await;

    browser
        .goto(&format!("{base}/partners{CONSOLE}"))
        .await;
    browser.wait_for("document.body.dataset.state === 'signed-out'").await;

    // A wrong password: the API's message, word for word.
    let refused = app
        .send(
            Req::new(Method::POST, "/external/v1/auth/signin")
                .json(&json!({"email": company.email, "password": "not the password"})),
        )
        .await;
    refused.assert_status(401);
    sign_in(&mut browser, &company.email, "not the password").await;
    browser
        .wait_for("document.querySelector('#signin-error').innerText")
        .await;
    assert_eq!(browser.text("#signin-error").await, refused.error_message());

    // Signed in under the prefix, on a phone's width, by keyboard alone: the email
    // field, Tab to the password, Enter.
    browser.fill("#signin-email", "").await;
    browser.fill("#signin-password", "").await;
    browser.eval("document.querySelector('#signin-email').focus()").await;
    browser.type_text(&company.email).await;
    browser.press("Tab").await;
    assert_eq!(browser.focused().await, "signin-password");
    browser.type_text(PASSWORD).await;
    browser.press("Enter").await;
    browser.wait_for("document.body.dataset.state === 'signed-in'").await;
    browser.wait_for("document.querySelector('#keys-table tbody')").await;
    let overflow = browser
        .eval("window.innerWidth === 320 && document.documentElement.scrollWidth <= 320")
        .await;
    assert_eq!(overflow, json!(true), "the page fits a 320 px wide screen");
    keep_screenshot(&mut browser, "phone").await;

    // Two hours later the token has expired: the console says what the API says.
    app.clock.advance(chrono::Duration::hours(2));
    let expired = app
        .send(Req::new(Method::GET, "/external/v1/auth/keys").bearer(&company.token))
        .await;
    expired.assert_status(401);
    browser.click("#keys-refresh").await;
    browser.wait_for("document.body.dataset.state === 'signed-out'").await;
    assert_eq!(browser.text("#signin-error").await, expired.error_message());
    assert!(browser.errors.is_empty(), "{:?}", browser.errors);
}

#[tokio::test]
async fn the_console_page_is_public_html_under_a_strict_content_security_policy() {
    let app = TestApp::spawn().await;

    let page = app.send_raw(Req::new(Method::GET, CONSOLE)).await;
    let script = page
        .text()
        .split('"')
        .find(|part| part.starts_with("console/console.js?v="))
        .map(str::to_owned)
        .expect("the page loads its script by a relative, versioned URL");
    let asset = app
        .send_raw(Req::new(Method::GET, &format!("/external/v1/{script}")))
        .await;
    let missing = app
        .send(Req::new(Method::GET, "/external/v1/console/secrets.txt"))
        .await;

    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
    assert!(!csp.contains("unsafe-inline") && !csp.contains("http"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("form-action 'none'"));
    assert_eq!(asset.status, 200);
    assert_eq!(
        asset.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(
        asset.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    missing.assert_status(404);
}
