"""Running a fuzz campaign: settings, the time budget, coverage, and the summary.

``fuzz(contract, target, ...)`` builds the contract's state machine (``machine.py``), runs it
under Hypothesis with one seed (same seed, same run: no example database unless one is named),
and collects the distinct findings, each the smallest call sequence Hypothesis shrank it to.

Hypothesis stops at ``max_examples`` test cases; the wall-clock budget is enforced here: once it
is spent, the next test case ends the run (a finding already found gets a short grace period to
finish shrinking). The findings are recorded as they happen, so ending early loses none of them.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from typing import Any

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, reject, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Unsatisfiable
from hypothesis.stateful import get_state_machine_test

from envfactory.contracts.errors import UsageError
from envfactory.contracts.evaluator import Compiled
from envfactory.contracts.model import Contract, Operation
from envfactory.contracts.semantics import Machine, require_valid_start
from envfactory.contracts.state import initial_state
from envfactory.contracts.values import FrozenMap
from envfactory.fuzz import influence
from envfactory.fuzz.branches import Branch, conditions
from envfactory.fuzz.corpus import Call, Corpus
from envfactory.fuzz.findings import KINDS, Finding, FindingError, Findings, Key
from envfactory.fuzz.oracle import Expectation
from envfactory.fuzz.reach import Goal, Route, Start
from envfactory.fuzz.shrink import deletions, explained, minimize, skipped
from envfactory.fuzz.steering import MADE_AGAIN, Steer, Threshold, literals
from envfactory.fuzz.targets import Target
from envfactory.statemachine.simulator import Response

MODES = ("valid", "adversarial")
GRAPH_TIMEOUT = 20.0
"""Wall seconds for the state graph behind the coverage figure in a run with a time budget (a
fifth of it at most; its work is bounded by Z3 resource units as well)."""
ENGINES = ("rules", "fast")
SHRINK_GRACE = 0.2
"""Share of the time budget a run may add to finish shrinking what it found."""
MIN_GRACE = 2.0
DELETIONS_FLOOR = 1.0
"""Seconds a finding's single-step deletions may take past the grace period: a finding made in
the last moments of a run still leaves out the calls that did nothing (a read, a key never
used), which a replay or two each costs."""
SHRINK_CASES = 200
"""In a run with a time budget, test cases in a row without a failing one after which a round's
shrinking ends. Hypothesis's shrinker tries only cases smaller than its best, so each failing
case is progress: it shrinks for as long as it makes some, and a pass that finds nothing ends it
(``shrink.minimize`` then finishes the job on whole steps). A run bounded by examples has no
budget to spend: its rounds shrink this many cases from the first finding."""
SHRINK_SHARE = 0.1
"""In a run with a time budget, the share of it a round's shrinking may take from its first
finding. Hypothesis's shrinker improves a deep stateful case by small steps (on the auction's
DraftCancelFreesSlot it progressed for 18 s of a 20 s budget and left 25 calls, where
``shrink.minimize`` took those to the minimal 11 in 2 s), and the time it takes is the search's
for other findings and the minimizer's."""
SLOW_KINDS = frozenset(("hang", "resource"))
SLOW_SHRINK_CASES = 5
"""Test cases Hypothesis may spend shrinking a hang in all (each one may wait out the call limit,
and each one that does is progress)."""
REACH_SHARE = 0.25
"""The share of the examples searched before the solver plans its prefixes (the search waits)."""
PLAN_AT = 0.05
"""The share of a time budget searched before the solver plans its prefixes, beside the search:
the goals are the outcomes still uncovered, and a second a long route comes sooner is a second
more to fuzz from where it leads (on the cloud set, a route to a move came at 14 s of a 20 s run
when the planner began at a quarter of the budget). The first second covers the outcomes one or
two calls deep, which the planner would cover at once too, at little cost."""
EPOCH = 100
"""Test cases a round runs at least before it ends to let cases start from new corpus entries."""
ADOPT_AFTER = 25
"""Test cases a round runs at least before it ends to start cases on routes the solver planned
meanwhile (beside the search, under a time budget). Waiting for the round's end (``EPOCH`` cases
and a grown corpus, or ``STALE`` cases) kept routes found at 6 s unused until 20 s on a contract
whose cases are slow (the cloud set's, 30 a CPU-second)."""
WIDE = 20
"""Operations past which a contract is wide: more than a case's steps (by default) can call.
A wide contract's steps choose among its operations in the order of their calls so far
(``machine.ordered``), fixed for a round, and its rounds end after ``ADOPT_AFTER`` cases."""
STALE = 400
"""Test cases in a row that added nothing to the corpus, after which the cases get longer."""
LONGER = 4
"""Cases grow up to this many times ``--steps`` long as short ones stop finding new states."""
RELAY_STARTS = 64
"""Corpus entries the relay planner may start from at most (``relay_starts``)."""
RELAY_RECORDS = 6
"""Records a collection may hold in a state the relay planner starts from."""
REACH_TIMEOUT = 10.0
"""Seconds' worth of solver effort (``reach.effort``) planning them may take, at most."""
PLAN_SHARE = 0.5
"""The share of a time budget whose worth of solver effort the planning may take (up to
``REACH_TIMEOUT``): it runs beside the search, in a worker process with a core of its own where
the machine has two, and each route is adopted as soon as it is found, so a deep route found
late still has rounds left to be followed (alone, the review board's 9-call merge takes about
18 million units, the courier's 11-call refusal at a limit about 50 million)."""
REACH_GUARD = 3.0
"""The planning worker is killed past this many times those seconds of wall time (in a run with
a time budget, which must not outlive it)."""
HANG_GUARD = 600.0
"""Wall seconds after which the solver's worker (planning prefixes, building the state graph) of
a run bounded by examples is killed: a hang guard only, the work itself is bounded by Z3
resource units, so that a loaded machine does not change what the same seed plans and reports."""
DEFAULT_EXAMPLES = 100
"""Test cases of a run given neither ``max_examples`` nor a time budget."""
UNBOUNDED = 10**9
"""Hypothesis's example limit for a run that only its time budget ends."""
CASES_PER_EXAMPLE = 2
EXTRA_CASES = 300
"""A run stops after ``2 * max_examples + 300`` test cases, failing ones included (Hypothesis
counts only passing ones), which leaves room to shrink without running on and on."""


