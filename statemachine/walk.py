"""Generation of valid, diverse trajectories: coverage tours, random walks and goal-directed walks.

Every call made is one the contract allows at that point: inputs are drawn from the input schema
with the keys of live collections put where the clauses read them (``input.id in pets`` takes an
existing key, ``not (input.id in pets)`` a fresh one; where those draws fail, a string field may
take a string the state holds: a project's owner as the ``actor``), and a call is kept only when
the simulator accepts it with every check passing. So each trajectory verifies ``valid``.

``generate`` first explores the contract breadth-first over *abstract* states: the state graph's
nodes (the predicates of ``statemachine.abstraction``: no Z3 needed, they are evaluated
concretely) refined by collection sizes and the boolean, enum and sign facts their records hold.
It keeps the shortest call sequence to each operation, each state-graph edge and each refined
transition, and picks few sequences that cover them greedily (operations first, then graph
edges); those are the first trajectories (at most half of ``n`` unless more are needed for the
operations and graph edges). The rest are random walks of lengths spread over 1..max_length,
goal-directed walks (a breadth-first extension to the goal) when a goal is given.
Trajectory ``i`` is the first attempt of walk ``i`` that duplicates no earlier trajectory (by
calls), and depends only on ``(seed, i, attempt)``: a process pool or Ray write the same file as
one process.

Imports ``envfactory.contracts``, this layer and the trajectory format; never ``envfactory.solver``.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import orjson

from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError, Location, UsageError
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.model import Contract, Operation
from envfactory.contracts.optional import require
from envfactory.contracts.semantics import require_valid_start
from envfactory.contracts.values import FrozenMap
from envfactory.statemachine.keys import KeyUse, key_uses
from envfactory.statemachine.paths import get_path, schema_at, set_path
from envfactory.statemachine.sampling import Sampler, derive_seed
from envfactory.statemachine.simulator import Simulator
from envfactory.trajectory import Trajectory

DRAWS = 8
"""Input draws per operation per step before it counts as not enabled there."""
TEXT_DRAWS = 4
"""Draws more where ``DRAWS`` failed, a string field now and then taking one the state holds:
the cloud's ``actor`` must be a member of the project (no key use says so; 2 of its 14
operations were used). Only after the plain draws, so an operation they enable is drawn as
before and exploration does not spread over the states the names open up."""
WINDOW = 512
"""Walks handed out at a time; trajectory ``i`` is its first attempt that is not a duplicate of
an earlier trajectory, so the window (and the number of workers) never changes the output."""
EXPLORE_TRIES = 8_000
"""Operations tried per exploration at most (states expanded x operations): a contract with a
handful of operations keeps every one of its 400 states; Stripe (417) expands 19, so that
``generate`` costs in proportion to the document rather than 400 x 417 simulated calls."""
LEAN_EXPLORE = 20
"""Past this many operations, exploration's simulator answers lean (only required fields): it
keeps the calls, not the answers (coverage paths are replayed with full answers), and drawing
Stripe's whole objects for 8,000 exploring calls was most of ``generate``'s time."""
Call = tuple[str, Any]
Path = tuple[str, ...]


# ----------------------------------------------------------------------------------- the inputs


class InputDrawer:
    """Draws inputs for an operation that the contract is likely to allow in a given state."""

    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        collections = frozenset(n for n, v in contract.state.items() if v.collection)
        self.uses = {name: key_uses(op, collections) for name, op in contract.operations.items()}
        self.constants = {name: _constants(op) for name, op in contract.operations.items()}
        self._numbers: tuple[FrozenMap, list[int]] | None = None
        self._texts: tuple[FrozenMap, list[str]] | None = None

    def numbers(self, state: FrozenMap) -> list[int]:
        """``_numbers(state)``, once per state (exploration draws for every operation in one)."""
        if self._numbers is None or self._numbers[0] is not state:
            self._numbers = (state, _numbers(state))
        return self._numbers[1]

    def texts(self, state: FrozenMap) -> list[str]:
        """``_texts(state)``, once per state."""
        if self._texts is None or self._texts[0] is not state:
            self._texts = (state, _texts(state))
        return self._texts[1]

    def draw(
        self,
        op: Operation,
        state: FrozenMap,
        rng: random.Random,
        sampler: Sampler | None = None,
        numbers: list[int] | None = None,
        texts: Sequence[str] = (),
    ) -> Any:
        """One input for ``op`` in ``state`` (``sampler`` shares one Faker seeding across draws);
        a string field takes one of ``texts`` now and then."""
        sampler = sampler if sampler is not None else Sampler(rng)
        sampler.numbers = numbers if numbers is not None else self.numbers(state) + self.constants[op.name]
        sampler.texts = list(texts)
        value = sampler.value(op.input_schema, op.input_schema)
        sampler.texts = []
        for use in self.uses[op.name]:
            collection = state.get(use.collection)
            keys = list(collection) if isinstance(collection, FrozenMap) else []
            fresh = use.fresh if use.fresh is not None else (not keys or rng.random() < 0.5)
            if not fresh and keys:
                value = set_path(value, use.path, rng.choice(keys))
            elif fresh and keys:
                current = get_path(value, use.path)
                if current in keys and current in texts:  # a new key drawn from the schema
                    current = sampler.value(schema_at(op.input_schema, use.path), op.input_schema)
                    value = set_path(value, use.path, current)
                if current in keys:
                    value = set_path(value, use.path, _fresh_like(current, keys, rng))
        return value

    def enabled(
        self,
        sim: Simulator,
        tool: str,
        rng: random.Random,
        draws: int = DRAWS,
        sampler: Sampler | None = None,
    ) -> Any | None:
        """An input with which ``tool`` is allowed now, or None after ``draws`` failed draws.

        An operation that needs an existing key of an empty collection gets one draw, not ``draws``.
        """
        op = self.contract.operations[tool]
        sampler = sampler if sampler is not None else Sampler(rng)
        state = sim.state
        numbers = self.numbers(state) + self.constants[op.name]
        starved = any(use.fresh is False and not state.get(use.collection) for use in self.uses[op.name])
        for _ in range(1 if starved else draws):
            value = self.draw(op, state, rng, sampler, numbers)
            if sim.enabled(tool, value):
                return value
        texts = [] if starved else self.texts(state)
        for _ in range(TEXT_DRAWS if texts else 0):
            value = self.draw(op, state, rng, sampler, numbers, texts)
            if sim.enabled(tool, value):
                return value
        return None


def _fresh_like(current: Any, keys: list[Any], rng: random.Random) -> Any:
    if isinstance(current, int) and not isinstance(current, bool):
        ints = [k for k in keys if isinstance(k, int) and not isinstance(k, bool)]
        return max(ints, default=current) + 1 + rng.randint(0, 3)
    if isinstance(current, str):
        return current + str(rng.randint(0, 9))
    return current


def _constants(op: Operation) -> list[int]:
    """Integers the requires compare with, and their neighbours (boundary values that pass)."""
    found: set[int] = set()
    for clause in op.requires:
        for node in ir.walk(clause.expr):
            if (
                isinstance(node, ir.Const)
                and isinstance(node.value, int)
                and not isinstance(node.value, bool)
            ):
                found.update((node.value - 1, node.value, node.value + 1))
    return sorted(found)


def _held(value: Any, depth: int, keys: bool) -> Iterator[Any]:
    """The scalars ``value`` holds down to depth 4 (a list's first 16 items; a map's keys too
    where ``keys``), in order: what ``_numbers`` and ``_texts`` take their values from."""
    if depth > 4:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if keys and depth < 4:
                yield key
            yield from _held(item, depth + 1, keys)
    elif isinstance(value, list):
        for item in value[:16]:
            yield from _held(item, depth + 1, keys)
    else:
        yield value


def _numbers(state: FrozenMap) -> list[int]:
    """Integers found in the state: amounts an input can take so that ``<=``/``==`` clauses hold."""
    found: list[int] = []
    for value in _held(dict(state), 0, keys=False):
        if len(found) > 64:
            break
        if isinstance(value, int) and not isinstance(value, bool):
            found.append(value)
    return sorted(set(found))


def _texts(state: FrozenMap) -> list[str]:
    """Strings found in the state, keys and values: names a string field can take so that a
    clause that wants it equal to a record's (``input.actor`` a project's owner) holds."""
    found: dict[str, None] = {}
    for value in (v for name in sorted(state) for v in _held(state[name], 0, keys=True)):
        if len(found) > 64:
            break
        if isinstance(value, str):
            found[value] = None
    return list(found)


# ------------------------------------------------------------------------------ abstract states


class Abstraction:
    """The abstract state of a concrete one: what coverage counts transitions between.

    It refines the state graph's nodes (the abstraction predicates of ``statemachine.abstraction``),
    so covering every transition between these states covers every state-graph edge reached.
    """

    def __init__(self, contract: Contract) -> None:
        from envfactory.statemachine.abstraction import predicates

        self.names = sorted(contract.state)
        self.collections = {n for n, v in contract.state.items() if v.collection}
        self.predicates = predicates(contract)
        self.enum_fields = {n: _enum_fields(v.schema) for n, v in contract.state.items() if v.collection}

    def graph_node(self, state: FrozenMap) -> tuple[bool, ...]:
        """The state-graph node (``statemachine.graph``) the state belongs to."""
        from envfactory.statemachine.abstraction import valuation

        return valuation(self.predicates, state)

    def of(self, state: FrozenMap) -> tuple[Any, ...]:
        """The state-graph node, refined by record facts (sizes, booleans, enums, signs)."""
        out: list[Any] = [self.graph_node(state)]
        for name in self.names:
            value = state.get(name)
            if name in self.collections and isinstance(value, Mapping):
                facts: set[tuple[str, Any]] = set()
                for record in value.values():
                    if isinstance(record, Mapping):
                        for field, item in record.items():
                            if item is None or isinstance(item, bool):
                                facts.add((field, item))
                            elif isinstance(item, int | float):
                                facts.add((field, (item > 0) - (item < 0)))
                            elif isinstance(item, str) and field in self.enum_fields[name]:
                                facts.add((field, item))
                out.append((min(len(value), 2), frozenset(facts)))
            elif value is None or isinstance(value, bool):
                out.append(value)
            elif isinstance(value, int | float):
                out.append((value > 0) - (value < 0))
            else:
                out.append(type(value).__name__)
        return tuple(out)


def _enum_fields(schema: Any) -> frozenset[str]:
    """Record fields with a closed set of string values: an enum, or a status-like name."""
    names = {"status", "state", "stage", "phase", "kind", "type", "tag", "priority"}
    root = schema_at(schema, ())
    props = root.get("properties") if isinstance(root, Mapping) else None
    if isinstance(props, Mapping):
        for field in props:
            sub = schema_at(schema, (field,))
            if isinstance(sub, Mapping) and isinstance(sub.get("enum"), list):
                names.add(field)
    return frozenset(names)


Edge = tuple[tuple[Any, ...], str, tuple[Any, ...]]


@attrs.frozen(slots=True)
class Exploration:
    """What breadth-first exploration found: the shortest calls to each edge and operation."""

    edges: Mapping[Edge, tuple[Call, ...]]
    operations: Mapping[str, tuple[Call, ...]]
    states: int
    graph_edges: Mapping[Edge, tuple[Call, ...]] = attrs.field(factory=dict)


def explore(
    contract: Contract,
    *,
    seed: int = 0,
    max_states: int = 400,
    max_depth: int = 10,
    draws_per_op: int = 3,
    drawer: InputDrawer | None = None,
) -> Exploration:
    """Breadth-first search over abstract states from the initial state (one concrete witness each)."""
    drawer = drawer or InputDrawer(contract)
    abstraction = Abstraction(contract)
    rng = random.Random(derive_seed(seed, "explore"))
    sampler = Sampler(rng)
    start = Simulator(contract, seed=seed, lean=len(contract.operations) > LEAN_EXPLORE)
    seen = {abstraction.of(start.state)}
    queue: deque[tuple[Simulator, tuple[Call, ...]]] = deque([(start, ())])
    edges: dict[Edge, tuple[Call, ...]] = {}
    operations: dict[str, tuple[Call, ...]] = {}
    graph_edges: dict[Edge, tuple[Call, ...]] = {}
    tools = sorted(contract.operations)
    max_states = min(max_states, max(2, EXPLORE_TRIES // max(len(tools), 1)))
    while queue:
        sim, path = queue.popleft()
        if len(path) >= max_depth:
            continue
        pre = abstraction.of(sim.state)
        for tool in tools:
            tried: set[str] = set()
            # a call without effects leaves the same state: one witness of its edge is all there is
            for _ in range(draws_per_op if contract.operations[tool].effects else 1):
                value = drawer.enabled(sim, tool, rng, sampler=sampler)
                if value is None:
                    break
                marker = repr(value)
                if marker in tried:
                    continue
                tried.add(marker)
                child = sim.fork()
                if not child.call(tool, value).ok:
                    continue
                calls = (*path, (tool, value))
                # a call without effects leaves the very same snapshot (most of a large API's reads)
                post = pre if child.state is sim.state else abstraction.of(child.state)
                edges.setdefault((pre, tool, post), calls)
                graph_edges.setdefault((pre[0], tool, post[0]), calls)
                operations.setdefault(tool, calls)
                if post not in seen and len(seen) < max_states:
                    seen.add(post)
                    queue.append((child, calls))
    return Exploration(edges, operations, len(seen), graph_edges)


def cover_paths(
    found: Exploration, limit: int | None = None, hard_limit: int | None = None
) -> list[tuple[Call, ...]]:
    """Few call sequences that together cover every edge and operation found, greedily.

    A sequence covers the edges whose shortest witnesses are its prefixes; each pick covers the
    most edges still uncovered (an operation outweighs all state-graph edges together, and a
    state-graph edge all refined edges together), so a ``limit`` smaller than needed still keeps
    the coverage that matters most. Past ``limit`` picks go on while an operation or state-graph
    edge is uncovered, up to ``hard_limit``.
    """
    targets: dict[str, set[Any]] = {}
    weight: dict[Any, int] = {}
    graph_weight = len(found.edges) + 1
    op_weight = graph_weight * (len(found.graph_edges) + 1)
    for edge, path in found.edges.items():
        targets.setdefault(repr(path), set()).add(edge)
        weight[edge] = 1
    for edge, path in found.graph_edges.items():
        targets.setdefault(repr(path), set()).add(("graph", edge))
        weight[("graph", edge)] = graph_weight
    for op, path in found.operations.items():
        targets.setdefault(repr(path), set()).add(("op", op))
        weight[("op", op)] = op_weight
    witnesses = [*found.edges.values(), *found.graph_edges.values(), *found.operations.values()]
    paths = {repr(p): p for p in witnesses}
    covers: dict[str, set[Any]] = {}
    for key, path in paths.items():
        got: set[Any] = set()
        for cut in range(1, len(path) + 1):
            got |= targets.get(repr(path[:cut]), set())
        covers[key] = got
    left = set(weight)
    chosen: list[tuple[Call, ...]] = []

    def wanted() -> bool:
        if hard_limit is not None and len(chosen) >= hard_limit:
            return False
        if limit is None or len(chosen) < limit:
            return True
        return any(weight[t] > 1 for t in left)

    def gain(key: str) -> int:
        return sum(weight[t] for t in covers[key] & left)

    # lazy greedy: a path's gain only shrinks as others are chosen, so a stale heap entry that
    # still beats the next one after recomputing is the true best (ties: smallest key)
    heap = [(-gain(k), k) for k in sorted(covers)]
    heapq.heapify(heap)
    while left and heap and wanted():
        _, key = heapq.heappop(heap)
        fresh = gain(key)
        if fresh == 0:
            continue
        if heap and (-fresh, key) > heap[0]:
            heapq.heappush(heap, (-fresh, key))
            continue
        chosen.append(paths[key])
        left -= covers[key]
    return chosen


# ------------------------------------------------------------------------------------ the walks


def goal_predicate(contract: Contract, goal: str) -> Callable[[FrozenMap], bool]:
    """A goal by name (``goals:`` in the contract) or as an expression over the state."""
    clause = contract.goals.get(goal)
    if clause is not None:
        fn = clause.fn
    else:
        from envfactory.contracts.parser import parse_expr
        from envfactory.contracts.typecheck import TypeChecker

        expr = parse_expr(goal, Location("<goal>"))
        TypeChecker(contract.state_types(), context="goal").check_bool(expr)
        fn = compile_expr(expr)

    def holds(state: FrozenMap) -> bool:
        try:
            return fn(Env(state)) is True
        except EvaluationError:
            return False

    return holds


class Walker:
    """Random walks over a contract; ``walk(seed, index, attempt)`` is a pure function of its args."""

    def __init__(self, contract: Contract, *, max_length: int = 10, goal: str | None = None) -> None:
        if max_length < 1:
            raise UsageError("the longest trajectory must have at least one step")
        self.contract = contract
        self.drawer = InputDrawer(contract)
        self.max_length = max_length
        self.goal_name = goal
        self.goal = goal_predicate(contract, goal) if goal is not None else None
        self.tools = sorted(contract.operations)
        self.abstraction = Abstraction(contract)

    def step(
        self, sim: Simulator, rng: random.Random, used: dict[str, int], sampler: Sampler | None = None
    ) -> Simulator | None:
        """One allowed call, preferring operations this walk has used least (None: nothing allowed)."""
        tools = list(self.tools)
        rng.shuffle(tools)
        tools.sort(key=lambda t: used.get(t, 0))
        for tool in tools[:1] + rng.sample(tools[1:], len(tools) - 1):
            value = self.drawer.enabled(sim, tool, rng, sampler=sampler)
            if value is None:
                continue
            child = sim.fork()
            if child.call(tool, value).ok:
                used[tool] = used.get(tool, 0) + 1
                return child
        return None

    def walk(self, seed: int, index: int, attempt: int = 0) -> Trajectory | None:
        """Trajectory ``index``: a random walk of a length drawn in 1..max_length (None: stuck)."""
        rng = random.Random(derive_seed(seed, "walk", index, attempt))
        traj_seed = derive_seed(seed, "sim", index, attempt) % (1 << 31)
        sim = Simulator(self.contract, seed=traj_seed)
        length = rng.randint(1, self.max_length)
        used: dict[str, int] = {}
        sampler = Sampler(rng)
        for _ in range(length):
            moved = self.step(sim, rng, used, sampler)
            if moved is None:
                break
            sim = moved
        if self.goal is not None:
            reached = self._reach_goal(sim, rng)
            if reached is None:
                return None
            sim = reached
        if sim.steps == 0:
            return None
        meta: dict[str, Any] = {"generator": "walk"}
        if self.goal_name is not None:
            meta["goal"] = self.goal_name
        return sim.trajectory(id=f"gen-{seed}-{index:05d}", meta=meta)

    def _reach_goal(
        self, sim: Simulator, rng: random.Random, max_depth: int = 8, budget: int = 300
    ) -> Simulator | None:
        """``sim`` extended by the shortest calls found (breadth-first) that make the goal hold."""
        assert self.goal is not None
        if self.goal(sim.state) and sim.steps > 0:
            return sim
        abstraction = self.abstraction
        sampler = Sampler(rng)
        queue: deque[tuple[Simulator, int]] = deque([(sim.fork(), 0)])
        seen = {abstraction.of(sim.state)}
        expanded = 0
        while queue and expanded < budget:
            node, depth = queue.popleft()
            expanded += 1
            if depth >= max_depth:
                continue
            for tool in self.tools:
                for _ in range(2):
                    value = self.drawer.enabled(node, tool, rng, sampler=sampler)
                    if value is None:
                        break
                    child = node.fork()
                    if not child.call(tool, value).ok:
                        continue
                    if self.goal(child.state):
                        return child
                    key = abstraction.of(child.state)
                    if key not in seen or rng.random() < 0.1:
                        seen.add(key)
                        queue.append((child, depth + 1))
        return None

    def replay_calls(
        self, calls: Sequence[Call], seed: int, id: str, meta: Mapping[str, Any]
    ) -> Trajectory | None:
        """A trajectory from a fixed call sequence (a coverage path), with fresh outputs."""
        sim = Simulator(self.contract, seed=seed)
        for tool, value in calls:
            if not sim.call(tool, value).ok:
                return None
        if self.goal is not None:
            reached = self._reach_goal(sim, random.Random(seed))
            if reached is None:
                return None
            sim = reached
        return sim.trajectory(id=id, meta=dict(meta))


# ------------------------------------------------------------------------------------- generate


@attrs.frozen(slots=True)
class Plan:
    """What ``generate`` makes: the coverage trajectories, then walks for the remaining indices."""

    cover: tuple[Trajectory, ...]
    walks: int
    edges: int
    operations: tuple[str, ...]


def plan(
    contract: Contract, n: int, *, seed: int = 0, goal: str | None = None, max_length: int = 10
) -> tuple[Walker, Plan]:
    """The coverage part of a generation run, computed once in the calling process."""
    if n < 0:
        raise UsageError("-n must be at least 0")
    walker = Walker(contract, max_length=max_length, goal=goal)
    if goal is not None and n > 0:
        probe = walker._reach_goal(
            Simulator(contract, seed=seed),
            random.Random(derive_seed(seed, "goal")),
            max_depth=max_length,
            budget=2000,
        )
        if probe is None:
            raise UsageError(
                f"no sequence of at most {max_length} calls was found that reaches the goal {goal!r}"
            )
    found = explore(contract, seed=seed, drawer=walker.drawer, max_depth=max(max_length, 4))
    cover: list[Trajectory] = []
    for i, path in enumerate(cover_paths(found, limit=n // 2, hard_limit=n)):
        traj = walker.replay_calls(
            path,
            derive_seed(seed, "cover", i) % (1 << 31),
            f"gen-{seed}-cover-{i:04d}",
            {"generator": "cover"},
        )
        if traj is not None:
            cover.append(traj)
    return walker, Plan(tuple(cover), n - len(cover), len(found.edges), tuple(sorted(found.operations)))


WalkFn = Callable[[Sequence[tuple[int, int]]], list[Trajectory | None]]


def generate(
    contract: Contract,
    n: int,
    *,
    seed: int = 0,
    goal: str | None = None,
    max_length: int = 10,
    map_walks: Callable[[Walker, int, Sequence[tuple[int, int]]], Iterable[Trajectory | None]] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Trajectory]:
    """``n`` distinct valid trajectories, coverage first; ``map_walks`` runs walks elsewhere.

    ``map_walks(walker, seed, [(index, attempt), ...])`` must return the walks in order (the
    default runs them here); the output does not depend on how it spreads them.
    """
    require_valid_start(contract)
    walker, made = plan(contract, n, seed=seed, goal=goal, max_length=max_length)
    if n > 0 and not made.operations:
        raise UsageError(
            "no call that the initial state allows was found, so no trajectory can be generated"
            " (`envfactory check` says which entries the operations need before the first call)"
        )
    seen: set[bytes] = set()
    emitted = 0
    for traj in made.cover:
        key = _content_key(traj)
        if key in seen:
            continue
        seen.add(key)
        emitted += 1
        if progress is not None:
            progress(1)
        yield traj
    run = map_walks or _local_walks
    max_attempts = 30
    index = 0
    wanted = n - emitted
    while emitted < n:
        window = [(i, 0) for i in range(index, index + min(WINDOW, wanted - index))]
        results = list(run(walker, seed, window))
        for (i, _), walked in zip(window, results, strict=True):
            attempt = 0
            while walked is None or _content_key(walked) in seen:
                attempt += 1
                if attempt >= max_attempts:
                    raise UsageError(
                        f"only {emitted} distinct trajectories of at most {max_length} steps could be generated"
                        + (f" that reach {goal!r}" if goal else "")
                        + "; raise --max-length or lower -n"
                    )
                walked = walker.walk(seed, i, attempt)
            seen.add(_content_key(walked))
            emitted += 1
            if progress is not None:
                progress(1)
            yield walked
        index += len(window)


def _local_walks(walker: Walker, seed: int, jobs: Sequence[tuple[int, int]]) -> list[Trajectory | None]:
    return [walker.walk(seed, index, attempt) for index, attempt in jobs]


# ---------------------------------------------------------------------------------- parallelism


@attrs.frozen(slots=True)
class LoadSpec:
    """How a worker process rebuilds the contract (compiled clauses do not pickle, paths do)."""

    path: str
    with_state: str | None = None
    closed_world: bool = False
    max_length: int = 10
    goal: str | None = None

    def walker(self) -> Walker:
        from envfactory.contracts.loader import load

        contract = load(self.path, with_state=self.with_state, closed_world=self.closed_world)
        return Walker(contract, max_length=self.max_length, goal=self.goal)


_WORKER: dict[LoadSpec, Walker] = {}


def _worker_walks(spec: LoadSpec, seed: int, jobs: Sequence[tuple[int, int]]) -> list[Trajectory | None]:
    walker = _WORKER.get(spec)
    if walker is None:
        walker = _WORKER[spec] = spec.walker()
    return _local_walks(walker, seed, jobs)


def _chunks(jobs: Sequence[tuple[int, int]], parts: int) -> list[Sequence[tuple[int, int]]]:
    size = max(1, min(64, -(-len(jobs) // max(1, parts * 4))))
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]


class ProcessWalks:
    """Runs walks in a process pool; results come back in order, so output equals a serial run."""

    def __init__(self, spec: LoadSpec, jobs: int) -> None:
        import concurrent.futures
        import multiprocessing

        self.spec = spec
        self.jobs = jobs
        self.pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=jobs, mp_context=multiprocessing.get_context("spawn")
        )
        # start the workers and load the contract in them while this process plans coverage
        self._warm = [self.pool.submit(_worker_walks, spec, 0, []) for _ in range(jobs)]

    def __call__(
        self, walker: Walker, seed: int, jobs: Sequence[tuple[int, int]]
    ) -> Iterator[Trajectory | None]:
        futures = [
            self.pool.submit(_worker_walks, self.spec, seed, chunk) for chunk in _chunks(jobs, self.jobs)
        ]
        for future in futures:
            yield from future.result()

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


class RayWalks:
    """Runs walks as Ray tasks (a local Ray started here when none is running)."""

    def __init__(self, spec: LoadSpec, jobs: int) -> None:
        ray: Any = require("ray", "--engine ray")
        self.ray = ray
        self.started = False
        if not ray.is_initialized():
            ray.init(
                num_cpus=max(1, jobs),
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
                ignore_reinit_error=True,
            )
            self.started = True
        self.spec = spec
        self.jobs = jobs
        self.remote = ray.remote(_worker_walks)

    def __call__(
        self, walker: Walker, seed: int, jobs: Sequence[tuple[int, int]]
    ) -> Iterator[Trajectory | None]:
        refs = [self.remote.remote(self.spec, seed, list(chunk)) for chunk in _chunks(jobs, self.jobs)]
        for ref in refs:
            yield from self.ray.get(ref)

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


def _content_key(traj: Trajectory) -> bytes:
    """Identity for duplicate detection: the calls (tools and inputs), not outputs, id or seed."""
    return orjson.dumps([[step.tool, step.input] for step in traj.steps], option=orjson.OPT_SORT_KEYS)


__all__ = [
    "Abstraction",
    "Exploration",
    "InputDrawer",
    "KeyUse",
    "LoadSpec",
    "Plan",
    "ProcessWalks",
    "RayWalks",
    "Walker",
    "cover_paths",
    "explore",
    "generate",
    "goal_predicate",
    "key_uses",
    "plan",
]
