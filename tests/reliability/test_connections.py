"""Idle and half-open connections cannot lock anyone out of ``serve`` (issue 20 item 2).

Loopback only; every socket opened here is closed at the end; ``pytest.mark.timeout`` is a hang
guard, never a measure.
"""

from __future__ import annotations

import selectors
import socket
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

import envfactory
from envfactory.server import running

ROOT = Path(__file__).resolve().parents[2]
IDLE = 300


@pytest.fixture(scope="module")
def bank() -> envfactory.Contract:
    return envfactory.load(ROOT / "examples" / "bank" / "bank.yaml")


def _idle_sockets(url: str, count: int, stack: ExitStack) -> list[socket.socket]:
    host, port = url.removeprefix("http://").split(":")
    opened = []
    for _ in range(count):
        sock = stack.enter_context(socket.create_connection((host, int(port)), timeout=10))
        opened.append(sock)
    return opened


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed this socket (reads EOF or a reset), waiting up to its timeout."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _closed_within(socks: list[socket.socket], seconds: float) -> int:
    """How many of ``socks`` the server closed (EOF or a reset) by ``seconds`` from now, all
    waited on at once."""
    closed = 0
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        end = time.monotonic() + seconds
        while selector.get_map() and (left := end - time.monotonic()) > 0:
            for key, _ in selector.select(left):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                selector.unregister(sock)
                sock.settimeout(10)
                closed += _closed_by_server(sock)
    return closed


@pytest.mark.timeout(600)
def test_real_requests_are_served_while_hundreds_of_idle_connections_wait(bank: envfactory.Contract) -> None:
    with running(bank, max_per_client=64) as url, ExitStack() as stack:
        idle = _idle_sockets(url, IDLE, stack)
        with httpx.Client(base_url=url, timeout=30) as client:
            for n in range(5):
                answer = client.post("/open", json={"account": f"AA{n:02}", "owner": "ann"})
                assert answer.status_code == 200, answer.text
            assert client.get("/_state").status_code == 200
        # the oldest idle connections made room: all but the newest few were closed by the server
        for sock in idle[:10]:
            sock.settimeout(10)
            assert _closed_by_server(sock)


@pytest.mark.timeout(600)
def test_a_thousand_idle_connections_from_ten_addresses_leave_room(bank: envfactory.Contract) -> None:
    """The issue's figure at the default limits: 1,000 connections that send nothing, 100 from
    each of ten loopback addresses (each under its per-address limit), fill every slot; real
    requests from another address are still answered, the oldest idle connection making room."""
    with running(bank, header_timeout=120) as url, ExitStack() as stack:
        port = int(url.rsplit(":", 1)[1])
        idle = []
        for n in range(1000):
            sock = stack.enter_context(socket.socket())
            sock.settimeout(10)
            sock.bind((f"127.0.0.{2 + n % 10}", 0))
            sock.connect(("127.0.0.1", port))
            idle.append(sock)
        for n in range(5):
            with httpx.Client(base_url=url, timeout=120) as client:  # a new connection each time
                answer = client.post("/open", json={"account": f"AB{n:02}", "owner": "ann"})
                assert answer.status_code == 200, answer.text
        assert _closed_by_server(idle[0])  # the oldest made room for the first newcomer


@pytest.mark.timeout(600)
def test_idle_connections_from_one_address_never_exceed_its_limit(bank: envfactory.Contract) -> None:
    with running(bank, max_per_client=16, header_timeout=60) as url, ExitStack() as stack:
        idle = _idle_sockets(url, 64, stack)
        with httpx.Client(base_url=url, timeout=30) as client:
            assert client.get("/").status_code == 200
        assert len(idle) - _closed_within(idle, 0.5) <= 16


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "head", [b"", b"GET / HTTP/1.1\r\nHost: x\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: 1"]
)
def test_a_request_head_that_never_completes_is_closed(bank: envfactory.Contract, head: bytes) -> None:
    with running(bank, header_timeout=0.5) as url, ExitStack() as stack:
        (sock,) = _idle_sockets(url, 1, stack)
        sock.sendall(head)
        sock.settimeout(30)
        assert _closed_by_server(sock)
        # a complete request on a fresh connection is still answered
        assert httpx.get(url + "/", timeout=10).status_code == 200


@pytest.mark.timeout(600)
def test_a_keep_alive_connection_that_starts_a_second_head_is_bounded_too(bank: envfactory.Contract) -> None:
    with running(bank, header_timeout=0.5) as url, ExitStack() as stack:
        (sock,) = _idle_sockets(url, 1, stack)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(30)
        first = b""
        while b"\r\n\r\n" not in first:
            first += sock.recv(4096)
        assert first.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        data = b""
        while True:  # whatever is left of the first response, then the close
            try:
                chunk = sock.recv(4096)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
        assert b"HTTP/1.1" not in data.partition(b"}")[2]  # no second response
