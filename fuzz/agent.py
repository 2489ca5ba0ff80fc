"""Fuzzing an agent: the fuzzer plays the environment and checks the agent's calls.

The agent protocol (``agent:MODULE:CALLABLE``): ``CALLABLE(env)`` runs one episode against
``env``, an ``AgentEnv``, and returns when it is done. For each test case the fuzzer builds a
fresh environment (the contract's simulator) and calls the agent once. ``env`` offers:

* ``env.tools``: the operations as ``{"name", "description", "input_schema", "output_schema"}``;
* ``env.task``: ``{"goal": NAME, "check": EXPR}`` (one of the contract's goals) or ``None``;
* ``env.call(tool, input)`` (or ``env.<tool>(**input)``): the output of an accepted call; a
  rejected call raises ``ToolError`` with the status and message (``env.ToolError``);
* ``env.rng``: a ``random.Random`` seeded from the run, for agents that make random choices
  (an agent must be deterministic given ``env`` for its failures to shrink and replay).

The fuzzer decides, from Hypothesis's draws, which goal to set, which calls fail with an
injected fault (``--faults``: ``ToolTimeout``, ``ConnectionDropped``, ``ServerError`` and a
malformed body, see ``faults.py``) and which accepted calls get an adversarial output (another
output inside the schema that still satisfies every ``ensures``). Findings:

* ``agent_violation``: a call to an unknown tool, with an input outside its schema, or with a
  false precondition (the agent misused the API);
* ``agent_crash``: the agent raised (it did not recover from a fault or an odd response);
* ``goal_not_reached``: the agent returned while the goal of ``env.task`` does not hold (faults
  are transient, so a recovering agent can always reach it);
* ``no_progress``: more than ``--steps`` calls in one episode.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from envfactory.contracts.errors import EvaluationError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.model import Contract
from envfactory.fuzz import faults, inputs
from envfactory.fuzz.draws import Source
from envfactory.fuzz.findings import Finding, FindingError, Findings, error_for
from envfactory.fuzz.runner import StopRun, Summary, pinned_constants, run_settings, seed_test, steady_search
from envfactory.fuzz.targets import describe_exception, load_factory
from envfactory.statemachine.simulator import Simulator
from envfactory.trajectory import Step

ToolError = faults.ToolError


class _Abort(BaseException):
    """Ends an episode from inside ``env.call`` (a BaseException, so ``except Exception`` in the
    agent cannot swallow it)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


class AgentEnv:
    """The environment one agent episode sees (see the module docstring)."""

    ToolError = faults.ToolError
    ToolTimeout = faults.ToolTimeout
    ConnectionDropped = faults.ConnectionDropped
    ServerError = faults.ServerError

    def __init__(self, run: AgentRun, src: Source, task: dict[str, str] | None) -> None:
        self._run = run
        self._src = src
        self.task = task
        self.tools = run.tools
        self.rng = random.Random(src.integer(0, 2**32 - 1))
        self.sim = Simulator(run.contract, seed=run.seed)
        self.steps: list[Step] = []
        self._in_a_row = 0
        self._faults = 0

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_") or name not in self._run.contract.operations:
            raise AttributeError(name)
        return lambda **kwargs: self.call(name, kwargs)

    def call(self, tool: str, input: Any = None, **kwargs: Any) -> Any:
        """Call ``tool``; the output, or ``ToolError`` for a rejected or faulted call."""
        value = dict(input or {}, **kwargs) if input is None or isinstance(input, dict) else input
        run = self._run
        if len(self.steps) >= run.max_calls:
            self._abort("no_progress", tool, f"the agent made more than {run.max_calls} calls in one episode")
        op = run.contract.operations.get(tool)
        machine = self.sim.machine
        failure = machine.check_tool(tool)
        if failure is None and op is not None:
            failure = machine.check_input(op, value) or machine.check_requires(self.sim.state, op, value)
        if failure is not None:
            self.steps.append(Step(tool, value, None, None, False))
            self._abort("agent_violation", tool, failure.message, failure.clause_text, failure.location)
        assert op is not None
        kind = None
        if run.faults:
            kind = faults.choose(self._src, in_a_row=self._in_a_row, so_far=self._faults)
            if kind is not None:
                self._in_a_row += 1
                self._faults += 1
                if kind != "malformed":
                    self.steps.append(Step(tool, value, None, faults.STATUS[kind], False, {"fault": kind}))
                    return faults.raise_fault(kind, tool)
        if kind is None:
            self._in_a_row = 0
        before = self.sim.state
        response = self.sim.call(tool, value)
        output = response.output
        if kind == "malformed" and response.accepted:
            # the call took effect, but the body that came back is garbled
            self.steps.append(Step(tool, value, faults.MALFORMED, response.status, True, {"fault": kind}))
            return faults.MALFORMED
        if (
            response.accepted
            and not op.reads_output
            and op.output_schema is not None
            and self._src.integer(0, 3) == 3
        ):
            output = self._adversarial_output(op, value, output, before)
        self.steps.append(Step(tool, value, output, response.status, response.accepted))
        if not response.accepted:
            raise faults.ToolError(response.status, response.error or f"status {response.status}")
        return output

    def _adversarial_output(self, op: Any, value: Any, output: Any, before: Any) -> Any:
        """Another output inside the schema that satisfies every ensures (else the simulator's)."""
        machine = self.sim.machine
        candidate = self._run.output_gens[op.name](self._src)
        if machine.check_output(op, candidate) is not None:
            return output
        if machine.check_ensures(self.sim.state, op, value, candidate) is not None:
            return output
        return candidate

    def _abort(
        self, kind: str, tool: str, message: str, clause: str | None = None, location: Any = None
    ) -> None:
        finding = Finding(
            kind=kind,
            operation=tool,
            message=message,
            steps=tuple(self.steps),
            expected="a call the contract allows" if kind == "agent_violation" else "fewer calls",
            clause=clause,
            location=str(location) if location is not None else None,
        )
        raise _Abort(finding)


