#!/usr/bin/env python3
"""The fair-share attacks of issue 30 against a wfs-server binary, before and after.

    scripts/attack-fair-share.py SCENARIO --bin target/release/wfs-server [--extra "--flag v"]

Each scenario starts the given binary on a fresh SQLite database on a free loopback
port, attacks it from loopback addresses (127.0.1.x, 127.0.2.x: on Linux every
127.0.0.0/8 address is the loopback), measures what another tenant sees from
127.0.0.2, stops the server by its PID and prints one JSON line.

  slots   --max-connections 64: 16 addresses x 4 keep-alive connections, each sending
          `GET /livez` every 5 s (under every deadline), reconnecting when closed; then
          10 probes from another address, each on a new connection: how many were
          answered within 10 s.
  h2      HTTP/2 prior knowledge (h2c) with SETTINGS_INITIAL_WINDOW_SIZE 0 and no
          WINDOW_UPDATE, --conns connections each opening 100 streams for the list of
          1,000 locations (each with a 500-character address: about 0.6 MB computed per
          answer): the server's RSS before, and its peak over 20 s of the attack.
          Needs the `h2` Python package (pip install h2).
  held    one company with 21 keys holds reads (`wait=60`) from 11 addresses, until
          refused; then another company's `wait=5` read: its status and time. The
          server's flags scale the caps (--extra "--max-held 40").
  signin  80 sign-ins at once from 40 addresses (wrong passwords for one login), a new
          wave every second for 10 s (whether or not the last was answered), while a
          tenant reads `GET /external/v1/job-roles` with its
          key (wrk, 4 connections): the tenant's median and p95 latency and throughput,
          beside the same reads with no flood. Needs wrk.
"""

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import tempfile
import threading
import time

