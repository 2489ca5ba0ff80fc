"""`envfactory serve` under load: throughput and p50/p99 latency with 64 concurrent clients, on one
session and on many, against a bare Starlette app that echoes the same JSON on the same uvicorn
settings (the floor any ASGI server pays); and the cost of one call as a session's state grows
(issue 20 item 7: 0 vs 10,000 records).

Each server runs in its own process (so the client's work does not share its GIL); the client is
one asyncio process with 64 keep-alive connections. Ratios are envfactory / baseline.

    .venv/bin/python bench/bench_serve.py [--requests N] [--clients C] [--records R]
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


def _growth(records: int) -> list[tuple[str, float, float]]:
    """Microseconds per call (sequential, in process, no HTTP) of ``assign`` and
    ``create_ticket`` on a served session with no tickets and with ``records`` tickets."""
    import envfactory
    from envfactory.server import MockServer, _ServedSimulator

    contract = envfactory.load(TICKETS)
    sim = _ServedSimulator(contract, MockServer(contract).rechecks)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=6400)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--records", type=int, default=10_000)
    args = parser.parse_args()
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
