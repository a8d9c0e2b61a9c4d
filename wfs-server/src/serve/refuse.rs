//! Connections over their address's cap: answered 429 and closed, on tasks of their
//! own that hold no connection slot.

use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

/// Refusals of connections over their address's cap being answered at once; past
/// that, one is closed unanswered (a flood from many capped addresses at once).
pub(super) const REFUSALS_AT_ONCE: usize = 256;
/// Time allowed for a refusal, from the accept: reading the request head, writing
/// the 429 and the close.
const REFUSAL_TIME: Duration = Duration::from_secs(2);
/// The most bytes of a refused connection's request read before answering.
const REFUSAL_READ_BYTES: usize = 16 * 1024;

/// The answer to a connection over its address's cap: 429 with the error body,
/// `Retry-After` and `Connection: close`, as raw HTTP/1.1.
pub(super) fn too_many_connections(limit: usize) -> Bytes {
    raw_429(&format!(
        "Too many connections from this address (at most {limit} at once); \
         close one or reuse it, then retry"
    ))
}

/// A 429 with the error body carrying `message`, `Retry-After` and
/// `Connection: close`, as raw HTTP/1.1.
fn raw_429(message: &str) -> Bytes {
    let body = serde_json::json!({"error": {"code": 429, "message": message}}).to_string();
    Bytes::from(format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n\
         retry-after: 1\r\nconnection: close\r\nx-content-type-options: nosniff\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    ))
}

/// The answer to a connection that would take one of the last slots, kept for
/// addresses holding none, from an address that holds some: 429, as
/// [`too_many_connections`].
pub(super) fn reserve_kept() -> Bytes {
    raw_429(
        "The server is near its connection limit and keeps its last connections for \
         clients that hold none; reuse a connection you hold, then retry",
    )
}

/// Answers a connection over its address's cap with `answer` (429) on a task of its
/// own, holding no connection slot, all within [`REFUSAL_TIME`]; with
/// [`REFUSALS_AT_ONCE`] such answers already under way, closes it unanswered.
pub(super) fn refuse(
    stream: TcpStream,
    peer: SocketAddr,
    refusals: &Arc<Semaphore>,
    answer: Bytes,
) {
    let Ok(permit) = refusals.clone().try_acquire_owned() else {
        tracing::debug!(peer = %peer, "over the per-address cap, closed unanswered (refusals busy)");
        return;
    };
    tracing::debug!(peer = %peer, "over the per-address connection cap: 429");
    tokio::spawn(async move {
        // Every answer carries a request id (decisions.md): a new one, in front of
        // the prepared rest of the answer.
        let id = uuid::Uuid::new_v4();
        let (status_line, rest) =
            answer.split_at(answer.iter().position(|b| *b == b'\n').map_or(0, |i| i + 1));
        let answer = [
            status_line,
            format!("x-request-id: {id}\r\n").as_bytes(),
            rest,
        ]
        .concat();
        let _ = tokio::time::timeout(REFUSAL_TIME, answer_and_close(stream, &answer)).await;
        drop(permit);
    });
}

/// Reads the request head (so that the answer is not taken for one to a request not
/// yet sent), writes `answer`, then half-closes and reads what else comes until the
/// client closes: closing with unread input would reset the connection and could
/// destroy the answer before the client reads it.
async fn answer_and_close(mut stream: TcpStream, answer: &[u8]) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    while head.len() < REFUSAL_READ_BYTES && !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&chunk[..n]);
    }
    stream.write_all(answer).await?;
    stream.shutdown().await?;
    let mut drained = 0;
    while drained < REFUSAL_READ_BYTES {
        match stream.read(&mut chunk).await? {
            0 => break,
            n => drained += n,
        }
    }
    Ok(())
}