class StopRun(BaseException):
    """Ends a run from inside a test case (a ``BaseException`` so Hypothesis does not shrink it)."""


def run_settings(
    max_examples: int, database: str | None, *, multiple: bool = True, steps: int | None = None
) -> settings:
    """Hypothesis settings for one fuzz run (the contract's or an agent's): quiet, no deadline and
    no health checks, every phase, and an example database only where the user named one."""
    stateful: dict[str, Any] = {} if steps is None else {"stateful_step_count": steps}
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=DirectoryBasedExampleDatabase(database) if database else None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=multiple,
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
        print_blob=False,
        **stateful,
    )


@contextlib.contextmanager
def pinned_constants(*code: Any) -> Iterator[None]:
    """Hypothesis now and then draws a literal it mined from the source of every loaded module
    outside the libraries; which modules are loaded depends on what the process did before, so the
    same seed would not give the same run (and an editable install would fuzz differently from a
    wheel). For one run the pool is pinned to the code under test: the modules of ``code`` (the
    Python target's factory, the agent), whose boundary constants are what the mining is for.

    Uses ``hypothesis.internal``: if its layout changes, the run goes on unpinned.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants, constants_from_module
        from hypothesis.internal.floats import float_to_int
        from sortedcontainers import SortedSet
    except ImportError:  # pragma: no cover - a Hypothesis without constant mining
        yield
        return
    if not hasattr(providers, "_get_local_constants") or not hasattr(providers, "CONSTANTS_CACHE"):
        yield  # pragma: no cover
        return
    # sorted sets, as Hypothesis keeps its own pools: it draws a constant by its index in the
    # set's order, and a plain set of strings orders them by their hash, which differs from one
    # process to the next (PYTHONHASHSEED), so the same seed drew other strings in another run
    pool = Constants(
        integers=SortedSet(),
        floats=SortedSet(key=float_to_int),
        bytes=SortedSet(),
        strings=SortedSet(),
    )
    for module in {id(m): m for m in map(inspect.getmodule, code) if m is not None}.values():
        with contextlib.suppress(Exception):  # a module without source mines nothing
            pool |= constants_from_module(module)
    saved = providers._get_local_constants
    providers._get_local_constants = lambda: pool
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = saved
        providers.CONSTANTS_CACHE.cache.clear()


class _StillClock:
    """A ``time`` module whose ``monotonic`` stands still (``steady_search``)."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock

    def __getattr__(self, name: str) -> Any:
        return getattr(self.clock, name)

    @staticmethod
    def monotonic() -> float:
        return 0.0


@contextlib.contextmanager
def steady_search() -> Iterator[None]:
    """Hypothesis stops generating test cases ten seconds of wall time after its first failing
    one, so on a loaded machine a run bounded by examples ran fewer cases after a finding, and
    the same seed made other calls. For one run that clock stands still; the run's own bounds
    (the examples, the budget, the shrinking caps) end the search after a finding.

    Uses ``hypothesis.internal``: if its layout changes, the run goes on with the clock as is.
    """
    try:
        from hypothesis.internal.conjecture import engine
    except ImportError:  # pragma: no cover
        yield
        return
    saved = getattr(engine, "time", None)
    if saved is None:
        yield  # pragma: no cover - another Hypothesis
        return
    engine.time = _StillClock(saved)  # type: ignore[assignment]
    try:
        yield
    finally:
        engine.time = saved


def seed_test(test: Any, seed: int, database_key: bytes | None) -> None:
    """Seed a Hypothesis test as ``hypothesis.seed()`` does, minus its switching the database off:
    a seeded test keeps no database unless it is given a key, so one is given when there is one."""
    test._hypothesis_internal_use_seed = seed
    if database_key is not None:
        test._hypothesis_internal_database_key = database_key


@attrs.frozen(slots=True)
class Summary:
    """What one run did and found."""

    target: str
    mode: str
    seed: int
    test_cases: int
    calls: int
    rejected: int
    seconds: float
    operations: tuple[str, ...]
    operations_covered: tuple[str, ...]
    edges_covered: int
    edges_total: int | None
    findings: tuple[Finding, ...]
    first_finding_seconds: float | None
    stopped_by_budget: bool
    reproduce: str | None = None
    stopped_by: str = "max examples"
    """What ended the search: "time budget", "max examples" or "first finding"."""
    outcomes: tuple[str, ...] = ()
    outcomes_total: tuple[str, ...] = ()
    rounds: int = 1
    jobs: int = 1
    reached: tuple[str, ...] = ()
    """The clause outcomes the search had not covered that the solver planned a route to."""

    @property
    def calls_per_second(self) -> float:
        return self.calls / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "mode": self.mode,
            "seed": self.seed,
            "test_cases": self.test_cases,
            "calls": self.calls,
            "rejected_calls": self.rejected,
            "seconds": round(self.seconds, 3),
            "operations": list(self.operations),
            "operations_covered": list(self.operations_covered),
            "edges_covered": self.edges_covered,
            "edges_total": self.edges_total,
            "stopped_by_budget": self.stopped_by_budget,
            "stopped_by": self.stopped_by,
            "rounds": self.rounds,
            "jobs": self.jobs,
            "solver_reached": list(self.reached),
            "clause_outcomes_covered": len(self.outcomes),
            "clause_outcomes_total": len(self.outcomes_total),
            "clause_outcomes_uncovered": [o for o in self.outcomes_total if o not in self.outcomes],
            "first_finding_seconds": self.first_finding_seconds,
            "findings": [f.to_json() for f in self.findings],
            "reproduce": self.reproduce,
        }


