"""`envfactory replay CONTRACT TRAJ... --target sim|URL|python:MODULE:FACTORY`: re-execute trajectories.

Each trajectory's calls are sent to the target in order (``sim``: a simulator with the
trajectory's seed and initial state, so that a generated file replays byte for byte). Two kinds
of difference are reported per step: against the *recording* (a recorded status or output the
target did not give back) and against the *contract* (the target accepted a call the contract
forbids, rejected one it allows, or answered outside the output schema, an ensures or an
invariant; the contract's state follows the target's answers). Exit 1 on any difference, 2 when
a file or trajectory cannot be read (the others are still replayed).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import attrs
import click
import orjson

from envfactory.cli._common import (
    EXIT_CODES,
    EXIT_FINDING,
    EXIT_OK,
    EXIT_USAGE,
    console,
    contract_options,
    plural,
    report_error,
    safe_text,
)
from envfactory.contracts.errors import EnvfactoryError, EvaluationError, TrajectoryError
from envfactory.contracts.loader import load
from envfactory.contracts.model import Contract, Operation
from envfactory.contracts.semantics import Machine
from envfactory.contracts.values import FrozenMap
from envfactory.statemachine.simulator import Response, Simulator
from envfactory.trajectory import Trajectory, read_trajectories


@attrs.frozen(slots=True)
class Difference:
    """One place where the target's answer differs from the recording or from the contract."""

    step: int
    tool: str
    against: str  # "recording" | "contract"
    kind: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen(slots=True)
class Replayed:
    id: str
    steps: int
    differences: tuple[Difference, ...] = ()
    skipped: str | None = None
    foreign_tools: tuple[str, ...] = ()
    """The tools it calls that the contract does not have (it is skipped: another API's)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "steps": self.steps,
            "differences": [d.to_json() for d in self.differences],
        }
        if self.skipped is not None:
            out["skipped"] = self.skipped
        return out


class _SimTarget:
    """The built-in simulator, reset to each trajectory's own seed and initial state."""

    spec = "sim"

    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        self.sim = Simulator(contract)

    def start(self, traj: Trajectory) -> None:
        self.sim.reset(seed=traj.seed if traj.seed is not None else 0, initial=traj.initial)

    def call(self, tool: str, input: Any) -> Response:
        return self.sim.call(tool, input)

    def close(self) -> None:
        return None


class _OtherTarget:
    """A target from ``envfactory.fuzz.targets``. An HTTP target that is an ``envfactory serve``
    is reset to the trajectory's seed and initial state, so that it answers as when recorded."""

    def __init__(self, spec: str, contract: Contract) -> None:
        from envfactory.fuzz.targets import ensure_reachable, open_target

        self.spec = spec
        self.target = open_target(spec, contract)
        self.seeded = spec.startswith(("http://", "https://"))
        ensure_reachable(self.target)

    def start(self, traj: Trajectory) -> None:
        if self.seeded and self._seeded_reset(traj):
            return
        self.target.reset()

    def _seeded_reset(self, traj: Trajectory) -> bool:
        import httpx

        body: dict[str, Any] = {}
        if traj.seed is not None:
            body["seed"] = traj.seed
        if traj.initial is not None:
            body["initial"] = dict(traj.initial)
        try:
            response = httpx.post(self.spec.rstrip("/") + "/_envfactory/reset", json=body, timeout=60)
        except httpx.HTTPError:
            self.seeded = False
            return False
        if response.status_code in (404, 405):
            self.seeded = False
        return response.status_code == 200

    def call(self, tool: str, input: Any) -> Response:
        return self.target.call(tool, input)

    def close(self) -> None:
        self.target.close()


def replay_one(contract: Contract, machine: Machine, target: Any, traj: Trajectory) -> Replayed:
    """Replay one trajectory and list its differences."""
    foreign = sorted({step.tool for step in traj.steps} - set(contract.operations))
    if foreign:
        return Replayed(
            traj.id,
            len(traj.steps),
            skipped=f"it calls {', '.join(map(repr, foreign))}, which the contract does not have",
            foreign_tools=tuple(foreign),
        )
    if traj.has_holes:
        return Replayed(
            traj.id, len(traj.steps), skipped="it holds unknown values ($var); fill them in to replay"
        )
    try:
        state = machine.initial_state(traj.initial)
    except EnvfactoryError as err:
        return Replayed(traj.id, len(traj.steps), skipped=f"its initial state is unusable: {err.message}")
    if any(name not in state for name in contract.state):
        state = FrozenMap({**Simulator(contract).state, **state})
    target.start(traj)
    found: list[Difference] = []
    for index, step in enumerate(traj.steps):
        response = target.call(step.tool, step.input)
        found.extend(_against_recording(index, step, response, contract.operations.get(step.tool)))
        diffs, state = _against_contract(machine, contract, state, index, step.tool, step.input, response)
        found.extend(diffs)
    return Replayed(traj.id, len(traj.steps), tuple(found))


def _against_recording(
    index: int, step: Any, response: Response, op: Operation | None
) -> Iterator[Difference]:
    # two successes the operation's specification both documents (200 and 201, say) are the same
    successes = set(op.success_statuses) if op is not None else set()
    if (
        step.status is not None
        and step.status != response.status
        and not {step.status, response.status} <= successes
    ):
        yield Difference(
            index,
            step.tool,
            "recording",
            "status",
            f"recorded status {step.status}, the target answered {response.status}",
        )
    recorded_ok = step.status is None or step.status < 400
    if (
        step.has_output
        and recorded_ok
        and response.accepted
        and _canon(step.output) != _canon(response.output)
    ):
        yield Difference(
            index,
            step.tool,
            "recording",
            "output",
            f"recorded output {_show(step.output)}, the target answered {_show(response.output)}",
        )