class AgentRun:
    """What every episode of one agent fuzz run shares."""

    def __init__(
        self, contract: Contract, agent: Callable[[AgentEnv], Any], *, seed: int, max_calls: int, faults: bool
    ) -> None:
        self.contract = (
            contract if all(v.known for v in contract.state.values()) else contract.with_closed_world()
        )
        self.agent = agent
        self.seed = seed
        self.max_calls = max_calls
        self.faults = faults
        self.tools = [
            {
                "name": op.name,
                "description": op.description or "",
                "input_schema": op.input_schema,
                "output_schema": op.output_schema,
            }
            for op in self.contract.operations.values()
        ]
        self.output_gens = {
            name: inputs.compile_schema(op.output_schema)
            for name, op in self.contract.operations.items()
            if op.output_schema is not None
        }
        self.goals = sorted(self.contract.goals)
        self.findings = Findings()
        self.episodes = 0
        self.calls = 0
        self.rejected = 0
        self.ops: set[str] = set()
        self.started = time.monotonic()

    def episode(self, src: Source) -> None:
        task = None
        if self.goals:
            name = src.pick(self.goals)
            task = {"goal": name, "check": self.contract.goals[name].source}
        env = AgentEnv(self, src, task)
        self.episodes += 1
        finding: Finding | None = None
        try:
            self.agent(env)
        except _Abort as abort:
            finding = abort.finding
        except Exception as err:
            last = env.steps[-1].tool if env.steps else "<agent>"
            finding = Finding(
                "agent_crash",
                last,
                f"the agent raised {describe_exception(err)}",
                tuple(env.steps),
                "no exception",
            )
        finally:
            self.calls += len(env.steps)
            self.ops.update(s.tool for s in env.steps if s.status is not None and 200 <= s.status < 300)
            self.rejected += sum(1 for s in env.steps if s.status is not None and s.status >= 400)
        if finding is None and task is not None:
            clause = self.contract.goals[task["goal"]]
            try:
                reached = clause.fn(Env(env.sim.state)) is True
            except EvaluationError:
                reached = False
            if not reached:
                finding = Finding(
                    "goal_not_reached",
                    task["goal"],
                    f"the agent returned but goal {task['goal']} ({clause.source}) does not hold",
                    tuple(env.steps),
                    "the goal to hold",
                    clause=clause.source,
                    location=str(clause.loc),
                )
        if finding is not None:
            self.findings.add(finding, time.monotonic() - self.started)
            raise error_for(finding)


def fuzz_agent(
    contract: Contract,
    spec: str,
    *,
    seed: int = 0,
    max_examples: int = 100,
    steps: int = 20,
    faults: bool = False,
    time_budget: float | None = None,
    database: str | None = None,
    agent: Callable[[AgentEnv], Any] | None = None,
) -> Summary:
    """Fuzz the agent ``spec`` names (``agent:MODULE:CALLABLE``) in ``contract``'s environment."""
    callable_agent: Callable[[AgentEnv], Any] = agent if agent is not None else load_factory(spec)
    run = AgentRun(
        contract,
        callable_agent,
        seed=seed,
        max_calls=steps,
        faults=faults,
    )
    deadline = None if time_budget is None else run.started + time_budget
    stopped = False

    @given(st.data())
    def test(data: st.DataObject) -> None:
        nonlocal stopped
        if (
            deadline is not None
            and time.monotonic() > deadline
            and (not run.findings or time.monotonic() > deadline + max(time_budget or 0, 2.0) / 2)
        ):
            stopped = True
            raise StopRun
        run.episode(Source(data))

    runnable: Any = run_settings(max_examples, database)(test)
    seed_test(runnable, seed, f"envfactory-agent:{contract.path}:{spec}".encode() if database else None)
    try:
        with pinned_constants(callable_agent), steady_search():
            runnable()
    except StopRun:
        pass
    except Exception as err:
        if not stopped and not (run.findings and _ours(err)):
            raise
    found = run.findings.all()
    first = min(run.findings.first_seen.values()) if run.findings.first_seen else None
    return Summary(
        target=spec,
        mode="agent" + (" with faults" if faults else ""),
        seed=seed,
        test_cases=run.episodes,
        calls=run.calls,
        rejected=run.rejected,
        seconds=time.monotonic() - run.started,
        operations=tuple(run.contract.operations),
        operations_covered=tuple(op for op in run.contract.operations if op in run.ops),
        edges_covered=0,
        edges_total=None,
        findings=tuple(found),
        first_finding_seconds=first,
        stopped_by_budget=stopped,
    )


def _ours(err: BaseException) -> bool:
    if isinstance(err, FindingError):
        return True
    inner = getattr(err, "exceptions", None)
    if inner:
        return all(_ours(e) for e in inner)
    return type(err).__name__.startswith("Flaky")
