"""Fuzzing agents: the fuzzer plays the environment, injects faults, checks calls and recovery."""

from __future__ import annotations

from pathlib import Path

import envfactory
from envfactory.fuzz.agent import fuzz_agent

HERE = Path(__file__).resolve().parent
BANK = envfactory.load(HERE.parents[1] / "examples" / "bank" / "bank.yaml")
AGENTS = HERE / "agents" / "bank_agents.py"


def _run(name: str, faults: bool, max_examples: int = 80):
    return fuzz_agent(
        BANK, f"agent:{AGENTS}:{name}", seed=0, max_examples=max_examples, steps=20, faults=faults
    )


def test_robust_agent_recovers_from_faults():
    for faults in (False, True):
        summary = _run("robust", faults)
        assert summary.findings == (), [f.message for f in summary.findings]
        assert summary.calls > summary.test_cases  # it did work in every episode
    assert {"open", "deposit", "balance"} <= set(summary.operations_covered)


def test_naive_agent_crashes_on_faults_and_malformed_bodies():
    assert _run("naive", False).findings == ()
    summary = _run("naive", True)
    kinds = {f.kind for f in summary.findings}
    assert kinds == {"agent_crash"}
    messages = " ".join(f.message for f in summary.findings)
    assert "TypeError" in messages or "ToolTimeout" in messages or "ServerError" in messages
    shortest = min(summary.findings, key=lambda f: len(f.steps))
    assert (
        len(shortest.steps) == 1 and shortest.steps[0].meta is not None and "fault" in shortest.steps[0].meta
    )


def test_careless_agent_breaks_a_precondition():
    summary = _run("careless", False, max_examples=20)
    violation = next(f for f in summary.findings if f.kind == "agent_violation")
    assert violation.operation == "deposit"
    assert violation.clause == "input.account in accounts"
    assert [s.tool for s in violation.steps] == ["open", "deposit", "deposit"]


def test_agent_that_never_stops_is_cut_off():
    def looping(env):
        env.open(account="AB01", owner="x")
        while env.balance(account="AB01")["balance"] < 1_000:
            pass  # waits for money that never comes

    summary = fuzz_agent(BANK, "agent:inline", seed=0, max_examples=5, steps=6, agent=looping)
    assert {f.kind for f in summary.findings} == {"no_progress"}