class Session:
    """Everything one run shares across its test cases."""

    def __init__(
        self,
        contract: Contract,
        target: Target,
        *,
        mode: str,
        time_budget: float | None,
        on_finding: Callable[[Finding], None] | None = None,
    ) -> None:
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
        closed = contract if all(v.known for v in contract.state.values()) else contract.with_closed_world()
        self.contract = closed
        self.model = Machine(closed)
        self.initial: FrozenMap = initial_state(closed)
        self.collections = closed.collections()
        self.writes = {
            name: tuple(sorted(op.writes & self.collections)) for name, op in closed.operations.items()
        }
        self.wide = len(closed.operations) > WIDE
        """Whether the contract is wide (``WIDE``)."""
        self.deleted = frozenset().union(*(Steer.of(op, closed).deletes for op in closed.operations.values()))
        """Collections some operation deletes a named key from: the ones a key is made again in."""
        self.target = target
        self.mode = mode
        # a Python method takes keyword arguments: an input that is not an object never gets there
        self.allow_non_object = not getattr(target, "keyword_calls", False)
        self.findings = Findings()
        self.on_finding = on_finding
        self.calls = 0
        self.rejected = 0
        self.test_cases = 0
        self.ops_covered: set[str] = set()
        self.edges: set[tuple[Any, str, Any]] = set()
        self.abstraction = Abstraction(closed)
        self.started = time.monotonic()
        self.time_budget = time_budget
        self.stopped_by_budget = False
        self.max_cases: int | None = None
        self.stopped = False
        self.internal_error: BaseException | None = None
        """The first error the fuzzer's own step code raised (a bug of ours, not a finding): the
        run ends with it, never with a quiet summary (Hypothesis may otherwise replay the case
        as flaky, the fuzzer's steering having moved on, and end the round without a word)."""
        self.first_case: int | None = None
        """The test case of the round's first finding."""
        self.first_seconds = 0.0
        """When the round's first finding was made (``elapsed``)."""
        self.last_failure = 0
        """The test case of the round's last finding (Hypothesis's shrinking progressing)."""
        self.shrink_cases = SHRINK_CASES
        self.slow_finding = False
        """A hang or resource finding this round: its shrinking is bounded from its first case."""
        self.kinds: frozenset[str] | None = None
        self.searching = False
        self.minimize_deadline: float | None = None
        """Past this (monotonic) time the shrinker starts no more replays."""
        self.prefixes: list[Route] = []
        """Call sequences the solver planned to operations the search had not reached (fixed
        for a round: Hypothesis replays a case's choices and needs them to mean the same)."""
        self.planned: list[Route] = []
        """The prefixes the solver has reported so far (``reach``, perhaps still planning)."""
        self.fresh = 0
        """How many of the last ``prefixes`` the latest adoption brought: a case that follows a
        prefix takes one of them one time in two (``Case.step``), since a route planned late
        has fewer cases left than the ones before it had."""
        self.planning: threading.Thread | None = None
        self.planning_error: Exception | None = None
        self.reach_at: tuple[float | None, int | None] | None = None
        """When the search stops to ask the solver (seconds, test cases); None once it has."""
        self.round_over = False
        self.goals: list[tuple[Goal, str]] = []
        """The goals handed to the solver, each with its clause outcome's name."""
        self.reached: tuple[str, ...] = ()
        self.stateful = any(op.requires for op in closed.operations.values())
        """Whether some call can be refused by a precondition (the steering's premise)."""
        self.influence: influence.Coverage | None = None
        """The influence goals (``influence.py``) the search has not met yet: tracked, and
        planned for once the clause outcomes are, beside the search of a run bounded by its time
        budget (``fuzz``)."""
        self.explained: set[Key] = set()
        """Findings shown to follow from an earlier wrong record (``shrink.explained``): not
        reported, and ended quietly when a later round meets them again."""
        self.known: frozenset[Key] = frozenset()
        """Findings earlier rounds of the run reported: seen again, they end the case quietly."""
        self.outcomes: set[str] = set()
        self.all_outcomes = clause_outcomes(closed)
        every = {name: conditions(op, closed) for name, op in closed.operations.items()}
        self.open_branches = {name: tuple(b for b in ways if not b.refused) for name, ways in every.items()}
        """The conditions of each operation (its effects' ways, its requires' bounds) with an
        outcome not yet covered, taken by accepted calls."""
        self.open_refusals = {name: tuple(b for b in ways if b.refused) for name, ways in every.items()}
        """The same, taken by calls one of its requires refuses (``Branch.refused``)."""
        self.aims: dict[str, tuple[tuple[str, Compiled], ...]] = {}
        """Per operation, the ways through its effects not yet covered that one key field
        decides: the field, and what the call must satisfy (``Case._aimed``)."""
        for name in closed.operations:
            self._branches_taken(name)
        self.corpus = Corpus(closed)
        """Accepted-call sequences that reached new state features, for cases to start from."""
        self.corpus.novel(self.initial, closed.state)
        self.published: tuple[tuple[Call, ...], ...] = ()
        """The corpus entries this round's cases may start from: fixed for a round, since
        Hypothesis replays a case's choices and needs them to mean the same thing each time."""
        self.rarity: tuple[float, ...] = ()
        """The published entries' cumulative weights, newest first (``Corpus.rarity``)."""
        self.round_ways: dict[str, tuple[Branch, ...]] = {}
        """``open_branches`` as the round began (``publish``), those the input's own values
        decide (``Branch.drawn``): the ways a valid step draws again for, fixed for a round like
        the corpus entries."""
        self.round_outcomes: frozenset[str] = frozenset()
        """The clause outcomes covered as the round began (``publish``)."""
        self.round_aims: dict[str, tuple[tuple[str, Compiled], ...]] = {}
        """``aims`` as the round began (``publish``)."""
        self.op_calls: Counter[str] = Counter()
        """Calls sent so far, per operation."""
        self.round_calls: dict[str, int] = {}
        """``op_calls`` as the round began (``publish``)."""
        self.round_covered: frozenset[str] = frozenset()
        """``ops_covered`` as the round began (``publish``)."""
        self.round_order: list[Any] | None = None
        """The operations in the order a round's steps choose among them (``machine.ordered``)."""
        self.round_start = 0
        self.epoch_over = False
        self.stale = False
        """Whether a round ended because its cases stopped adding to the corpus."""
        self.may_lengthen = False
        self.replays = 0
        """The shrinker's replays so far (``shrink.replay``): what bounds its costlier moves."""
        self.thresholds: dict[str, tuple[Threshold, ...]] = {}
        """Each operation's thresholds, read once for the shrinker (``shrink._tied``)."""
        self.literals = literals(closed)
        """Strings the clauses test prefixes and suffixes against: every case's pool of values
        starts with them (``Case._flow``)."""
        self.state_writes = {name: tuple(sorted(op.writes)) for name, op in closed.operations.items()}
        self.readers: dict[str, list[Any]] = {}
        """Per collection, the plans of the read operations that take a key of it (``machine.plans``)."""
        self.whole_readers: dict[str, list[Any]] = {}
        """Per state variable, the plans of the read operations whose ensures read it other than
        through a key they take: read back, with any key, after it changes (``machine.plans``)."""
        self.users: dict[str, dict[str, list[Any]]] = {}
        """Per collection and record field, the plans whose requires or effects read it, each
        with its key field for the collection (``machine.plans``)."""
        self.writers: dict[str, dict[str, list[Any]]] = {}
        """Per collection and record field, the plans whose effects write it on a record that
        exists (``members[input.member].role = input.role``; ``machine.plans``)."""
        self.fills: dict[str, list[tuple[Any, Any]]] = {}
        """Per collection, the plans whose requires bound a count of its records (``steering.Fill``),
        each with its count: called again after a record leaves the count (``Case.refill``)."""
        self.places: dict[str, dict[str, list[tuple[Any, Any]]]] = {}
        """Per collection and record field, the plans with an ``Elsewhere`` field compared with
        that place of its records, each with the field: tried on another record after a call
        fills the place (``Case.elsewhere``)."""
        self.slow: dict[str, dict[str, Response]] = {}
        # a call's cost: CPU time where it runs in this process (the same on a loaded machine, so
        # the same seed memoizes the same calls), wall time where it runs elsewhere
        self.call_clock = time.process_time if getattr(target, "in_process", False) else time.perf_counter
        """Per operation, the crashes and hangs that took long, by the case's calls up to them
        (``machine.SLOW_CALL``): answered again without waiting for the target."""

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def adopt_prefixes(self) -> None:
        """Take the prefixes the solver has planned so far for the rounds that follow."""
        if self.planning_error is not None:
            raise self.planning_error
        if len(self.planned) > len(self.prefixes):
            self.fresh = len(self.planned) - len(self.prefixes)
            self.prefixes = list(self.planned)
            self.reached = tuple(self._outcome_of(route) for route in self.prefixes)

    def _outcome_of(self, route: Route) -> str:
        """The name of the clause outcome ``route`` was planned for."""
        named = next((outcome for goal, outcome in self.goals if goal == route.goal), None)
        return named or f"{route.operations[-1]}: accepted"

    def publish(self) -> None:
        """Fix for the round about to begin what its steps read of the run so far: the corpus
        entries, and the ways through the effects and the outcomes not yet covered. Hypothesis
        replays a case's choices (to shrink it, to check it fails again) and needs them to draw
        the same calls each time; a step that drew once more because a way was still open, and
        not on the replay because another case covered it since, is a flaky test case to it."""
        self.corpus.settle()
        self.published = tuple(self.corpus.entries)
        self.rarity = self.corpus.rarity()
        self.round_ways = {
            name: drawn
            for name, ways in self.open_branches.items()
            if (drawn := tuple(b for b in ways if b.drawn))
        }
        self.round_outcomes = frozenset(self.outcomes)
        self.round_aims = dict(self.aims)
        self.round_calls = dict(self.op_calls)
        self.round_covered = frozenset(self.ops_covered)
        self.round_order = None

    def begin_case(self) -> None:
        if self.reach_at is not None and self.first_case is None:
            seconds, cases = self.reach_at
            if (seconds is not None and self.elapsed() >= seconds) or (
                cases is not None and self.test_cases >= cases
            ):
                self.round_over = self.stopped = True
                raise StopRun  # a share of the search is spent: time to ask the solver
        if (
            self.first_case is None
            and self.test_cases - self.round_start >= EPOCH
            and len(self.corpus.entries) > len(self.published)
        ):
            self.epoch_over = self.stopped = True
            raise StopRun  # the corpus grew: a new round starts cases from the new entries too
        if (
            self.first_case is None
            and self.test_cases - self.round_start >= ADOPT_AFTER
            and (len(self.planned) > len(self.prefixes) or self.wide)
        ):
            self.epoch_over = self.stopped = True
            # the solver planned new routes: the next round starts cases on them (a wide
            # contract's next round orders its operations again: ``machine.ordered``)
            raise StopRun
        if (
            self.may_lengthen
            and self.first_case is None
            and self.test_cases - self.round_start >= STALE
            and len(self.corpus.entries) == len(self.published)
        ):
            self.stale = self.stopped = True
            raise StopRun  # short cases found nothing new for a while: the next round's are longer
        if self.shrunk_enough():
            self.stopped = True
            raise StopRun  # shrink.minimize finishes the job
        if self.max_cases is not None and self.test_cases >= self.max_cases:
            self.stopped = True
            raise StopRun  # failing cases do not count towards max_examples: bound them here
        self.check_time()
        self.test_cases += 1

    def shrunk_enough(self) -> bool:
        """Whether the round's shrinking is over: a hang's after ``SLOW_SHRINK_CASES`` cases; in a
        run with a time budget, any other's after ``SHRINK_CASES`` cases without progress or its
        share of the budget; in a run bounded by examples (no budget to spend), ``SHRINK_CASES``
        cases after the first finding."""
        if self.first_case is None:
            return False
        if self.slow_finding:
            return self.test_cases - self.first_case >= SLOW_SHRINK_CASES
        budget = self.time_budget
        if budget is None:
            return self.test_cases - self.first_case >= self.shrink_cases
        if self.test_cases - self.last_failure >= self.shrink_cases:
            return True
        return self.elapsed() - self.first_seconds >= budget * SHRINK_SHARE

    def check_time(self) -> None:
        """End the run once the budget is spent (with a grace period to shrink a finding of the
        current round); called before every case and every step, since one step may take long."""
        if self.time_budget is not None:
            elapsed = self.elapsed()
            over = elapsed - self.time_budget
            # a finding of this round may be shrunk by Hypothesis for half the grace period;
            # the other half is left to ``shrink.minimize``
            if over > 0 and (self.first_case is None or over > grace(self.time_budget) / 2):
                self.stopped_by_budget = self.stopped = True
                raise StopRun

    def outcome(self, op: Operation, expect: Expectation, state: FrozenMap, value: Any) -> None:
        """Record which clause outcomes a call with input ``value`` in ``state`` exercises (see
        ``clause_outcomes``)."""
        if expect.accepted:
            self.outcomes.add(f"{op.name}: accepted")
            if open_ways := self.open_branches.get(op.name):
                # each condition is evaluated until every way through it is covered
                before = len(self.outcomes)
                for branch in open_ways:
                    if (taken := branch.taken(state, value)) is not None:
                        self.outcomes.add(taken)
                if len(self.outcomes) > before:
                    self._branches_taken(op.name)
        elif expect.kind == "precondition" and expect.clause is not None:
            number = op.requires.index(expect.clause) + 1
            self.outcomes.add(f"{op.name}: requires {number} fails")
            if refusals := self.open_refusals.get(op.name):
                for branch in refusals:
                    if branch.number == number and (taken := branch.taken(state, value)) is not None:
                        self.outcomes.add(taken)
                self.open_refusals[op.name] = tuple(b for b in refusals if b.outcomes[0] not in self.outcomes)
        elif expect.kind == "input_schema":
            self.outcomes.add(f"{op.name}: input schema fails")

    def _branches_taken(self, name: str) -> None:
        """Drop the ways through ``name``'s effects covered now from what is left to cover."""
        left = tuple(b for b in self.open_branches[name] if not self.outcomes.issuperset(b.outcomes))
        self.open_branches[name] = left
        aims = tuple(a for b in left for o, a in zip(b.outcomes, b.aims) if o not in self.outcomes)
        if aims:
            self.aims[name] = aims
        else:
            self.aims.pop(name, None)

    def covered(self, pre: FrozenMap, op: str, post: FrozenMap) -> None:
        self.ops_covered.add(op)
        abstract = self.abstraction
        self.edges.add((abstract(pre), op, abstract(post)))

    def found(self, finding: Finding) -> None:
        if self.searching and finding.key in self.known:
            if finding.key not in self.explained:
                self.findings.add(finding, self.elapsed())  # a shorter trace replaces a longer one
            reject()  # reported by an earlier round: end this case without a failure
        fresh = finding.key not in self.findings.by_key
        if self.first_case is None:
            self.first_case = self.test_cases
            self.first_seconds = self.elapsed()
        self.last_failure = self.test_cases
        if finding.kind in SLOW_KINDS:  # every shrinking case may wait out the limit again
            self.slow_finding = True
        self.findings.add(finding, self.elapsed())
        if fresh and self.on_finding is not None:
            self.on_finding(finding)


