"""`envfactory serve` under load: throughput and p50/p99 latency with 64 concurrent clients, on one
session and on many, against a bare Starlette app that echoes the same JSON on the same uvicorn
settings (the floor any ASGI server pays); and the cost of one call as a session's state grows
(issue 20 item 7: 0 vs 10,000 records); and, first, abuse as a user meets it (issue 20 items 2
and 3): requests while 1,000 idle connections are open, memory through 1,000 rejected 1 MB calls.

Each server runs in its own process (so the client's work does not share its GIL); the client is
one asyncio process with 64 keep-alive connections. Ratios are envfactory / baseline.

    .venv/bin/python bench/bench_serve.py [--requests N] [--clients C] [--records R] [--only abuse]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
BANK = ROOT / "examples" / "bank" / "bank.yaml"
TICKETS = ROOT / "examples" / "tickets" / "tickets.yaml"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _serve(kind: str, contract: str, port: int) -> None:
    import orjson
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    import envfactory
    from envfactory.server import create_app, uvicorn_config

    app: Any
    if kind == "envfactory":
        app = create_app(envfactory.load(contract))
        config = uvicorn_config(app, "127.0.0.1", port)
    else:

        async def echo(request: Request) -> Response:
            body = orjson.loads(await request.body())
            return Response(orjson.dumps({"balance": body.get("amount", 0)}), media_type="application/json")

        async def reset(request: Request) -> Response:
            return Response(b"{}", media_type="application/json")

        app = Starlette(
            routes=[Route("/_reset", reset, methods=["POST"]), Route("/{op}", echo, methods=["POST"])]
        )
        config = uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", http="h11", access_log=False
        )
    uvicorn.Server(config).run()


class Server:
    def __init__(self, kind: str, contract: Path) -> None:
        self.port = _free_port()
        self.process = multiprocessing.get_context("spawn").Process(
            target=_serve, args=(kind, str(contract), self.port), daemon=True
        )

    def __enter__(self) -> str:
        self.process.start()
        url = f"http://127.0.0.1:{self.port}"
        for _ in range(600):
            try:
                httpx.post(url + "/_reset", timeout=1)
                return url
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("server did not start")

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.join(10)


async def _load(url: str, clients: int, requests: int, many_sessions: bool) -> tuple[float, list[float]]:
    """Open one account per client's session (or one shared), then ``requests`` deposits spread
    over ``clients`` concurrent keep-alive clients; returns (requests/s, latencies in ms)."""
    latencies: list[float] = []
    per_client = requests // clients

    async def client(n: int) -> None:
        session = f"s{n}" if many_sessions else "shared"
        account = f"AC{n:04}"
        limits = httpx.Limits(max_connections=1)
        async with httpx.AsyncClient(
            base_url=url, headers={"x-envfactory-session": session}, limits=limits
        ) as c:
            await c.post("/open", json={"account": account, "owner": "ann"})
            for _ in range(per_client):
                start = time.perf_counter()
                answer = await c.post("/deposit", json={"account": account, "amount": 1})
                latencies.append((time.perf_counter() - start) * 1000)
                if answer.status_code != 200:
                    raise RuntimeError(f"{answer.status_code}: {answer.text}")

    start = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    elapsed = time.perf_counter() - start
    return len(latencies) / elapsed, latencies


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1]


def _growth(records: int, monotone: bool = True) -> list[tuple[str, float, float]]:
    """Microseconds per call (sequential, in process, no HTTP) of ``assign`` and
    ``create_ticket`` on a served session with no tickets and with ``records`` tickets; without
    ``monotone``, with ``verify``'s re-check plans alone (the baseline: whole re-checks of
    ``all(t < next_id for t in tickets)`` on every create)."""
    import envfactory
    from envfactory.server import MockServer, _ServedSimulator

    contract = envfactory.load(TICKETS)
    checks = MockServer(contract).rechecks
    if not monotone:
        checks.monotone.clear()
    sim = _ServedSimulator(contract, checks)
    calls = 300
    out: dict[str, list[float]] = {"assign": [], "create_ticket": []}
    for size in (0, records):
        sim.reset()
        live = max(size, 1)
        for n in range(live):
            sim.call("create_ticket", {"title": f"t{n}", "priority": "low"})
        for tool, value in (
            ("assign", lambda n, live=live: {"id": 1 + n % live, "assignee": "bo"}),
            ("create_ticket", lambda n: {"title": f"more{n}", "priority": "high"}),
        ):
            start = time.perf_counter()
            for n in range(calls):
                sim.call(tool, value(n))
            out[tool].append((time.perf_counter() - start) / calls * 1e6)
    return [(tool, pair[0], pair[1]) for tool, pair in out.items()]


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _timed_get(url: str) -> float:
    """Milliseconds for one request on a fresh connection (a new client's first request)."""
    start = time.perf_counter()
    with httpx.Client(timeout=30) as client:
        answer = client.post(url + "/deposit", json={"account": "NOPE01", "amount": 1})
    if answer.status_code != 404:
        raise RuntimeError(f"{answer.status_code}: {answer.text}")
    return (time.perf_counter() - start) * 1000


def _idle(port: int, count: int, hosts: int) -> list[socket.socket]:
    """``count`` connections that send nothing, from ``hosts`` loopback addresses (127.0.0.2...)."""
    out = []
    for n in range(count):
        sock = socket.socket()
        sock.bind((f"127.0.0.{2 + n % hosts}", 0))
        sock.connect(("127.0.0.1", port))
        out.append(sock)
    return out


def _closed(socks: list[socket.socket]) -> int:
    """How many of ``socks`` the server has closed (a read of 0 bytes, without waiting)."""
    closed = 0
    for sock in socks:
        sock.setblocking(False)
        try:
            closed += sock.recv(1) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return closed


def _abuse(idle: int, calls: int) -> None:
    """Issue 20 items 2 and 3 as a user meets them: ``envfactory serve`` (default options) in
    its own process; real requests while ``idle`` connections that send nothing are open (from
    one address, then spread over ten), and the server's memory through ``calls`` rejected calls
    of ~1 MB each. Baselines: the same request on the idle-free server, the memory at start."""
    import subprocess

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "envfactory", "serve", str(BANK), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(url + "/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        quiet = sorted(_timed_get(url) for _ in range(20))
        print(f"a request on an idle server: median {quiet[10]:.1f} ms, max {quiet[-1]:.1f} ms")
        for hosts in (1, 10):
            socks = _idle(port, idle, hosts)
            time.sleep(0.5)
            busy = sorted(_timed_get(url) for _ in range(20))
            closed = _closed(socks)
            for sock in socks:
                sock.close()
            print(
                f"a request with {idle} idle connections open ({hosts} address(es)): median "
                f"{busy[10]:.1f} ms, max {busy[-1]:.1f} ms (ratio to idle-free median "
                f"{busy[10] / quiet[10]:.2f}x); {closed} idle connections closed by the server"
            )
            time.sleep(0.5)
        start = _rss_mb(proc.pid)
        body = b'{"account": "' + b"A" * 999_950 + b'", "amount": 1}'
        peak = start
        with httpx.Client(base_url=url, timeout=60) as client:
            began = time.perf_counter()
            for n in range(calls):
                answer = client.post("/deposit", content=body, headers={"content-type": "application/json"})
                if answer.status_code != 404:
                    raise RuntimeError(f"{answer.status_code}: {answer.text[:200]}")
                if n % 50 == 0:
                    peak = max(peak, _rss_mb(proc.pid))
            elapsed = time.perf_counter() - began
            state = client.get("/_state")
        end = _rss_mb(proc.pid)
        print(
            f"{calls} rejected calls of {len(body):,} bytes in {elapsed:.1f} s: server RSS {start:.0f} MB at "
            f"start, peak {max(peak, _rss_mb(proc.pid, 'VmHWM')):.0f} MB, {end:.0f} MB after "
            f"(ratio peak/start {max(peak, _rss_mb(proc.pid, 'VmHWM')) / start:.2f}x); "
            f"history: {state.headers.get('x-envfactory-history')}"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=6400)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--idle", type=int, default=1000, help="idle connections for the abuse figures")
    parser.add_argument(
        "--big-calls", type=int, default=1000, help="rejected ~1 MB calls for the memory figure"
    )
    parser.add_argument("--only", choices=["load", "growth", "abuse"], help="run one part")
    args = parser.parse_args()
    if args.only in (None, "abuse"):
        _abuse(args.idle, args.big_calls)
    if args.only == "abuse":
        return 0
    if args.only == "growth":
        for monotone in (False, True):
            label = "serve" if monotone else "verify's plans alone"
            for tool, empty, full in _growth(args.records, monotone):
                print(
                    f"{label:20} tickets {tool:13}: {empty:6.0f} us at 1 record, {full:6.0f} us at "
                    f"{args.records} records ({full / empty:.2f}x)"
                )
        return 0
    print(f"{args.clients} clients, {args.requests} deposits per run, loopback, one process per server")
    for many in (False, True):
        label = "many sessions" if many else "one session"
        figures = {}
        for kind in ("baseline", "envfactory"):
            with Server(kind, BANK) as url:
                asyncio.run(_load(url, args.clients, args.clients * 4, many))  # warm up
                figures[kind] = asyncio.run(_load(url, args.clients, args.requests, many))
        (ours, lat), (base, blat) = figures["envfactory"], figures["baseline"]
        print(
            f"{label:14}: envfactory {ours:7.0f} req/s p50 {_pct(lat, 50):6.1f} ms p99 {_pct(lat, 99):6.1f} ms | "
            f"starlette echo {base:7.0f} req/s p50 {_pct(blat, 50):6.1f} ms p99 {_pct(blat, 99):6.1f} ms | "
            f"throughput ratio {ours / base:.2f}x"
        )
    for tool, empty, full in _growth(args.records):
        print(
            f"tickets {tool:13} on a served session: {empty:6.0f} us at 1 record, {full:6.0f} us at "
            f"{args.records} records (ratio {full / empty:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
