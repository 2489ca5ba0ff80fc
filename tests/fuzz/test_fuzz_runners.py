"""The nineteenth held-out set (``impls/runners*``): eight planted bugs 6 to 8 calls deep, written
without reading the fuzzer, in shapes the earlier sets have less of (a CI service: pipelines
numbered by the service, deleted and made again under a name as another pipeline; jobs numbered
by the service, queued, picked up, finished or canceled, and retried twice, a lifecycle that goes
round; two limits on one pick, the runner's jobs at once and the pipeline's, reached by jobs of
one pipeline or of two; a count up on a pick and down on a finish or a cancel; a runner drained
while it runs a job, removed once idle and registered again under its name; secrets scoped to a
pipeline, one name held by two; artifacts counted per pipeline and freed when their job is
retried).

These tests check the set itself, not the fuzzer: each bug shows at its stated depth on a
hand-written trace (the correct service answers that trace as the contract says, the planted one
does not), and the correct service gives the fuzzer no finding.

Each minimal length was also checked by a breadth-first search over pairs of (correct, planted)
states, every call (refused calls and reads included) asked at every state, names taken as
interchangeable (states the same up to a renaming of the pipelines, of the runners and of the
secrets counted once), states told apart by everything either implementation keeps, on a small
domain: pipelines p and q, made with the default limit, 1 or 3; runners r and t, registered with
the default slots, 1 or 3; secrets x and y added to either pipeline; jobs queued on either
pipeline with no secret or either; every job number made so far and the next one picked up by
either runner, finished passed or failed with an artifact, without or with ``artifact`` false,
canceled, retried and read; every pipeline and runner deleted or removed, drained and read. It
found nothing shorter than each stated length (every call asked at the 12,700 pair states within
6 calls: some 740,000 calls to rule out 7 for a bug of 8), and a difference at each stated length
itself; the traces below show one there. A random walk of the correct service checked by
``verify`` against the contract (1,500 traces of 60 calls on the same domain, four in five of
them calls the service allows) found no disagreement either.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
sys.path.insert(0, str(IMPLS))

import runners_impl  # noqa: E402
from heldout import Call, HeldOutSet  # noqa: E402


def pipeline(name: str = "p", limit: int | None = None) -> Call:
    kwargs: dict[str, Any] = {"pipeline": name}
    return ("createPipeline", kwargs if limit is None else {**kwargs, "limit": limit})


def runner(name: str = "r", slots: int | None = None) -> Call:
    kwargs: dict[str, Any] = {"runner": name}
    return ("registerRunner", kwargs if slots is None else {**kwargs, "slots": slots})


def queue(name: str = "p", secret: str | None = None) -> Call:
    kwargs: dict[str, Any] = {"pipeline": name}
    return ("queueJob", kwargs if secret is None else {**kwargs, "secret": secret})


def pick(job: int = 1, name: str = "r") -> Call:
    return ("pickJob", {"runner": name, "job": job})


def job(op: str, number: int = 1) -> Call:
    return (op, {"job": number})


def on(op: str, name: str = "r") -> Call:
    return (op, {"runner": name})


TRACES: dict[str, list[Call]] = {
    # p and q both hold s; p deleted: q still queues a job naming s.
    "SecretDroppedForAll": [
        pipeline("p"),
        pipeline("q"),
        ("addSecret", {"pipeline": "p", "secret": "s"}),
        ("addSecret", {"pipeline": "q", "secret": "s"}),
        ("deletePipeline", {"pipeline": "p"}),
        queue("q", "s"),
    ],
    # r drained, removed and registered again: it picks job 1 up.
    "DrainOutlivesRemove": [
        runner(),
        on("drainRunner"),
        on("removeRunner"),
        runner(),
        pipeline(),
        queue(),
        pick(),
    ],
    # r has one slot, running job 1 of p: job 2 of q is one too many.
    "SlotsPerPipeline": [
        pipeline("p"),
        pipeline("q"),
        runner(slots=1),
        queue("p"),
        queue("q"),
        pick(1),
        pick(2),
    ],
    # p runs one job at once; job 1 picked and canceled: job 2 is picked.
    "CancelKeepsPipelineSlot": [
        pipeline(limit=1),
        runner(),
        queue(),
        queue(),
        pick(1),
        job("cancelJob"),
        pick(2),
    ],
    # Job 1 canceled and retried twice, canceled again: a third retry is one too many.
    "RetryOffByOne": [
        pipeline(),
        queue(),
        *[job("cancelJob"), job("retryJob")] * 3,
    ],
    # Job 1 run on r, canceled, retried, canceled while queued: r is idle, and removed.
    "CancelRetriedJob": [
        pipeline(),
        runner(),
        queue(),
        pick(),
        job("cancelJob"),
        job("retryJob"),
        job("cancelJob"),
        on("removeRunner"),
    ],
    # Job 1 fails keeping an artifact and is retried: p keeps none.
    "ArtifactKeptOnRetry": [
        pipeline(),
        runner(),
        queue(),
        pick(),
        ("finishJob", {"job": 1, "passed": False, "artifact": True}),
        job("retryJob"),
        ("pipelineInfo", {"pipeline": "p"}),
    ],
    # r drained while it runs job 1: it picks job 2 up.
    "DrainWhenIdle": [
        pipeline(),
        runner(),
        queue(),
        queue(),
        pick(1),
        on("drainRunner"),
        pick(2),
    ],
}
MINIMAL = {
    "SecretDroppedForAll": 6,
    "DrainOutlivesRemove": 7,
    "SlotsPerPipeline": 7,
    "CancelKeepsPipelineSlot": 7,
    "RetryOffByOne": 8,
    "CancelRetriedJob": 8,
    "ArtifactKeptOnRetry": 7,
    "DrainWhenIdle": 7,
}


class TestRunners(HeldOutSet):
    name, module, correct = "runners", runners_impl, "Runners"
    traces, minimal = TRACES, MINIMAL