def grace(time_budget: float) -> float:
    """Seconds a run may go past its budget to shrink what it found (search and replays both)."""
    return max(time_budget * SHRINK_GRACE, MIN_GRACE)


def clause_outcomes(contract: Contract) -> tuple[str, ...]:
    """Every clause outcome a run can cover: each operation accepted, each condition of its
    effects holding and each of its parts failing, each numeric comparison of its requires at
    its bound, each of its requires' weak mutants (a key swapped, a listed value counted
    otherwise) told apart from it (``branches.py``), each of its requires failing while the
    earlier ones hold, and its input schema failing; and, for an operation
    that makes a key of a collection another operation deletes keys of, that operation accepted
    on a key made again under the name of a deleted one (where a record made again remembers
    what the deleted one had: ``machine.Case.history``)."""
    steers = {name: Steer.of(op, contract) for name, op in contract.operations.items()}
    deleted = frozenset().union(*(s.deletes for s in steers.values()))
    out: list[str] = []
    for name, op in contract.operations.items():
        out.append(f"{name}: accepted")
        out.extend(o for branch in conditions(op, contract) for o in branch.outcomes)
        if steers[name].makes & deleted:
            out.append(f"{name}: {MADE_AGAIN}")
        out.extend(f"{name}: requires {i} fails" for i in range(1, len(op.requires) + 1))
        out.append(f"{name}: input schema fails")
    return tuple(out)


