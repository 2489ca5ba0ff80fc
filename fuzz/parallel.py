"""Fuzzing with several seeds at once: worker processes on this machine, or Ray workers.

Each job is a whole fuzz run (``runner.fuzz``) with its own seed and its own target, opened in
the worker (a Python object or a connection cannot cross a process boundary); the findings come
back and merge: distinct by finding key, the shortest trace of each kept. Same seeds, same jobs:
the same runs, so ``--jobs`` changes how fast a budget is searched, not what one seed finds.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import time
from collections.abc import Mapping
from typing import Any

import attrs

from envfactory.contracts.optional import require
from envfactory.fuzz.findings import Findings
from envfactory.fuzz.runner import Summary


@attrs.frozen(slots=True)
class Job:
    """What a worker needs to run one seed: the contract's file and loading options, the target
    spec, and the keyword arguments of ``runner.fuzz``."""

    contract: str
    with_state: str | None
    closed_world: bool
    target: str
    seed: int
    options: Mapping[str, Any]
    isolate: bool | None = None
    call_timeout: float | None = None


def run_job(job: Job, loaded: Any = None) -> Summary:
    """One seed's run, in whatever process runs it (``loaded``: the contract, where the caller's
    process has it already)."""
    from envfactory.contracts.loader import load
    from envfactory.fuzz.runner import fuzz
    from envfactory.fuzz.targets import open_target

    if loaded is None:
        loaded = load(job.contract, with_state=job.with_state, closed_world=job.closed_world)
    handle = open_target(
        job.target, loaded, seed=job.seed, isolate=job.isolate, call_timeout=job.call_timeout
    )
    try:
        return fuzz(loaded, handle, seed=job.seed, **dict(job.options))
    finally:
        handle.close()


def seeds(seed: int, jobs: int) -> list[int]:
    """The seeds of ``jobs`` runs: the given one first, so that ``--jobs 1`` is the plain run."""
    return [seed + i for i in range(jobs)]


def fuzz_jobs(
    jobs: list[Job], *, engine: str = "local", ray_address: str | None = None, loaded: Any = None
) -> Summary:
    """Run every job (in worker processes, or on Ray) and merge their summaries; one local job
    runs here, on ``loaded`` where given (loading a large document again cost as much again)."""
    started = time.monotonic()
    if len(jobs) == 1 and engine == "local":
        return run_job(jobs[0], loaded)
    if engine == "ray":
        results = _on_ray(jobs, ray_address)
    else:
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked locks
        with concurrent.futures.ProcessPoolExecutor(max_workers=len(jobs), mp_context=context) as pool:
            results = list(pool.map(run_job, jobs))
    return merge(results, seconds=time.monotonic() - started)


def _on_ray(jobs: list[Job], address: str | None) -> list[Summary]:
    ray: Any = require("ray", "--engine ray")
    started_here = not ray.is_initialized()
    if started_here:
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kwargs["address"] = address
        else:
            kwargs["num_cpus"] = max(len(jobs), os.cpu_count() or 1)
        ray.init(**kwargs)
    try:
        remote: Any = ray.remote(run_job)
        return list(ray.get([remote.remote(job) for job in jobs]))
    finally:
        if started_here:
            ray.shutdown()


def merge(results: list[Summary], *, seconds: float) -> Summary:
    """One summary for several runs: counts added, coverage joined, findings distinct by key
    with the shortest trace kept, in the order the runs first reported them."""
    first = results[0]
    findings = Findings()
    for result in results:
        for finding in result.findings:
            findings.add(finding)
    firsts = [r.first_finding_seconds for r in results if r.first_finding_seconds is not None]
    covered = {op for r in results for op in r.operations_covered}
    outcomes = {o for r in results for o in r.outcomes}
    return attrs.evolve(
        first,
        test_cases=sum(r.test_cases for r in results),
        calls=sum(r.calls for r in results),
        rejected=sum(r.rejected for r in results),
        seconds=seconds,
        operations_covered=tuple(op for op in first.operations if op in covered),
        edges_covered=max(r.edges_covered for r in results),
        findings=tuple(findings.all()),
        first_finding_seconds=min(firsts) if firsts else None,
        stopped_by_budget=any(r.stopped_by_budget for r in results),
        outcomes=tuple(o for o in first.outcomes_total if o in outcomes),
        rounds=sum(r.rounds for r in results),
        jobs=len(results),
    )


__all__ = ["Job", "fuzz_jobs", "merge", "run_job", "seeds"]
