//! A headless Chromium driven over the Chrome DevTools Protocol, for the pages a
//! person uses (the admin console): launched here with no internet (nothing resolves
//! but 127.0.0.1), one page, and JSON commands on its WebSocket (`Runtime.evaluate`,
//! `Page.navigate`, `Page.captureScreenshot`). Killed when dropped.
//!
//! Scripts run in the page as a person's clicks would: a field's value set and an
//! `input` event sent, a button clicked, a form submitted with `requestSubmit()`.

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a page may take to reach what a test waits for.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The headless browser: `WFS_CHROMIUM`, else the first of Debian's names on PATH.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("WFS_CHROMIUM") {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!(
                "the browser tests need a headless Chromium, and none is installed: \
                 `apt-get install -y chromium` (CI's .ci/run does), or point WFS_CHROMIUM at one"
            )
        })
}

/// The arguments every browser test starts Chromium with: headless, and with no
/// internet (nothing resolves but 127.0.0.1, and any other connection goes to a proxy
/// on the discard port, where nothing listens).
pub const OFFLINE_HEADLESS: [&str; 14] = [
    "--headless",
    // Root in CI has no user namespace to sandbox with.
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=127.0.0.1",
];

/// One browser with one page.
pub struct Browser {
    child: Child,
    page: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// Exceptions the page threw and console errors it logged (CSP refusals included).
    pub errors: Vec<String>,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    /// Starts the browser with a viewport exactly `width` CSS pixels wide and attaches
    /// to its page.
    pub async fn launch(width: u32) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(chromium())
            .args(OFFLINE_HEADLESS)
            .args([
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--window-size={width},900"))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium().display()));
        let port = debugging_port(&mut child);
        let page = page_socket(port).await;
        let mut browser = Browser {
            child,
            page,
            next_id: 0,
            errors: Vec::new(),
            _profile: profile,
        };
        browser.call("Runtime.enable", json!({})).await;
        browser.call("Page.enable", json!({})).await;
        browser.call("Log.enable", json!({})).await;
        // The window has a minimum width; the page's viewport is set exactly.
        browser
            .call(
                "Emulation.setDeviceMetricsOverride",
                json!({"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
            )
            .await;
        browser
    }

    /// Sends a command and answers its result; events that come first are noted.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        self.page.send(Message::text(message)).await.unwrap();
        loop {
            let next = tokio::time::timeout(PATIENCE, self.page.next())
                .await
                .unwrap_or_else(|_| panic!("{method} had no answer within {PATIENCE:?}"))
                .expect("the page's socket stays open")
                .unwrap();
            let Message::Text(text) = next else { continue };
            let message: Value = serde_json::from_str(&text).unwrap();
            if message["id"] == id {
                assert!(message["error"].is_null(), "{method}: {message}");
                return message["result"].clone();
            }
            self.note(&message);
        }
    }

    fn note(&mut self, event: &Value) {
        match event["method"].as_str() {
            Some("Runtime.exceptionThrown") => self
                .errors
                .push(event["params"]["exceptionDetails"].to_string()),
            Some("Log.entryAdded") if event["params"]["entry"]["level"] == "error" => {
                let entry = &event["params"]["entry"];
                // A refused request (401, 404) is the page's business, not a fault.
                if entry["source"] != "network" {
                    self.errors.push(entry["text"].to_string());
                }
            }
            _ => {}
        }
    }

    /// Loads `url` and waits until its document has loaded.
    pub async fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url})).await;
        self.wait_for("document.readyState === 'complete'").await;
    }

    /// The value of `expression` in the page (a promise is awaited).
    pub async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            )
            .await;
        assert!(
            result["exceptionDetails"].is_null(),
            "{expression} threw: {}",
            result["exceptionDetails"]
        );
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page and no request is in flight
    /// (`body.dataset.busy`, which the console keeps).
    pub async fn wait_for(&mut self, expression: &str) {
        let deadline = Instant::now() + PATIENCE;
        let quiet = format!("(document.body?.dataset.busy ?? '0') === '0' && !!({expression})");
        loop {
            if self.eval(&quiet).await == Value::Bool(true) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "waited {PATIENCE:?} for {expression}; the page shows: {}",
                self.text("body").await
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The text of the first element matching `selector` ("" when there is none).
    pub async fn text(&mut self, selector: &str) -> String {
        let value = self
            .eval(&format!(
                "document.querySelector({})?.innerText ?? ''",
                js(selector)
            ))
            .await;
        value.as_str().unwrap_or_default().to_owned()
    }

    /// Types `value` into the field `selector`, as a person would.
    pub async fn fill(&mut self, selector: &str, value: &str) {
        self.eval(&format!(
            "(() => {{ const f = document.querySelector({}); f.focus(); f.value = {}; \
             f.dispatchEvent(new Event('input', {{bubbles: true}})); \
             f.dispatchEvent(new Event('change', {{bubbles: true}})); }})()",
            js(selector),
            js(value)
        ))
        .await;
    }

    /// Types `text` where the focus is, as a keyboard would.
    pub async fn type_text(&mut self, text: &str) {
        self.call("Input.insertText", json!({"text": text})).await;
    }

    /// Presses and releases a key (`Tab`, `Enter`, `Escape`).
    pub async fn press(&mut self, key: &str) {
        let (code, text) = match key {
            "Tab" => (9, ""),
            "Enter" => (13, "\r"),
            "Escape" => (27, ""),
            other => panic!("no key code for {other}"),
        };
        for kind in ["keyDown", "keyUp"] {
            let mut event = json!({"type": kind, "key": key, "code": key,
                "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code});
            if kind == "keyDown" && !text.is_empty() {
                event["text"] = json!(text);
            }
            self.call("Input.dispatchKeyEvent", event).await;
        }
    }

    /// The id of the element that has the focus.
    pub async fn focused(&mut self) -> String {
        let id = self.eval("document.activeElement?.id ?? ''").await;
        id.as_str().unwrap_or_default().to_owned()
    }

    /// Clicks the first element matching `selector`.
    pub async fn click(&mut self, selector: &str) {
        let found = self
            .eval(&format!(
                "(() => {{ const e = document.querySelector({}); if (!e) return false; \
                 e.click(); return true; }})()",
                js(selector)
            ))
            .await;
        assert_eq!(found, Value::Bool(true), "nothing to click at {selector}");
    }

    /// Submits the form `selector` as its submit button would.
    pub async fn submit(&mut self, selector: &str) {
        self.eval(&format!(
            "document.querySelector({}).requestSubmit()",
            js(selector)
        ))
        .await;
    }

    /// Whether `selector` matches an element that is shown (not `hidden`, nor inside
    /// a hidden one).
    pub async fn shown(&mut self, selector: &str) -> bool {
        self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); \
             return !!e && e.getClientRects().length > 0; }})()",
            js(selector)
        ))
        .await
            == Value::Bool(true)
    }

    /// Saves a PNG of what the page shows, whole, at `path`.
    pub async fn screenshot(&mut self, path: &Path) {
        let shot = self
            .call(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true}),
            )
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        std::fs::write(path, png).unwrap();
    }
}

/// `text` as a JavaScript string literal.
pub fn js(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// The port of the browser's DevTools endpoint, from the line it prints on stderr.
fn debugging_port(child: &mut Child) -> u16 {
    let stderr = child.stderr.take().unwrap();
    let (found, port) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !sent && let Some(rest) = line.strip_prefix("DevTools listening on ws://127.0.0.1:") {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let _ = found.send(digits.parse::<u16>().unwrap());
                sent = true;
            }
        }
    });
    port.recv_timeout(PATIENCE)
        .expect("chromium printed no DevTools address")
}

/// The WebSocket of the browser's one page.
async fn page_socket(port: u16) -> WebSocketStream<MaybeTlsStream<TcpStream>> {
    let deadline = Instant::now() + PATIENCE;
    let url = loop {
        let targets: Value = reqwest::get(format!("http://127.0.0.1:{port}/json/list"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let page = targets
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["type"] == "page")
            .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(str::to_owned));
        if let Some(url) = page {
            break url;
        }
        assert!(Instant::now() < deadline, "chromium opened no page");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio_tungstenite::connect_async(url).await.unwrap().0
}