class Abstraction:
    """A concrete state to its abstract state: the valuation of the state graph's predicates
    (``envfactory.statemachine.abstraction``), so covered transitions match graph edges."""

    def __init__(self, contract: Contract) -> None:
        from envfactory.statemachine.abstraction import predicates

        self.preds = predicates(contract)

    def __call__(self, state: FrozenMap) -> tuple[bool, ...]:
        from envfactory.statemachine.abstraction import valuation

        return valuation(self.preds, state)


class StateGraph:
    """The contract's state graph behind the edge coverage figure, built in a worker beside the
    search (it reads the contract alone). Built after the search, it took up to a fifth of a time
    budget past it: 5.5 s over a 20 s budget on Box's document, whose graph is too large to build
    at all. The worker is forked here and killed at ``timeout`` (encoding a large contract's
    steps does not look at the solver's time limit); a thread reads its answer as it comes, and
    ``coverage`` waits for that at most ``timeout`` from the start."""

    def __init__(self, contract: Contract, timeout: float) -> None:
        from envfactory.solver import graph as graph_module
        from envfactory.solver.deadline import Forked, bounded

        self.graph: Any = None
        self.thread: threading.Thread | None = None
        self.later: Callable[[], Any] | None = None
        task = functools.partial(_graph_of, graph_module.compile, contract, timeout)
        if not hasattr(os, "fork"):  # no worker to build it beside the search: at the end
            self.later = lambda: bounded(task, timeout)
            return
        forked = Forked(task, timeout)
        self.thread = threading.Thread(
            target=self._take, args=(forked,), name="envfactory-graph", daemon=True
        )
        self.thread.start()

    def _take(self, forked: Any) -> None:
        with contextlib.suppress(Exception):
            self._keep(forked.answer())

    def _keep(self, answer: Any) -> None:
        from envfactory.solver.deadline import Stopped

        if not isinstance(answer, Stopped):
            self.graph = answer

    def coverage(self, abstraction: Abstraction, edges: set[tuple[Any, str, Any]]) -> tuple[int, int] | None:
        """(covered, total) edges of the graph; None when it could not be built in time."""
        if self.thread is not None:
            self.thread.join()
        elif self.later is not None:
            with contextlib.suppress(Exception):
                self._keep(self.later())
        graph = self.graph
        if graph is None:
            return None
        ids = {
            tuple(data["valuation"][p.text] for p in abstraction.preds): node
            for node, data in graph.nodes(data=True)
        }
        covered = 0
        for pre, op, post in edges:
            source, target = ids.get(pre), ids.get(post)
            if source is not None and target is not None and graph.has_edge(source, target, key=op):
                covered += 1
        return covered, int(graph.number_of_edges())


