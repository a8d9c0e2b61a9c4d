//! Request metrics, recorded through the [`metrics`] facade: the host installs the
//! recorder (the reference server's Prometheus exporter); without one, recording
//! costs next to nothing.
//!
//! Once per request, whatever its outcome (a caught panic and a timeout included):
//!
//! - [`HTTP_REQUESTS_TOTAL`], a counter labelled `route`, `method`, `status`;
//! - [`HTTP_REQUEST_DURATION_SECONDS`], a histogram labelled `route`, `method`.
//!
//! `route` is the route template (`/external/v1/job-roles/{id}`), or
//! [`UNMATCHED_ROUTE`] for a path no route has: never a raw path or an id. `method` is
//! one of the standard methods or `other`. Every label is a `&'static str`, so
//! labelling allocates nothing.

use http::{Method, StatusCode};
use std::time::Duration;

/// Counter of answered requests, labelled `route`, `method`, `status`.
pub const HTTP_REQUESTS_TOTAL: &str = "wfs_http_requests_total";

/// Histogram of the time from receiving a request to having its response, in seconds,
/// labelled `route`, `method`.
pub const HTTP_REQUEST_DURATION_SECONDS: &str = "wfs_http_request_duration_seconds";

/// The `route` label of a request whose path matches no route (a 404).
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// Describes the metrics to the installed recorder (units and help texts). Called
/// when a [`WfsService`](crate::WfsService) is built; a recorder installed later just
/// has no descriptions.
pub(crate) fn describe() {
    metrics::describe_counter!(
        HTTP_REQUESTS_TOTAL,
        metrics::Unit::Count,
        "HTTP requests answered, by route template, method and status"
    );
    metrics::describe_histogram!(
        HTTP_REQUEST_DURATION_SECONDS,
        metrics::Unit::Seconds,
        "Time to answer an HTTP request, by route template and method"
    );
}

/// Records one answered request.
pub(crate) fn record(route: &'static str, method: &Method, status: StatusCode, took: Duration) {
    let method = method_label(method);
    metrics::counter!(
        HTTP_REQUESTS_TOTAL,
        "route" => route,
        "method" => method,
        "status" => status_label(status),
    )
    .increment(1);
    metrics::histogram!(
        HTTP_REQUEST_DURATION_SECONDS,
        "route" => route,
        "method" => method,
    )
    .record(took.as_secs_f64());
}

/// The standard methods by name; any other (extension) method is `other`, so a client
/// cannot grow the label set.
fn method_label(method: &Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "POST" => "POST",
        "PATCH" => "PATCH",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        "TRACE" => "TRACE",
        "CONNECT" => "CONNECT",
        _ => "other",
    }
}

/// Every status code 100..=999 as three digits, back to back, built at compile time:
/// `status_label` slices it, so the label is `&'static str`.
static STATUS_DIGITS: [u8; 2700] = {
    let mut digits = [0u8; 2700];
    let mut code = 100;
    while code < 1000 {
        let at = (code - 100) * 3;
        digits[at] = b'0' + (code / 100) as u8;
        digits[at + 1] = b'0' + (code / 10 % 10) as u8;
        digits[at + 2] = b'0' + (code % 10) as u8;
        code += 1;
    }
    digits
};

fn status_label(status: StatusCode) -> &'static str {
    // `StatusCode` is always 100..=999.
    let at = usize::from(status.as_u16().saturating_sub(100)).min(899) * 3;
    std::str::from_utf8(&STATUS_DIGITS[at..at + 3]).unwrap_or("000")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_labels_as_its_three_digits() {
        for code in 100..1000 {
            let status = StatusCode::from_u16(code).unwrap();
            assert_eq!(status_label(status), status.as_str());
        }
    }

    #[test]
    fn methods_label_by_name_and_extensions_as_other() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::DELETE), "DELETE");
        assert_eq!(method_label(&Method::from_bytes(b"BREW").unwrap()), "other");
    }
}
