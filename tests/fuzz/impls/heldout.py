"""What the held-out sets' tests check of a set itself (not of the fuzzer): the correct
implementation answers each bug's hand-written trace as the contract says, and gives the fuzzer
no finding in a fixed number of examples (seed 0: the same run every time)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from fuzz_impl_check import shows_last

import envfactory
from envfactory.contracts.errors import Location
from envfactory.fuzz.runner import fuzz
from envfactory.fuzz.targets import open_target
from envfactory.trajectory import parse_trajectory
from envfactory.verification import verify

IMPLS = Path(__file__).resolve().parent

Call = tuple[str, dict[str, Any]]


def planted(module: Any, base: type) -> set[str]:
    """The names of the planted-bug classes of ``module``: the subclasses of its correct one."""
    return {
        name
        for name, cls in vars(module).items()
        if isinstance(cls, type) and issubclass(cls, base) and cls is not base
    }


def verdicts(name: str, correct: str, trace: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The verdicts of ``verify`` on the correct implementation's answers to ``trace``."""
    contract = envfactory.load(IMPLS / f"{name}.yaml")
    target = open_target(f"python:{IMPLS / f'{name}_impl.py'}:{correct}", contract)
    steps = []
    try:
        target.reset()
        for tool, kwargs in trace:
            response = target.call(tool, kwargs)
            steps.append(
                {"tool": tool, "input": kwargs, "output": response.output, "status": response.status}
            )
    finally:
        target.close()
    trajectory = parse_trajectory({"id": name, "steps": steps}, Location(name))
    return [r.verdict for r in verify(contract, [trajectory], allow_rejected=True)]


def findings(name: str, factory: str, examples: int) -> tuple[Any, ...]:
    """The fuzzer's findings against ``factory`` in ``examples`` test cases, seed 0."""
    contract = envfactory.load(IMPLS / f"{name}.yaml")
    target = open_target(f"python:{IMPLS / f'{name}_impl.py'}:{factory}", contract)
    try:
        return fuzz(contract, target, seed=0, max_examples=examples).findings
    finally:
        target.close()


class HeldOutSet:
    """The checks every held-out set's test file makes of the set: a subclass named ``Test...``
    gives the set's name, its implementation module and correct class, one hand-written trace
    per planted bug with its minimal length, and the examples the correct one is fuzzed for.
    Each bug shows at its stated depth (the correct implementation answers the trace as the
    contract says, the planted one does not, on its last call, and ``verify`` judges its answers
    invalid), and the correct implementation gives the fuzzer no finding."""

    name: ClassVar[str]
    module: ClassVar[Any]
    correct: ClassVar[str]
    traces: ClassVar[dict[str, list[Call]]]
    minimal: ClassVar[dict[str, int]]
    ambiguous: ClassVar[frozenset[str]] = frozenset()
    """Planted bugs whose wrong answer on the trace is one the contract also allows: a refusal
    for another clause that fails there too (``verify`` takes any failing clause's status; the
    fuzzer wants the first one's, so it still finds them)."""
    examples: ClassVar[int] = 100
    """Test cases the correct implementation is fuzzed for: a guard against false findings in
    the suite's time; ``bench/bench_fuzz.py`` fuzzes each correct one for the whole time budget
    of every seed it measures."""

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "bug" in metafunc.fixturenames:
            metafunc.parametrize("bug", sorted(self.traces))

    def test_every_planted_bug_has_a_trace(self) -> None:
        base = getattr(self.module, self.correct)
        assert planted(self.module, base) == set(self.traces) == set(self.minimal)

    def test_each_planted_bug_shows_at_its_stated_depth(self, bug: str) -> None:
        trace = self.traces[bug]
        assert len(trace) == self.minimal[bug]
        assert shows_last(getattr(self.module, self.correct)(), getattr(self.module, bug)(), trace)

    def test_the_correct_implementation_answers_each_trace_as_the_contract_says(self, bug: str) -> None:
        assert verdicts(self.name, self.correct, self.traces[bug]) == ["valid"]

    def test_each_planted_implementation_breaks_the_contract_on_its_trace(self, bug: str) -> None:
        assert (verdicts(self.name, bug, self.traces[bug]) == ["valid"]) == (bug in self.ambiguous)

    @pytest.mark.usefixtures("light_planner")
    def test_the_correct_implementation_has_no_finding(self) -> None:
        assert findings(self.name, self.correct, self.examples) == ()