def _graph_of(compile: Callable[..., Any], contract: Contract, timeout: float, _report: Any) -> Any:
    return compile(contract, timeout=timeout)


def fuzz(
    contract: Contract,
    target: Target,
    *,
    mode: str = "adversarial",
    seed: int = 0,
    max_examples: int | None = None,
    steps: int = 20,
    time_budget: float | None = None,
    database: str | None = None,
    graph: bool = False,
    engine: str = "rules",
    multiple: bool = True,
    shrink_cases: int = SHRINK_CASES,
    kinds: Collection[str] | None = None,
    on_finding: Callable[[Finding], None] | None = None,
) -> Summary:
    """Fuzz ``target`` against ``contract``; return the summary with every distinct finding.

    ``max_examples`` bounds the test cases of one Hypothesis run (same seed, same run). Without
    it, a ``time_budget`` is spent in full: the search goes on in rounds, each a Hypothesis run
    with a seed drawn from ``seed``, and a finding an earlier round reported ends a case quietly
    in the later ones, so that every round looks for something new; without either, 100.

    ``engine="rules"`` runs the contract's ``RuleBasedStateMachine``; ``engine="fast"`` runs the
    same steps from one ``@given`` loop (see ``machine.py``). With ``multiple=False`` the search
    stops at the first finding (then shrinks it). ``kinds`` limits the finding kinds looked for
    (say, only ``crash`` against an API whose contract has no preconditions).
    """
    from envfactory.fuzz.machine import build_machine, fast_test

    if (max_examples is not None and max_examples < 1) or steps < 1:
        raise UsageError("--max-examples and --steps must be at least 1")
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}: expected one of {', '.join(ENGINES)}")
    require_valid_start(contract)  # every call would be judged from a state it rejects
    by_budget = max_examples is None and time_budget is not None
    examples = UNBOUNDED if by_budget else (max_examples or DEFAULT_EXAMPLES)
    session = Session(contract, target, mode=mode, time_budget=time_budget, on_finding=on_finding)
    session.max_cases = None if by_budget else CASES_PER_EXAMPLE * examples + EXTRA_CASES
    if by_budget and session.stateful:  # its goals are planned beside a time budget's search only
        session.influence = influence.Coverage(session.contract)
    # with a database, let Hypothesis finish shrinking so that it saves the failing examples
    session.shrink_cases = shrink_cases if database is None else examples * 10
    if kinds is not None:
        unknown = sorted(set(kinds) - set(KINDS))
        if unknown:
            raise UsageError(
                f"unknown finding kind(s) {', '.join(unknown)}: expected some of {', '.join(KINDS)}"
            )
        # a hang and a memory exhaustion are crashes too, of the kind an isolated target reports
        session.kinds = frozenset(kinds) | (SLOW_KINDS if "crash" in kinds else frozenset())
    state_graph = (
        StateGraph(
            session.contract,
            HANG_GUARD if time_budget is None else min(GRAPH_TIMEOUT, max(1.0, time_budget * 0.2)),
        )
        if graph
        else None
    )
    rounds = searched = 0
    length = steps  # steps per case this round: doubled each time cases stop finding new states
    minimized: set[Key] = set()
    if time_budget is not None:  # minimizing never runs past the grace period
        session.minimize_deadline = session.started + time_budget + grace(time_budget)
    session.searching = True
    if session.stateful:
        session.reach_at = (
            (time_budget * PLAN_AT, None)
            if time_budget is not None and by_budget
            else (None, int(examples * REACH_SHARE))
        )
    try:
        while True:
            # a later round gets the examples the earlier ones did not search (the cases that
            # shrank a finding do not count), all of them under a budget
            left = examples if by_budget else max(examples - searched, 1)
            start = session.round_start = session.test_cases
            session.publish()
            session.may_lengthen = session.stateful and length < steps * LONGER
            config = run_settings(left, database, multiple=multiple, steps=length)
            before = len(session.findings.by_key)
            _run_round(
                session,
                config,
                seed if rounds == 0 else _round_seed(seed, rounds),
                database,
                build_machine if engine == "rules" else None,
                fast_test,
                length,
            )
            rounds += 1
            searched += (session.first_case if session.first_case is not None else session.test_cases) - start
            paused = session.round_over or session.epoch_over  # stopped for the solver or the corpus
            session.epoch_over = False
            if session.stale:
                session.stale = False
                paused = True
                length = min(length * 2, steps * LONGER)
            if session.round_over:
                session.round_over = False
                reach(session, time_budget, background=by_budget)
            session.adopt_prefixes()
            _minimize_new(session, minimized)
            session.known = frozenset(session.findings.by_key) | session.explained
            if session.stopped_by_budget or (not multiple and session.findings):
                break
            if not by_budget:
                # a round that found nothing new ran its examples out: the search is done
                if searched >= examples or (len(session.findings.by_key) == before and not paused):
                    break
                continue
            assert time_budget is not None
            if session.elapsed() >= time_budget:
                session.stopped_by_budget = True
                break
    finally:
        session.searching = False
        with contextlib.suppress(Exception):
            target.reset()
    if session.internal_error is not None:
        raise session.internal_error
    session.time_budget = None  # the search is over: replays must not stop it again
    _minimize_new(session, minimized)
    coverage = state_graph.coverage(session.abstraction, session.edges) if state_graph is not None else None
    first = min(session.findings.first_seen.values()) if session.findings.first_seen else None
    if session.stopped_by_budget:
        stopped_by = "time budget"
    elif not multiple and session.findings:
        stopped_by = "first finding"
    else:
        stopped_by = "max examples"
    return Summary(
        target=getattr(target, "spec", type(target).__name__),
        mode=mode,
        seed=seed,
        test_cases=session.test_cases,
        calls=session.calls,
        rejected=session.rejected,
        seconds=session.elapsed(),
        operations=tuple(session.contract.operations),
        operations_covered=tuple(op for op in session.contract.operations if op in session.ops_covered),
        edges_covered=coverage[0] if coverage is not None else len(session.edges),
        edges_total=coverage[1] if coverage is not None else None,
        findings=tuple(session.findings.all()),
        first_finding_seconds=first,
        stopped_by_budget=session.stopped_by_budget,
        stopped_by=stopped_by,
        outcomes=tuple(o for o in session.all_outcomes if o in session.outcomes),
        outcomes_total=session.all_outcomes,
        rounds=rounds,
        reached=session.reached,
    )