SECRET = "fair-share-attack-secret-fair-share-attack-secret"
PASSWORD = "correct-horse-battery"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, extra):
        self.dir = tempfile.mkdtemp(prefix="wfs-fair-")
        self.url = f"sqlite://{self.dir}/wfs.db?mode=rwc"
        self.binary = binary
        self.port = free_port()
        env = dict(os.environ, WFS_JWT_SECRET=SECRET, RUST_LOG="warn")
        self.proc = subprocess.Popen(
            [binary, "serve", "--database-url", self.url, "--bind", f"127.0.0.1:{self.port}", *extra],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.1).close()
                break
            except OSError:
                time.sleep(0.05)

    def cli(self, *args, stdin=None):
        out = subprocess.run(
            [self.binary, *args, "--database-url", self.url],
            input=stdin,
            capture_output=True,
            text=True,
            env=dict(os.environ, WFS_JWT_SECRET=SECRET),
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    def company(self, name):
        made = self.cli("create-admin", "--company", name, "--email", f"{name.lower()}@a.test",
                        "--first-name", "A", "--last-name", "B", "--password-stdin", stdin=PASSWORD + "\n")
        return made["companyId"]

    def key(self, company, name="k"):
        made = self.cli("create-key", "--company-id", company, "--name", name,
                        "--scopes", "workforce:read,workforce:write,availability:read")
        return made["clientId"], made["clientSecret"]

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(40)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def request(port, source, raw, timeout):
    """One request on a new connection from `source`: (status or None, seconds)."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout, source_address=(source, 0)) as s:
            s.settimeout(timeout)
            s.sendall(raw)
            head = b""
            while b"\r\n" not in head:
                chunk = s.recv(4096)
                if not chunk:
                    return None, time.monotonic() - started
                head += chunk
            return int(head.split()[1]), time.monotonic() - started
    except OSError:
        return None, time.monotonic() - started


def post(port, key, path, body, idem):
    body = json.dumps(body)
    raw = (f"POST {path} HTTP/1.1\r\nHost: x\r\nX-Api-Key: {key[0]}\r\n"
           f"X-Api-Secret: {key[1]}\r\nIdempotency-Key: {idem}\r\n"
           f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
           f"Connection: close\r\n\r\n{body}").encode()
    return request(port, "127.0.0.2", raw, 10)


def get(path, key=None):
    auth = f"X-Api-Key: {key[0]}\r\nX-Api-Secret: {key[1]}\r\n" if key else ""
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n".encode()


TENANT_LUA = """
wrk.headers["X-Api-Key"] = "%s"
wrk.headers["X-Api-Secret"] = "%s"
done = function(summary, latency, requests)
  io.write(string.format('{"median_ms": %%.2f, "p95_ms": %%.2f, "requests_per_s": %%.0f, "errors": %%d}\\n',
    latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    summary.requests / (summary.duration / 1e6),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end
"""


def slots(args):
    server = Server(args.bin, ["--max-connections", "64", *args.extra])
    stop = threading.Event()
    closed = [0]

    def keep_alive(source):
        while not stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", server.port), 30, source_address=(source, 0))
                s.settimeout(30)
                while not stop.is_set():
                    s.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
                    if not s.recv(4096):
                        break
                    stop.wait(5)
                s.close()
            except OSError:
                pass
            if not stop.is_set():
                closed[0] += 1

    threads = [threading.Thread(target=keep_alive, args=(f"127.0.1.{a}",), daemon=True)
               for a in range(1, 17) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(3)
    probes = [request(server.port, "127.0.0.2", get("/livez"), 10) for _ in range(10)]
    time.sleep(6)  # each attacker sends again, and learns whether it was closed
    stop.set()
    server.stop()
    answered = [round(t, 3) for status, t in probes if status == 200]
    return {"scenario": "slots", "probes": 10, "answered_within_10s": len(answered),
            "answer_seconds": answered, "attacker_connections_closed": closed[0]}


def h2(args):
    import h2.config
    import h2.connection
    import h2.settings

    server = Server(args.bin, list(args.extra))
    key = server.key(server.company("Heavy"))
    for n in range(1000):
        post(server.port, key, "/external/v1/locations", {"name": f"Site {n}", "address": "x" * 500}, f"loc-{n}")
    before = server.rss_kib()
    conns = []
    refused = 0
    for _ in range(args.conns):
        s = socket.create_connection(("127.0.0.1", server.port), 5, source_address=("127.0.0.3", 0))
        c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        c.initiate_connection()
        c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
        for n in range(100):
            c.send_headers(1 + 2 * n, [(":method", "GET"), (":path", "/external/v1/locations"),
                                       (":scheme", "http"), (":authority", "x"),
                                       ("x-api-key", key[0]), ("x-api-secret", key[1])], end_stream=True)
        try:
            s.sendall(c.data_to_send())
        except OSError:
            refused += 1
        conns.append(s)
    peak = before
    for _ in range(40):
        time.sleep(0.5)
        peak = max(peak, server.rss_kib())
    for s in conns:
        s.close()
    server.stop()
    return {"scenario": "h2", "connections": args.conns, "streams_each": 100,
            "rss_before_mib": round(before / 1024, 1), "rss_peak_mib": round(peak / 1024, 1),
            "send_refused": refused}


def held(args):
    server = Server(args.bin, list(args.extra))
    greedy, other = server.company("Greedy"), server.company("Other")
    keys = [server.key(greedy, f"k{n}") for n in range(21)]
    other_key = server.key(other)
    socks, refused = [], {}
    path = "/external/v1/workforce/resources?start=now&wait=60"
    for n, key in enumerate(keys):
        for _ in range(100):
            source = f"127.0.2.{len(socks) % 11 + 1}"
            raw = get(path, key).replace(b"Connection: close\r\n", b"")
            try:
                s = socket.create_connection(("127.0.0.1", server.port), 5, source_address=(source, 0))
                s.sendall(raw)
                s.settimeout(0.05)
                try:
                    head = s.recv(64)
                    status = int(head.split()[1]) if head else None
                    refused[status] = refused.get(status, 0) + 1
                    s.close()
                    break
                except socket.timeout:
                    s.settimeout(None)
                    socks.append(s)
            except OSError:
                refused["connect"] = refused.get("connect", 0) + 1
                break
    status, took = request(server.port, "127.0.0.2",
                           get("/external/v1/workforce/resources?start=now&wait=5", other_key), 15)
    for s in socks:
        s.close()
    server.stop()
    return {"scenario": "held", "greedy_held": len(socks), "greedy_refused": refused,
            "other_company_status": status, "other_company_seconds": round(took, 3)}


def signin(args):
    server = Server(args.bin, list(args.extra))
    company = server.company("Acme")
    key = server.key(company)
    for n in range(10):  # ten roles, as the read benchmark's
        post(server.port, key, "/external/v1/job-roles", {"title": f"Role {n}"}, f"role-{n}")

    def tenant(seconds):
        # wrk, in a process of its own (a Python tenant would share the flood's GIL):
        # four connections reading one after the other, and its latency percentiles.
        script = os.path.join(server.dir, "tenant.lua")
        with open(script, "w") as f:
            f.write(TENANT_LUA % (key[0], key[1]))
        out = subprocess.run(
            ["wrk", "-t1", "-c4", f"-d{seconds}s", "-s", script,
             f"http://127.0.0.1:{server.port}/external/v1/job-roles"],
            capture_output=True, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    quiet = tenant(5)
    stop = threading.Event()
    outcomes = {}
    body = json.dumps({"email": "acme@a.test", "password": "not the password"})
    raw = (f"POST /external/v1/auth/signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}").encode()

    def attempt(n):
        status, _ = request(server.port, f"127.0.3.{n % 40 + 1}", raw, 60)
        with lock:
            outcomes[status] = outcomes.get(status, 0) + 1

    def flood():
        # A wave of 80 at once every second, whether or not the last was answered.
        while not stop.is_set():
            for n in range(80):
                threading.Thread(target=attempt, args=(n,), daemon=True).start()
            stop.wait(1)

    lock = threading.Lock()
    waves = threading.Thread(target=flood, daemon=True)
    waves.start()
    time.sleep(1)
    loud = tenant(10)
    stop.set()
    waves.join()
    time.sleep(2)
    server.stop()
    return {"scenario": "signin", "tenant_quiet": quiet, "tenant_during_flood": loud,
            "sign_in_answers": {str(k): v for k, v in outcomes.items()}}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=["slots", "h2", "held", "signin"])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--extra", default="", help="more server flags, one string")
    parser.add_argument("--conns", type=int, default=3, help="h2: connections")
    args = parser.parse_args()
    args.extra = args.extra.split()
    print(json.dumps({"slots": slots, "h2": h2, "held": held, "signin": signin}[args.scenario](args)))


if __name__ == "__main__":
    main()
