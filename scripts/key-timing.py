#!/usr/bin/env python3
"""Answer times of a made-up client id against a known one with a wrong secret.

    scripts/key-timing.py --server 127.0.0.1:8080 --known-id api_... [--rounds 2000]

Alternates the two kinds of request on one keep-alive connection each (GET
/external/v1/job-roles, both answered 401 `Invalid API credentials`) and prints one JSON
line: the median and p90 of each, in microseconds, and their difference. Issue 18
point 7: both paths must cost the same, and repeated made-up ids must stay off the
database. The made-up id is the same every round (a probe repeats what it measures);
`--distinct` sends a new one each round instead (those reads are budgeted per address).
"""

import argparse
import http.client
import json
import statistics
import time
import uuid


def timed(conn, client_id):
    started = time.perf_counter()
    conn.request("GET", "/external/v1/job-roles",
                 headers={"x-api-key": client_id, "x-api-secret": "sec_wrong_secret"})
    res = conn.getresponse()
    res.read()
    elapsed = (time.perf_counter() - started) * 1e6
    assert res.status == 401, res.status
    return elapsed


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--server", default="127.0.0.1:8080")
    p.add_argument("--known-id", required=True)
    p.add_argument("--rounds", type=int, default=2000)
    p.add_argument("--distinct", action="store_true")
    a = p.parse_args()
    host, port = a.server.rsplit(":", 1)
    known_conn = http.client.HTTPConnection(host, int(port))
    unknown_conn = http.client.HTTPConnection(host, int(port))
    made_up = f"api_{uuid.uuid4().hex}"
    known, unknown = [], []
    for i in range(a.rounds):
        if a.distinct:
            made_up = f"api_{uuid.uuid4().hex}"
        known.append(timed(known_conn, a.known_id))
        unknown.append(timed(unknown_conn, made_up))
    def summary(xs):
        xs = sorted(xs[len(xs) // 10:])  # the first tenth warms up
        return {"median_us": round(statistics.median(xs)), "p90_us": round(xs[int(len(xs) * 0.9)])}
    k, u = summary(known), summary(unknown)
    print(json.dumps({"known_wrong_secret": k, "made_up_id": u,
                      "median_difference_us": u["median_us"] - k["median_us"],
                      "distinct": a.distinct, "rounds": a.rounds}))


if __name__ == "__main__":
    main()