def _minimize_new(session: Session, done: set[Key]) -> None:
    """Shrink the findings not shrunk yet (``shrink.minimize``), as each round ends: a finding
    made early gets its shortest trace then, not in what is left of the budget at the end. A
    finding whose target state was already wrong at an earlier step, as a read shows
    (``shrink.explained``), gives way to that shorter finding: one wrong record, met again and
    again as the case goes on, is one finding, with the trace that shows it first. So does a
    wrong status that a clause the target does not check explains (``shrink.skipped``), and one
    that shrinks into the forbidden call accepted (``shrink.shows``) is reported as that. The
    reads and probes come first, after single-step deletions only: the finding they lead to is
    the one the costlier moves then go to, and it is explained in turn."""
    findings = session.findings
    pending = list(findings.by_key)
    while pending:
        finding_key = pending.pop(0)
        finding = findings.by_key.get(finding_key)
        if finding is None or finding_key in done or finding.kind in SLOW_KINDS:
            continue  # a hang waits out every replay
        done.add(finding_key)
        # the reads and probes first, on the trace with single steps left out: where they show
        # the state wrong earlier, the costlier moves go to that shorter finding instead
        quick = _floored(session, finding)
        earlier = explained(session, quick)
        if earlier is None:
            finding_key = _reported(session, finding_key, minimize(session, quick))
            earlier = explained(session, findings.by_key[finding_key])
        if earlier is None:
            continue
        session.explained.update((finding_key, quick.key))
        seen = findings.first_seen[finding_key]
        findings.discard(finding_key)
        if earlier.key not in findings.by_key:
            findings.add(earlier, seen)
            if earlier.key in done and earlier.key != finding_key:  # reported, then explained
                findings.by_key[earlier.key] = minimize(session, earlier)
            else:  # shrunk, and explained in turn, next (its own key only with a shorter trace)
                done.discard(earlier.key)
                pending.insert(0, earlier.key)
    for finding_key, finding in list(findings.by_key.items()):
        if skipped(session, finding) is not None:  # a clause not checked, shown shorter
            session.explained.add(finding_key)
            findings.discard(finding_key)


def _floored(session: Session, finding: Finding) -> Finding:
    """``deletions`` of ``finding``, given ``DELETIONS_FLOOR`` seconds where the grace period has
    less left: a run that found a bug in its last second reported a trace of 23 calls, the
    reads and the keys it never used among them, where the deletions alone take it to 8 (in 29
    replays, a tenth of a second)."""
    deadline = session.minimize_deadline
    if deadline is None:
        return deletions(session, finding)
    session.minimize_deadline = max(deadline, time.monotonic() + DELETIONS_FLOOR)
    try:
        return deletions(session, finding)
    finally:
        session.minimize_deadline = deadline


def _reported(session: Session, key: Key, shrunk: Finding) -> Key:
    """Report ``shrunk`` for the finding of ``key``; where it shrank into another key (a wrong
    status into the forbidden call accepted, ``shrink.shows``), under that one, the wrong status
    explained. The key it is reported under."""
    findings = session.findings
    if shrunk.key == key:
        findings.by_key[key] = shrunk
        return key
    session.explained.add(key)
    seen = findings.first_seen[key]
    findings.discard(key)
    findings.add(shrunk, seen)  # the shorter of the two where the run had that one too
    return shrunk.key