def _against_contract(
    machine: Machine,
    contract: Contract,
    state: FrozenMap,
    index: int,
    tool: str,
    value: Any,
    response: Response,
) -> tuple[list[Difference], FrozenMap]:
    op = contract.operations.get(tool)
    forbidden = machine.check_tool(tool)
    if forbidden is None and op is not None:
        forbidden = machine.check_input(op, value) or machine.check_requires(state, op, value)
    if forbidden is not None:
        if response.accepted and response.status < 400:
            return [
                Difference(
                    index,
                    tool,
                    "contract",
                    forbidden.kind,
                    f"the target accepted a call the contract forbids: {forbidden.message}",
                )
            ], state
        expected = forbidden.error_status
        if expected is not None and response.status != expected:
            return [
                Difference(
                    index,
                    tool,
                    "contract",
                    "status",
                    f"rejected with {response.status}, the clause says {expected}: {forbidden.clause_text}",
                )
            ], state
        return [], state
    assert op is not None
    if not response.accepted or response.status >= 400:
        return [
            Difference(
                index,
                tool,
                "contract",
                "rejected",
                f"the target rejected a call the contract allows ({response.status}: {response.error})",
            )
        ], state
    try:
        post = machine.apply(state, op, value, response.output)
    except EvaluationError:
        failure = machine.effect_failure(state, op, value, response.output)
        return [Difference(index, tool, "contract", failure.kind, failure.message)], state
    problem = (
        machine.check_output(op, response.output)
        or machine.check_ensures(post, op, value, response.output)
        or machine.check_invariants(post)
    )
    if problem is not None:
        return [Difference(index, tool, "contract", problem.kind, problem.message)], post
    return [], post


def _canon(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return repr(value).encode()


def _show(value: Any) -> str:
    text = _canon(value).decode("utf-8", "replace")
    return text if len(text) <= 120 else text[:117] + "..."


@click.command("replay", epilog=EXIT_CODES)
@click.argument("contract", type=click.Path(dir_okay=False, exists=True))
@click.argument("trajectories", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--target",
    "target_spec",
    default="sim",
    show_default=True,
    help="sim, http://HOST:PORT[/base] or python:MODULE:FACTORY",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@contract_options
def command(
    contract: str,
    trajectories: tuple[str, ...],
    target_spec: str,
    fmt: str,
    with_state: str | None,
    closed_world: bool,
) -> int:
    """Re-execute TRAJECTORIES against a target; report where answers differ from the recording and the contract."""
    loaded = load(contract, with_state=with_state, closed_world=closed_world)
    target: Any = _SimTarget(loaded) if target_spec == "sim" else _OtherTarget(target_spec, loaded)
    machine = Machine(loaded.with_closed_world() if loaded.open_world else loaded)
    results: list[Replayed] = []
    unreadable = 0
    out = console()
    try:
        for path in trajectories:
            try:
                items = list(read_trajectories(path))
            except EnvfactoryError as err:
                unreadable += 1
                report_error(str(err))
                continue
            for item in items:
                if isinstance(item, TrajectoryError):
                    unreadable += 1
                    report_error(str(item))
                    continue
                result = replay_one(loaded, machine, target, item)
                results.append(result)
                if fmt == "text":
                    _print(out, result)
    finally:
        target.close()
    differing = sum(1 for r in results if r.differences)
    skipped = sum(1 for r in results if r.skipped)
    if results and all(r.foreign_tools for r in results):
        tools = sorted({t for r in results for t in r.foreign_tools})
        shown = ", ".join(tools[:5]) + (f" and {len(tools) - 5} more" if len(tools) > 5 else "")
        report_error(
            f"every trajectory in {', '.join(trajectories)} calls tools {contract} does not have "
            f"({shown}): were they recorded against another contract?"
        )
        return EXIT_USAGE
    if fmt == "json":
        doc = {
            "target": target_spec,
            "trajectories": [r.to_json() for r in results],
            "summary": {
                "replayed": len(results) - skipped,
                "differing": differing,
                "skipped": skipped,
                "unreadable": unreadable,
            },
        }
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.print(
            f"{len(results) - skipped} replayed against {safe_text(target_spec)}: "
            f"{differing} with differences, {len(results) - skipped - differing} matching"
            + (f", {skipped} skipped" if skipped else "")
            + (f", {unreadable} unreadable" if unreadable else "")
        )
    if differing:
        return EXIT_FINDING
    if unreadable:
        return EXIT_USAGE
    return EXIT_OK


def _print(out: Any, result: Replayed) -> None:
    from rich.markup import escape

    name = escape(safe_text(result.id))
    if result.skipped:
        out.print(f"[yellow]skipped[/] {name}: {escape(safe_text(result.skipped))}", markup=True)
        return
    if not result.differences:
        out.print(f"[green]same[/]    {name} ({plural(result.steps, 'step')})", markup=True)
        return
    out.print(f"[red]differs[/] {name}", markup=True)
    for diff in result.differences:
        out.print(
            f"  step {diff.step} {safe_text(diff.tool)}: {diff.against} {diff.kind}: {safe_text(diff.message)}",
            markup=False,
            highlight=False,
        )