def reach(session: Session, time_budget: float | None, *, background: bool = False) -> None:
    """Plan prefixes to the clause outcomes no call has covered yet (``reach.py``): an operation
    never accepted, a ``requires`` never the one that refused (a counter never at its limit),
    for the rounds that follow; asked once per run. Beside a time budget's search, once those are
    planned, the influence goals the search has not met by then (``influence.py``): from the
    corpus's states first, where most are a write and a read away.

    In the ``background`` (a run bounded by its time budget), the search goes on while the solver
    plans, and each round starts with the prefixes found so far (``adopt_prefixes``): waiting
    for the solver cost a quarter of the budget on an idle machine, and most of it under load,
    where the worker gets a small share of a core. A run bounded by examples waits, so that the
    same seed plans the same prefixes for the same rounds."""
    from envfactory.fuzz.reach import COPY_UNITS, effort, goal_of, plan_apart

    session.reach_at = None
    session.goals = [
        (g, o)
        for o in session.all_outcomes
        if o not in session.outcomes and (g := goal_of(o, session.contract)) is not None
    ]
    goals = [g for g, _ in session.goals]
    # beside the search, the planner's core would idle once the outcomes are planned: it goes
    # on to the states where an earlier write decides a later clause, those the search has not
    # met by then (``influence.py``)
    influences = background and session.influence is not None and bool(session.influence.open)
    if not goals and not influences:
        return
    seconds = REACH_TIMEOUT if time_budget is None else min(REACH_TIMEOUT, time_budget * PLAN_SHARE)
    units = effort(seconds)
    # in a worker killed at a deadline, so that a run does not outlive its budget. The work is
    # bounded by units, not time, so the same seed plans the same prefixes on a loaded machine
    # (the deadline is a guard, well past what the effort takes); each prefix is reported as it
    # is found, so the ones found before a deadline are kept. A run bounded by examples waits
    # for the planner, so the encoding of its steps is charged too; beside a time budget's
    # search, the planner's core would otherwise idle, and the deadline bounds the encoding
    contract = session.contract
    found = session.planned

    def later() -> list[Goal]:
        if session.influence is None:
            return []
        pending = session.influence.pending()
        session.goals = [*session.goals, *((g, influence.name(g)) for g in pending)]
        return list(pending)

    def work() -> None:
        try:
            plan_apart(
                contract,
                goals,
                effort=units,
                seconds=HANG_GUARD if time_budget is None else seconds * REACH_GUARD,
                report=found.append,
                starts=lambda: relay_starts(session),
                per_copy=0 if background else COPY_UNITS,
                then=later if influences else None,
            )
        except Exception as err:  # raised where the run adopts what was planned
            session.planning_error = err

    if not background:
        work()
        session.adopt_prefixes()
        return
    # the worker is forked from this thread; what it imports is loaded here first, so that no
    # lock another thread holds is copied into it
    import envfactory.solver.bmc
    import envfactory.solver.states  # noqa: F401

    session.planning = threading.Thread(target=work, name="envfactory-reach", daemon=True)
    session.planning.start()


def relay_starts(session: Session) -> list[Start]:
    """The states the relay planner may start from (``reach.relay``): the corpus entries' (the
    model's states as the target's responses made them, ids it assigned included), the rarest
    first, up to ``RELAY_STARTS``, each with no collection past ``RELAY_RECORDS`` records
    (every record is a slot in each of the unrolling's states)."""
    starts: list[Start] = []
    for entry, state in session.corpus.rarest():
        if all(len(state.get(name) or ()) <= RELAY_RECORDS for name in session.collections):
            starts.append((entry, state))
            if len(starts) == RELAY_STARTS:
                break
    return starts


def _round_seed(seed: int, round_number: int) -> int:
    """The seed of a later round: a fixed function of the run's seed, so runs stay repeatable."""
    digest = hashlib.sha256(f"envfactory-round:{seed}:{round_number}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _run_round(
    session: Session,
    config: settings,
    seed: int,
    database: str | None,
    build_machine: Callable[[Session], Any] | None,
    fast_test: Callable[[Session, int], Any],
    steps: int,
) -> None:
    """One Hypothesis run: it ends at its example limit, after shrinking what it found, or when
    the session stops it (the budget, the shrinking cap)."""
    session.first_case = None
    session.slow_finding = False
    session.stopped = False
    contract, target = session.contract, session.target
    if build_machine is not None:
        machine_class: Any = build_machine(session)
        machine_class._hypothesis_internal_use_seed = seed
        test = get_state_machine_test(machine_class, settings=config)
        engine = "rules"
    else:
        test = config(fast_test(session, steps))
        engine = "fast"
    key = f"envfactory-fuzz:{contract.path}:{getattr(target, 'spec', '')}:{session.mode}:{engine}"
    seed_test(test, seed, hashlib.sha256(key.encode()).digest() if database else None)
    try:
        with (
            pinned_constants(*[f for f in (getattr(target, "factory", None),) if f is not None]),
            steady_search(),
        ):
            test()
    except StopRun:
        pass
    except Exception as err:
        # a run we stopped mid-test (Hypothesis may then report the cut-short case as flaky),
        # or one that ended with our findings, is a normal end; so is an error raised inside
        # Hypothesis's own engine (seen on Twilio's and Box's documents: ValueError "66 is not in
        # list" ranking a recorded string while shrinking), which ends the round, not the run
        if not session.stopped and not (session.findings and _only_findings(err)) and not _from_engine(err):
            raise


def _from_engine(err: BaseException) -> bool:
    """Whether ``err`` was raised inside ``hypothesis.internal`` (not by our code or the target)."""
    tb = err.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    return last is not None and f"hypothesis{os.sep}internal{os.sep}" in last.tb_frame.f_code.co_filename


def _only_findings(err: BaseException) -> bool:
    """Whether Hypothesis ended with our findings (alone or grouped, or as a flaky replay), or
    with none of its cases valid: each met a finding an earlier round reported, which
    ``Session.found`` rejects (a target that answers every call wrong)."""
    if isinstance(err, FindingError | StopRun | Unsatisfiable):
        return True
    inner = getattr(err, "exceptions", None)
    if inner:
        return all(_only_findings(e) for e in inner)
    name = type(err).__name__
    return name in ("Flaky", "FlakyFailure", "FlakyReplay", "DeadlineExceeded")
