"""Steering that builds deep states: two different keys where a clause wants them apart, no
"threshold" draw that makes them equal, swarm and focused cases, and the solver's prefixes to
clause outcomes never covered (a counter exactly at its limit)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.fuzz import machine, oracle
from envfactory.fuzz.draws import Source
from envfactory.fuzz.machine import Case, plans
from envfactory.fuzz.reach import Route, goal_of, plan
from envfactory.fuzz.runner import Session, clause_outcomes, fuzz
from envfactory.fuzz.steering import Steer, crowds, distinct_keys, key_fields
from envfactory.fuzz.targets import open_target

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_sources import Seeded

IMPLS = Path(__file__).resolve().parent / "impls"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts
DEPOT = envfactory.load(IMPLS / "depot.yaml")
LEDGER = envfactory.load(IMPLS / "ledger.yaml")

COUNTER = """\
envfactory: "1"
info: {title: Counter, version: "1"}
state:
  n: {type: integer, initial: 0}
  open: {type: boolean, initial: true}
operations:
  inc:
    input: {type: object, additionalProperties: false}
    requires:
      - {check: open, error: {status: 423}}
      - {check: 'n < 3', error: {status: 429}}
    effects: [n = n + 1]
  shut:
    input: {type: object, additionalProperties: false}
    requires: [open]
    effects: [open = false]
"""


def test_an_operation_that_wants_two_different_keys_needs_two() -> None:
    move = DEPOT.operations["move"]
    assert distinct_keys(move, key_fields(move, DEPOT)) == ("bins",)
    transfer = LEDGER.operations["transfer"]
    assert distinct_keys(transfer, key_fields(transfer, LEDGER)) == ("accounts",)
    stock = DEPOT.operations["stock"]
    assert distinct_keys(stock, key_fields(stock, DEPOT)) == ()
    steer = Steer.of(move, DEPOT)
    bin = {"qty": 1, "cap": 2, "locked": False, "moves": 0}
    assert not steer.possible({"bins": {"a": bin}})
    assert steer.possible({"bins": {"a": bin, "b": bin}})
    # the clause relating the two keys is no threshold to draw at: its bound is the refused value
    assert [t.apart for t in steer.thresholds if t.field in ("src", "dst")] == [True, True]


def _session(contract: envfactory.Contract, cls: str) -> Session:
    name = Path(str(contract.path)).stem
    target = open_target(f"python:{IMPLS / f'{name}_impl.py'}:{cls}", contract)
    return Session(contract, target, mode="adversarial", time_budget=None)


DEPOT_SESSION = _session(DEPOT, "Depot")
DEPOT_PLANS = {p.name: p for p in plans(DEPOT_SESSION)}


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(st.data())
def test_a_valid_draw_names_two_different_bins(data: st.DataObject) -> None:
    case = Case(DEPOT_SESSION, replay=True)
    for name in ("a", "b", "c"):
        case.send(DEPOT.operations["addBin"], {"name": name, "cap": 5})
    value = case.draw(DEPOT_PLANS["move"], Source(data), breaking=False)
    if {value["src"], value["dst"]} <= {"a", "b", "c"}:  # two live bins (not a drawn name)
        assert value["src"] != value["dst"]


def _repeats(focus: bool) -> float:
    """The share of draws naming the bin the draw before named, among four bins."""
    src: Any = Seeded(1)
    case = Case(DEPOT_SESSION, replay=True)
    for name in ("a", "b", "c", "d"):
        case.send(DEPOT.operations["addBin"], {"name": name, "cap": 5})
    case.focus = focus
    names = [case.draw(DEPOT_PLANS[op], src, breaking=False)["name"] for op in ["peek", "lock"] * 200]
    return sum(a == b for a, b in itertools.pairwise(names)) / (len(names) - 1)


def test_a_focused_case_calls_one_resource_again_and_again() -> None:
    assert _repeats(focus=True) > 0.7  # three in four, and the other draws now and then
    assert _repeats(focus=False) < 0.5


def test_swarm_cases_leave_operations_out_and_all_stay_callable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A seeded run: some cases prefer a subset of the operations, and still every operation is
    accepted somewhere in the run."""
    seen: list[frozenset[str]] = []
    original = machine.Case.valid

    def valid(self: Case, plan: machine.OpPlan, src: Source, aim: Any = None, held: Any = None) -> None:
        seen.append(self.off)
        original(self, plan, src, aim, held)

    monkeypatch.setattr(machine.Case, "valid", valid)
    target = open_target(f"python:{IMPLS / 'depot_impl.py'}:Depot", DEPOT)
    try:
        summary = fuzz(DEPOT, target, seed=3, max_examples=150)
    finally:
        target.close()
    assert any(seen) and not all(seen)
    assert set(summary.operations_covered) == set(DEPOT.operations)


def test_the_solver_plans_to_a_counter_exactly_at_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "counter.yaml"
    path.write_text(COUNTER)
    contract = envfactory.load(path)
    goals = [g for o in clause_outcomes(contract) if (g := goal_of(o)) is not None]
    assert ("inc", 1) in goals and ("inc", None) in goals
    found = plan(contract, [("inc", 1), ("inc", 0)], effort=10**9)
    # the limit: three increments, then the one the second clause refuses; closed: one call
    assert [r.operations for r in found] == [("shut", "inc"), ("inc", "inc", "inc", "inc")]
    assert [r.refused for r in found] == [True, True] and found[1].inputs == ({},) * 4
    assert goal_of("inc: input schema fails") is None


LEDGER_SESSION = _session(LEDGER, "Ledger")
LEDGER_PLANS = {p.name: p for p in plans(LEDGER_SESSION)}


def test_a_delete_knows_its_collection_and_a_producer_of_it_has_a_made_again_outcome() -> None:
    assert Steer.of(LEDGER.operations["close"], LEDGER).deletes == frozenset({"accounts"})
    assert Steer.of(LEDGER.operations["deposit"], LEDGER).deletes == frozenset()
    outcomes = clause_outcomes(LEDGER)
    assert "open: accepted on a key made again" in outcomes
    # nothing deletes a depot order: no order is ever made again
    assert not any(o.startswith("placeOrder") and "again" in o for o in clause_outcomes(DEPOT))


def _ledger_case(*calls: tuple[str, dict[str, Any]]) -> Case:
    case = Case(LEDGER_SESSION, replay=True)
    for name, value in calls:
        case.send(LEDGER.operations[name], value)
    return case


def test_a_delete_names_the_key_with_the_longest_history_half_the_time() -> None:
    """Of three accounts, ``b`` took a deposit and a withdrawal of it all, ``c`` a deposit it
    still holds: a ``close`` draw names ``b`` about half the time, the longest history of the
    accounts the close accepts (``c``, with a balance left, would be refused: a course still
    holding students is not the one whose removal shows what a course made again remembers)."""
    case = _ledger_case(
        *[("open", {"name": n}) for n in "abc"],
        ("deposit", {"name": "b", "amount": 5}),
        ("withdraw", {"name": "b", "amount": 5}),
        ("deposit", {"name": "c", "amount": 5}),
    )
    assert case.history[("accounts", "b")] == 2 and case.history[("accounts", "a")] == 0
    src: Any = Seeded(2)
    names = [case.draw(LEDGER_PLANS["close"], src, breaking=False)["name"] for _ in range(400)]
    assert names.count("b") / len(names) > 0.45
    assert names.count("c") / len(names) < 0.2  # a fitting key three draws in four
    # an operation that deletes nothing draws its live key as before: b is no favourite
    names = [case.draw(LEDGER_PLANS["withdraw"], src, breaking=False)["name"] for _ in range(400)]
    assert names.count("b") / len(names) < 0.45


def test_a_key_made_again_after_a_history_is_an_outcome_and_a_corpus_entry() -> None:
    session = _session(LEDGER, "Ledger")
    case = Case(session, replay=False)
    calls = [
        ("open", {"name": "a"}),
        ("deposit", {"name": "a", "amount": 5}),
        ("withdraw", {"name": "a", "amount": 5}),
        ("close", {"name": "a"}),
    ]
    for name, value in calls:
        case.send(LEDGER.operations[name], value)
    entries = len(session.corpus.entries)
    assert "open: accepted on a key made again" not in session.outcomes
    case.send(LEDGER.operations["open"], {"name": "a"})
    assert "open: accepted on a key made again" in session.outcomes
    assert ("remade", "accounts", 2) in session.corpus.seen
    assert session.corpus.entries[entries:] == [(*calls, ("open", {"name": "a"}))]
    assert case.history[("accounts", "a")] == 0  # the new record's history starts again


@pytest.mark.parametrize("engine", ["rules", "fast"])
def test_an_error_of_the_fuzzers_own_step_code_ends_the_run(
    monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """A bug in the fuzzer's step code (here: from the fourth step of any case on) is raised at
    the end of the run, never a quiet summary with fewer cases. Before, the rule-based engine's
    replay of the failing case was flaky (the steering had moved on) and the round ended
    without a word."""
    from envfactory.fuzz.runner import fuzz
    from envfactory.fuzz.targets import open_target

    contract = envfactory.load(Path(__file__).resolve().parents[2] / "examples" / "bank" / "bank.yaml")
    real = machine.Case.step

    def broken(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(self.steps) >= 3:
            raise ValueError("max() arg is an empty sequence")
        real(self, *args, **kwargs)

    monkeypatch.setattr(machine.Case, "step", broken)
    with pytest.raises(ValueError, match="empty sequence"):
        fuzz(contract, open_target("sim", contract), seed=1, max_examples=50, engine=engine)


def test_a_run_with_a_time_budget_searches_on_while_the_solver_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the background, ``reach`` returns at once and each round takes the prefixes planned so
    far; without it (a run bounded by examples) it waits for the plan. The worker is stood in for
    by one that reports a prefix and then waits for the test's word."""
    import threading

    from envfactory.fuzz import influence, runner
    from envfactory.solver import deadline

    go = threading.Event()
    workers: list[Any] = []

    def worker(task: Any, seconds: float, *, progress: Any, collect: bool = True) -> None:
        workers.append(task)
        if len(workers) not in (1, 7):
            return  # the relays and the influence goals' planner (beside the search): nothing
        progress(Route(("open", "close"), refused=True, goal=("close", 1)))
        assert go.wait(60)  # a hang guard: the test releases it
        progress(Route(("open", "deposit")))

    monkeypatch.setattr(deadline, "bounded", worker)
    session = _session(LEDGER, "Ledger")
    session.influence = influence.Coverage(session.contract)  # as ``fuzz`` makes it under a budget
    runner.reach(session, 20.0, background=True)
    assert session.planning is not None and session.planning.is_alive()
    for _ in range(6000):  # the first prefix is on its way (a thread switch; a hang guard)
        if session.planned:
            break
        session.planning.join(0.01)
    session.adopt_prefixes()
    assert [r.operations for r in session.prefixes] == [("open", "close")] and session.reached == (
        "close: requires 2 fails",
    )
    go.set()
    session.planning.join(60)
    session.adopt_prefixes()
    assert [r.operations for r in session.prefixes] == [("open", "close"), ("open", "deposit")]
    # the planner's up to its stepping stones, and its relays on from them; the relays of the
    # outcomes and of the influence goals left; the planner's past the stones; the influence
    # goals' planner (none of the ledger's influence goals is on a read kept as a copy, and none
    # of its outcomes is a mutant's refusal: those phases are not run)
    assert len(workers) == 6
    waited = _session(LEDGER, "Ledger")
    runner.reach(waited, None)
    assert waited.planning is None and len(workers) == 8  # the planner's, then the relay's
    assert [r.operations for r in waited.prefixes] == [("open", "close"), ("open", "deposit")]


FLEET = envfactory.load(IMPLS / "fleet.yaml")


def _found(session: Session, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    """The finding ``calls`` end in (the last call shows it), recorded in the session."""
    from envfactory.fuzz.findings import FindingError

    case = Case(session, replay=True)
    with pytest.raises(FindingError) as err:
        for name, value in calls:
            case.send(FLEET.operations[name], value)
    session.findings.add(err.value.finding)
    return err.value.finding


REMADE = [("addDriver", {"name": "p"}), ("strike", {"name": "p"}), ("strike", {"name": "p"})]
REMADE += [("removeDriver", {"name": "p"}), ("addDriver", {"name": "p"})]
THREE_OUT = [
    *[("addCar", {"plate": c}) for c in "xyz"],
    ("addDriver", {"name": "a"}),
    ("addDriver", {"name": "b"}),
]
THREE_OUT += [("rent", {"plate": c, "driver": d}) for c, d in zip("xyz", "aab", strict=True)]


@pytest.mark.filterwarnings("ignore:Using `reject` outside a property-based test")  # found() by hand
def test_a_later_finding_of_a_record_already_wrong_gives_way_to_the_first() -> None:
    """A driver made again keeps a banned one's strikes: a read shows it in 6 calls. With three
    cars out, the remade driver's rent is refused with the wrong status (423 for 429): 15
    calls, and no shorter trace shows that. A read after the remake shows the record wrong, so
    the 15-call finding gives way to the 6-call one. The ban list that holds one driver is wrong
    where no read shows it: its 15-call finding stays."""
    from envfactory.fuzz.runner import _minimize_new
    from envfactory.fuzz.shrink import explained

    session = _session(FLEET, "BannedComesBack")
    plans(session)
    first = _found(session, [*REMADE, ("driverInfo", {"name": "p"})])
    assert (first.operation, first.kind, len(first.steps)) == ("driverInfo", "postcondition", 6)
    later = _found(
        session, [*THREE_OUT, *REMADE, ("addCar", {"plate": "w"}), ("rent", {"plate": "w", "driver": "p"})]
    )
    assert (later.operation, later.kind, len(later.steps)) == ("rent", "wrong_status", 15)
    assert explained(session, later) == first
    done = {first.key}
    _minimize_new(session, done)
    assert session.findings.all() == [first] and session.explained == {later.key}
    # met again in a later round, it ends the case quietly and stays out of the report
    from hypothesis.errors import UnsatisfiedAssumption

    session.known = frozenset(session.findings.by_key) | session.explained
    session.searching = True
    with pytest.raises(UnsatisfiedAssumption):
        session.found(later)
    assert session.findings.all() == [first]

    banned = _session(FLEET, "TwoBanned")
    plans(banned)
    strikes = [("strike", {"name": n}) for n in "aacc"]
    stays = _found(
        banned,
        [
            *THREE_OUT,
            ("addDriver", {"name": "c"}),
            *strikes,
            ("addCar", {"plate": "w"}),
            ("rent", {"plate": "w", "driver": "a"}),
        ],
    )
    assert (stays.kind, len(stays.steps)) == ("wrong_status", 15)
    assert explained(banned, stays) is None


REVIEWS = envfactory.load(IMPLS / "reviews.yaml")


def test_an_operation_whose_state_only_requires_fail_is_not_preferred() -> None:
    """Whether someone is logged in decides login and logout whatever their input: the one the
    session refuses is not offered as enabled (each is still called as any operation is)."""
    login, logout = (
        Steer.of(REVIEWS.operations["login"], REVIEWS),
        Steer.of(REVIEWS.operations["logout"], REVIEWS),
    )
    session = _session(REVIEWS, "Reviews")
    users = session.initial["users"].insert("a", {"admin": False, "merged": 0})
    nobody = session.initial.insert("users", users)
    someone = nobody.insert("session", "a")
    assert login.possible(nobody) and not logout.possible(nobody)
    assert logout.possible(someone) and not login.possible(someone)


def test_a_string_a_clause_tests_a_prefix_of_is_drawn_now_and_then() -> None:
    """Only a branch named ``release/...`` needs an admin to merge, and only a ``...-wip`` one
    stays a draft: the clauses test the record's field, filled by openPull's input calls before.
    Both strings are in every case's pool of values, so string fields take them now and then."""
    session = _session(REVIEWS, "Reviews")
    plan = {p.name: p for p in plans(session)}["openPull"]
    src: Any = Seeded(3)
    case = Case(session, replay=True)
    branches = [case.draw(plan, src, breaking=False).get("branch") for _ in range(300)]
    assert any(b == "release/" for b in branches) and any(b == "-wip" for b in branches)


def test_a_login_names_a_user_the_records_hold_half_the_time() -> None:
    """Who is logged in decides which calls pass (``session in pulls[n].reviewers``): a login
    names, one draw in two, a user a pull request holds as author or reviewer, or an admin."""
    session = _session(REVIEWS, "Reviews")
    login = {p.name: p for p in plans(session)}["login"]
    case = Case(session, replay=True)
    for name in "abcdef":
        case.send(REVIEWS.operations["signup"], {"name": name, "admin": name == "e"})
    case.send(REVIEWS.operations["login"], {"name": "a"})
    case.send(REVIEWS.operations["openPull"], {"branch": "x"})
    case.send(REVIEWS.operations["requestReview"], {"number": 1, "reviewer": "b"})
    case.send(REVIEWS.operations["logout"], {})
    src: Any = Seeded(5)
    names = [case.draw(login, src, breaking=False)["name"] for _ in range(600)]
    held = sum(n in "abe" for n in names) / len(names)
    assert held > 0.6  # a random user of six is one of the three half as often
    assert set("abcdef") <= set(names)  # every user is still logged in now and then


def test_a_live_key_is_mostly_one_whose_record_the_requires_accept() -> None:
    """Of the auction's three lots, only ``a`` takes bids: ``x`` is a draft and ``y``'s bidding
    has ended. The requires that read ``input.lot`` alone say so, and a bid names ``a`` three
    times in four (then any live key: one in four), plus its share of the other draws;
    ``bidder``, which those clauses compare with another field, has no such test."""
    contract = envfactory.load(IMPLS / "auction.yaml")
    session = _session(contract, "Auction")
    bid = {p.name: p for p in plans(session)}["bid"]
    assert {field for field, _ in bid.steer.fits} == {"lot"}
    case = Case(session, replay=True)
    calls = [
        *[("join", {"name": n}) for n in "sb"],
        *[("create", {"lot": lot, "seller": "s"}) for lot in "axy"],
        ("open", {"lot": "y", "rounds": 1}),
        ("tick", {}),
        ("open", {"lot": "a"}),
    ]
    for name, value in calls:
        case.send(contract.operations[name], value)
    assert bid.steer.fitting("lot", case.state, ["a", "x", "y"]) == ["a"]
    src: Any = Seeded(3)
    lots = [case.draw(bid, src, breaking=False)["lot"] for _ in range(400)]
    # a live key six times in eight: ``a`` 3/4 * 6/8 + 1/4 * 6/8 * 1/3, against 6/8 * 1/3
    assert 0.55 < lots.count("a") / len(lots) < 0.75
    assert lots.count("x") + lots.count("y") > 40  # one draw in four takes any live key


def test_a_key_field_no_requires_tests_alone_is_drawn_across_every_live_key() -> None:
    """``bidder`` has no requires of its own (``fitting`` says None): a bid's bidder is any of
    twenty users, the oldest as often as the newest, not only the newest ``FITS`` of them."""
    contract = envfactory.load(IMPLS / "auction.yaml")
    session = _session(contract, "Auction")
    bid = {p.name: p for p in plans(session)}["bid"]
    case = Case(session, replay=True)
    users = [f"u{i:02}" for i in range(20)]
    for name in ["s", *users]:
        case.send(contract.operations["join"], {"name": name})
    case.send(contract.operations["create"], {"lot": "a", "seller": "s"})
    case.send(contract.operations["open"], {"lot": "a"})
    assert bid.steer.fitting("bidder", case.state, users) is None
    src: Any = Seeded(6)
    bidders = [case.draw(bid, src, breaking=False)["bidder"] for _ in range(2000)]
    oldest = sum(bidders.count(u) for u in users[:4])
    # a live key six draws in eight, one of 21 users each: the four oldest about 230 times
    # (when only the newest 16 were tested, about 60: the fourth draw alone reached them)
    assert oldest > 150


def test_corpus_entries_weigh_by_how_seldom_their_news_came_back() -> None:
    """An entry weighs one over how many calls showed each feature it showed first: the clock at
    1 seen once outweighs the clock at 0 seen ten times, and a case starts from it by that weight
    half the time (any entry the other half)."""
    from envfactory.fuzz.corpus import Corpus

    contract = envfactory.load(IMPLS / "auction.yaml")
    corpus = Corpus(contract)
    corpus.novel({"clock": 0, "lots": {}}, ["clock", "lots"])  # the initial state, as a run's
    assert corpus.novel({"clock": 7}, ["clock"])
    corpus.add([("tick", {"rounds": 3}), ("tick", {"rounds": 3}), ("tick", {})], {"clock": 7, "lots": {}})
    assert corpus.novel({"clock": 9}, ["clock"])
    corpus.add([("tick", {"rounds": 3})] * 3, {"clock": 9, "lots": {}})
    for _ in range(9):
        assert not corpus.novel({"clock": 7}, ["clock"])
    assert corpus.rarity() == pytest.approx((1.0, 1.1))  # newest first
    session = _session(contract, "Auction")
    session.rarity = corpus.rarity()
    case = Case(session, replay=True)
    src: Any = Seeded(4)
    newest = sum(case._entry(src, 2) == 0 for _ in range(1000)) / 1000
    assert 0.65 < newest < 0.8  # 1/2 * 1/2 + 1/2 * 1/1.1, against 1/2 uniformly


class Odds(Seeded):
    """Takes every choice of ``n`` options whose odds are one in ``n`` (the last option), and
    the first option of every other choice."""

    def __init__(self, n: int) -> None:
        super().__init__(0)
        self.n = n

    def index(self, n: int) -> int:
        return n - 1 if n == self.n else 0

    def boolean(self, p: float = 0.5) -> bool:
        return False


class Simplest(Odds):
    """The simplest of every choice, as Hypothesis's first cases of a run extend a prefix."""

    def __init__(self) -> None:
        super().__init__(0)


def _simplest_steps(monkeypatch: pytest.MonkeyPatch, entry: tuple[tuple[str, Any], ...]) -> Case:
    """A depot case of simplest choices that starts from ``entry`` (the corpus's only entry) and
    takes two steps past it."""
    monkeypatch.setattr(DEPOT_SESSION, "published", (entry,))
    monkeypatch.setattr(DEPOT_SESSION, "rarity", (1.0,))
    case = Case(DEPOT_SESSION, replay=True)
    src: Any = Simplest()
    for _ in range(2):
        case.step(list(DEPOT_PLANS.values()), src)
    return case


def test_the_simplest_choice_of_operation_repeats_the_step_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """A case of simplest choices that starts from a corpus entry goes on with the entry's last
    operation (one more stock of the bin: filling it, at the threshold), and then with that again
    (refused now: the bin is full), not with the first operation enabled (``addBin``) twenty
    times over."""
    case = _simplest_steps(
        monkeypatch, (("addBin", {"name": "a", "cap": 5}), ("stock", {"name": "a", "qty": 1}))
    )
    assert [s.tool for s in case.steps[2:]] == ["stock", "stock"]
    assert case.steps[2].status == 200 and case.steps[3].status >= 400
    assert case.state["bins"]["a"]["qty"] == 5
    assert next(iter(DEPOT_PLANS)) == "addBin"  # what the simplest choice was before


def test_the_simplest_choice_after_a_read_walks_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A read is not made again by the simplest choice (the same state read twice shows
    nothing): it hands over to the next operation the state prefers in the contract's order
    (``status`` wants an order there is none of: round to ``addBin``); a change the case saw
    refused (a bin of no capacity) is not preferred, and the walk goes on to ``removeBin``."""
    case = _simplest_steps(monkeypatch, (("addBin", {"name": "a", "cap": 5}), ("peek", {"name": "a"})))
    assert [s.tool for s in case.steps] == ["addBin", "peek", "addBin", "removeBin"]
    assert case.steps[2].status == 422 and case.steps[3].status == 200


RELEASES = """\
envfactory: "1"
info: {title: Releases, version: "1"}
state:
  users:
    collection:
      key: {type: string}
      value: {type: object, properties: {admin: {type: boolean}}, required: [admin]}
  session: {type: [string, "null"], initial: null}
  shipped: {type: integer, initial: 0}
operations:
  signup:
    input:
      type: object
      properties: {name: {type: string}, admin: {type: boolean}}
      required: [name, admin]
    requires: ['not (input.name in users)']
    effects: ['users[input.name] = {"admin": input.admin}']
  login:
    input: {type: object, properties: {name: {type: string}}, required: [name]}
    requires: ['session == null', 'input.name in users']
    effects: [session = input.name]
  ship:
    input: {type: object, properties: {tag: {type: string}}, required: [tag]}
    requires: ['session != null', 'input.tag.startswith("v2.")', 'users[session].admin']
    effects: [shipped = shipped + 1]
"""


def test_a_planned_route_carries_the_inputs_that_meet_its_goal(tmp_path: Path) -> None:
    """The operations alone say "sign up, log in, ship"; the inputs say who (the admin, or for
    the refusal one who is not) and which tag (one that starts with ``v2.``). Followed with its
    inputs, a route makes exactly the call it was planned for; with inputs drawn again, the
    login is rarely the user it needs and the tag never has the prefix."""
    from envfactory.solver.bmc import replay

    path = tmp_path / "releases.yaml"
    path.write_text(RELEASES)
    contract = envfactory.load(path)
    refused, shipped = plan(contract, [("ship", None), ("ship", 2)], effort=10**9)  # refusal first
    assert shipped.operations == refused.operations == ("signup", "login", "ship")
    assert (
        replay(
            contract,
            [(op, value, None, False) for op, value in zip(shipped.operations, shipped.inputs, strict=True)],
        ).failure
        is None
    )
    calls = [(op, value, None, False) for op, value in zip(refused.operations, refused.inputs, strict=True)]
    failed = replay(contract, calls)
    assert refused.refused and failed.failed_step == 2
    assert failed.failure is not None and failed.failure.clause == contract.operations["ship"].requires[2]
    session = Session(contract, open_target("sim", contract), mode="adversarial", time_budget=None)
    for route in (shipped, refused):
        case = Case(session, replay=True)
        case.follow(plans(session), route, Simplest())  # the simplest choice: the planned inputs
        assert [s.input for s in case.steps] == list(route.inputs)
        assert [s.status < 400 for s in case.steps] == [True, True, not route.refused]


def test_a_producer_has_room_for_the_keys_a_counted_limit_needs() -> None:
    """The auction's open counts a seller's live lots against 3 (``< 3``): three live, the
    fourth refused, and one more in another state (a draft cancelled beside them) make five, so
    ``create`` stays preferred up to five lots where four is the rule; the review board's quota
    of four pull requests makes six. A contract with no counted limit keeps the rule."""
    auction = envfactory.load(IMPLS / "auction.yaml")
    assert crowds(auction) == {"lots": 5}
    assert crowds(envfactory.load(IMPLS / "reviews.yaml")) == {"pulls": 6}
    assert crowds(LEDGER) == {}
    create = Steer.of(auction.operations["create"], auction, crowds(auction))
    users = {"s": {"funds": 0, "won": 0}}
    assert create.possible({"users": users, "lots": {key: {} for key in "abcd"}})
    assert not create.possible({"users": users, "lots": {key: {} for key in "abcde"}})
    plain = Steer.of(auction.operations["create"], auction)
    assert not plain.possible({"users": users, "lots": {key: {} for key in "abcd"}})


COURIER = envfactory.load(IMPLS / "courier.yaml")


def _courier_case(target: str = "Courier") -> tuple[Case, dict[str, machine.OpPlan]]:
    """A courier network with hubs a, b and c linked a to b to c, and customer s."""
    session = _session(COURIER, target)
    case = Case(session, replay=True)
    ops = COURIER.operations
    case.send(ops["signup"], {"name": "s"})
    for name in ("a", "b", "c"):
        case.send(ops["addHub"], {"name": name})
    case.send(ops["link"], {"hub": "a", "to": "b"})
    case.send(ops["link"], {"hub": "b", "to": "c"})
    return case, {p.name: p for p in plans(session)}


def test_a_key_field_the_input_may_leave_out_is_left_out_now_and_then() -> None:
    """``link`` without ``to`` unlinks a hub; ``resend`` without ``to`` keeps the destination.
    A key field the schema does not require is left out about one draw in two (as the schema's
    generator leaves out any other optional field), and mostly names a live hub when it is there:
    a steered draw that always filled it in never unlinked a hub."""
    case, by_name = _courier_case()
    src: Any = Seeded(7)
    links = [case.draw(by_name["link"], src, breaking=False) for _ in range(400)]
    unlinks = [value for value in links if "to" not in value]
    assert 140 < len(unlinks) < 260
    named = [value["to"] for value in links if "to" in value]
    assert sum(to in ("a", "b", "c") for to in named) > 0.8 * len(named)  # live six times in eight
    live = [value for value in unlinks if value["hub"] in ("a", "b", "c")]
    assert {value["hub"] for value in live} == {"a", "b", "c"}
    link = COURIER.operations["link"]
    assert all(oracle.judge(case.session.model, case.state, link, value).accepted for value in live)


def test_a_probe_sends_again_a_call_a_later_call_disabled() -> None:
    """A send from a to c (two hops, through b) is accepted; b is unlinked. The call the unlink
    disabled is the probe: the same send again, with a parcel name not used yet, which the
    route clause now refuses. An implementation that keeps each hub's routes in a store of its
    own, and refreshes only the unlinked hub's, lets it go: ``StaleRoutes``, found on the spot."""
    from envfactory.fuzz.findings import FindingError

    ops = COURIER.operations
    for target in ("Courier", "StaleRoutes"):
        case, by_name = _courier_case(target)
        case.send(ops["send"], {"parcel": "p", "sender": "s", "hub": "a", "to": "c"})
        case.send(ops["link"], {"hub": "b"})
        src: Any = Seeded(3)
        if target == "Courier":
            assert case._turned(list(by_name.values()), src)
            last = case.steps[-1]
            assert (last.tool, last.input["hub"], last.input["to"]) == ("send", "a", "c")
            assert last.input["parcel"] not in ("p", "")
            assert last.status == 424  # no route in two hops, as the contract says
        else:
            with pytest.raises(FindingError) as raised:
                case._turned(list(by_name.values()), src)
            finding = raised.value.finding
            assert finding.kind == "forbidden_accepted" and finding.operation == "send"


def test_a_case_that_follows_a_planned_route_reads_its_goal_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A case that starts on a planned route does not replay a corpus entry on top of it (the
    entry was recorded from the initial state and would go elsewhere): the step after the
    route's last call reads back what that call changed."""
    session = _session(COURIER, "Courier")
    route = Route(
        ("signup", "addHub", "addHub", "link"),
        ({"name": "s"}, {"name": "a"}, {"name": "b"}, {"hub": "a", "to": "b"}),
    )
    monkeypatch.setattr(session, "prefixes", [route])
    monkeypatch.setattr(session, "published", ((("signup", {"name": "t"}), ("addHub", {"name": "z"})),))
    monkeypatch.setattr(session, "rarity", (1.0,))
    case = Case(session)
    by_name = {p.name: p for p in plans(session)}
    case.step(list(by_name.values()), Odds(2))  # the prefix taken, the route's inputs, the read
    calls = [(s.tool, s.input) for s in case.steps]
    assert calls[:4] == list(zip(route.operations, route.inputs, strict=True))
    assert [tool for tool, _ in calls[4:]] == ["hub"] and calls[4][1]["name"] == "a"


def test_a_planned_route_names_the_same_operations_whatever_z3_was_asked_before() -> None:
    """Z3's model depends on what else the process asked it (the same goals planned twice came
    out as ``addBook, join, borrow`` and ``join, addBook, borrow``); the route takes, of the
    shortest plans, the one whose operations come first in the contract's order, so the same
    seed makes the same calls after another test or a notebook cell."""
    import z3

    library = envfactory.load(IMPLS / "library.yaml")
    goals = [("borrow", None), ("giveBack", None), ("leave", None)]
    first = [route.operations for route in plan(library, goals, effort=10**9)]
    unrelated = [z3.Int(f"unrelated{i}") for i in range(200)]
    solver = z3.Solver()
    solver.add(z3.Sum(unrelated) == 77, *[x > i for i, x in enumerate(unrelated[:50])])
    assert solver.check() == z3.sat
    text = z3.String("unrelated")
    solver.add(z3.Length(text) == 5, z3.PrefixOf("ab", text))
    assert solver.check() == z3.sat
    again = [route.operations for route in plan(library, goals, effort=10**9)]
    assert first == again
    # shortest first, and of the shortest the contract's order: join comes before addBook
    assert first == [
        ("join", "leave"),
        ("join", "addBook", "borrow"),
        ("join", "addBook", "borrow", "giveBack"),
    ]


def test_a_planned_route_is_the_least_in_the_contract_order_that_a_plain_scan_finds() -> None:
    """``_least`` descends from the model's own choice at each step; a scan that tries each
    operation in the contract's order at each step (what it replaced, one check per operation)
    must come to the same route, on routes long enough that the model's first choice is rarely
    the least."""
    import z3

    from envfactory.solver.bmc import Unrolling
    from envfactory.solver.states import slots_needed

    courier = envfactory.load(IMPLS / "courier.yaml")
    routes = plan(courier, [("attempt", None)], effort=10**9)
    assert [len(route.operations) for route in routes] == [7]
    for route in routes:
        unrolling = Unrolling(courier, slots=slots_needed(courier, 4))  # as the planner's first stage
        unrolling.add(unrolling.transition.invariants(unrolling.states[0]))
        for _ in route.operations:
            unrolling.add(unrolling.transition.invariants(unrolling.extend()))
        ops = unrolling.ops
        fixed = [unrolling.selectors[-1] == ops.index(route.operations[-1])]
        for selector in unrolling.selectors[:-1]:
            least = next(i for i in range(len(ops)) if unrolling.check(*fixed, selector == i) == z3.sat)
            fixed.append(selector == least)
        scanned = tuple(ops[int(str(f.arg(1)))] for f in fixed[1:])
        assert (*scanned, route.operations[-1]) == route.operations


def test_a_route_planned_in_a_worker_has_the_same_inputs_whatever_was_asked_before() -> None:
    """The run plans in a forked worker that starts its solver state afresh: without that the
    inputs came out otherwise after other work in the process (an isbn read back as another
    contract's literal ``"delivered"``), and a test comparing a run in a worker with the same run
    here failed one time in a few under ``-n 2``. And its garbage collector starts afresh: Z3
    gives the ids of the terms Python frees to the next ones, so a worker that inherited other
    allocation counts freed them at other moments, and the route relayed from a stepping stone
    went through another stone (a second fuzz run in one process planned other prefixes)."""
    import z3

    from envfactory.fuzz.reach import plan_apart

    library = envfactory.load(IMPLS / "library.yaml")
    goals = [("borrow", None), ("leave", 1), ("borrow", 3)]

    def planned() -> list[Route]:
        found: list[Route] = []
        plan_apart(library, goals, effort=10**9, seconds=600, report=found.append)
        return found

    first = planned()
    solver = z3.Solver()
    names = [z3.String(f"unrelated{i}") for i in range(20)]
    solver.add(z3.Distinct(*names), *[z3.Length(n) == 2 for n in names])
    assert solver.check() == z3.sat
    plan(envfactory.load(IMPLS / "courier.yaml"), [("signup", None), ("send", 1)], effort=10**7)
    # the library planned here too: the memo tables the worker inherits have its clauses now, so
    # the worker allocates less (with collections counted from there, other inputs came out)
    plan(library, goals, effort=10**7)
    kept = [[n] for n in range(100_000)]  # other work's objects, still alive when the worker forks
    again = planned()
    assert kept and [(r.operations, r.inputs) for r in again] == [(r.operations, r.inputs) for r in first]
    assert [len(r.operations) for r in first] == [3, 4, 7] and all(r.inputs for r in first)


def test_a_feature_is_young_in_the_round_it_first_showed() -> None:
    """``Corpus.young`` reads the same when a case of the round is replayed (the feature shown
    first, or again in the same round), and no longer after the round: the steering that
    follows it must draw the same calls when Hypothesis replays a case."""
    from envfactory.fuzz.corpus import Corpus

    corpus = Corpus(envfactory.load(IMPLS / "auction.yaml"))
    corpus.novel({"clock": 0, "lots": {}}, ["clock", "lots"])
    corpus.settle()
    assert corpus.novel({"clock": 7}, ["clock"]) and corpus.young
    assert not corpus.novel({"clock": 7}, ["clock"]) and corpus.young  # a replay in the round
    assert not corpus.novel({"clock": 0}, ["clock"]) and not corpus.young  # an earlier round's
    corpus.settle()
    assert not corpus.novel({"clock": 7}, ["clock"]) and not corpus.young
    assert corpus.seen[("clock", 7)] == 3  # counted all along


BOXOFFICE = envfactory.load(IMPLS / "boxoffice.yaml")
PROMOTION = (
    ("signup", {"name": "s"}),
    ("addShow", {"show": "x", "capacity": 1}),
    ("setShow", {"show": "x", "status": "onsale"}),
    ("book", {"booking": "b1", "customer": "s", "show": "x", "seats": 1}),
    ("book", {"booking": "b2", "customer": "s", "show": "x", "seats": 1}),
    ("book", {"booking": "b3", "customer": "s", "show": "x", "seats": 1}),
    ("cancel", {"booking": "b1"}),
)
"""The box office's WaitlistAsStack up to the cancel that gives b1's seat to a waiter: the
cancel's answer is right, and only a read of the show (or a transfer of the waiter wrongly
seated) shows that the seat went to the last waiter, not the first."""


def _reads_after_the_entry(cls: str, seeds: int) -> tuple[int, int]:
    """Over ``seeds`` cases of a run whose one corpus entry is ``PROMOTION``: how many started
    from it, and how many of those found the bug with the step after it."""
    from envfactory.fuzz.findings import FindingError

    session = _session(BOXOFFICE, cls)
    ops = plans(session)
    session.published, session.rarity = (PROMOTION,), (1.0,)
    resumed = found = 0
    for seed in range(seeds):
        case = Case(session)
        try:
            case.step(ops, Seeded(seed))
        except FindingError as err:
            assert err.finding.operation in ("show", "transfer") and len(err.finding.steps) == 8
            found += 1
        resumed += [s.tool for s in case.steps[:7]] == [name for name, _ in PROMOTION]
    return resumed, found


def test_a_case_reads_back_what_the_call_ending_its_corpus_entry_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A corpus entry ends with the call that showed something new. A case that starts from it
    reads back a record that call changed, half the time, with a read operation naming it: here
    the show, whose waitlist a stack-minded target got wrong, or the customer refunded. A step
    drawn at random names that show with ``show`` about once in a dozen."""
    from envfactory.fuzz import machine

    monkeypatch.setattr(machine, "INSERT_ODDS", 10**9)  # the entry replayed as it is
    resumed, found = _reads_after_the_entry("WaitlistAsStack", 120)
    assert 60 <= resumed <= 100  # two cases in three start from the entry
    assert found >= resumed / 6  # a read in two, of the show or the customer, and chance
    resumed, found = _reads_after_the_entry("BoxOffice", 40)
    assert found == 0 and resumed >= 20


GYM = envfactory.load(IMPLS / "gym.yaml")
CANCELLED = (
    ("hire", {"instructor": "i"}),
    ("schedule", {"session": "c", "instructor": "i"}),
    ("join", {"member": "a"}),
    ("book", {"member": "a", "session": "c"}),
    ("memberInfo", {"member": "a"}),
    ("cancelClass", {"session": "c", "instructor": "i"}),
)
"""The gym's CachedRefund up to the cancelled class: a's answer was read and kept, and the
cancel (which changes the class and the booking, not the member) did not drop it."""


def test_a_read_that_joins_through_what_a_call_changed_is_read_back_with_any_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``memberInfo`` takes a member and counts the member's bookings through ``classes``; a
    cancelled class changes no member, so no read names a changed record of its collection.
    Its ensures read ``classes`` and ``bookings``, so it is read back after they change, with any
    member: a stale answer kept for a shows at the step after the entry about a case in six (a
    read back in two, the member's one of two reads with the class's, and some cases first make
    the class again)."""
    from envfactory.fuzz.findings import FindingError

    session = _session(GYM, "CachedRefund")
    ops = plans(session)
    info = {p.name: p for p in ops}["memberInfo"]
    assert {"bookings", "classes"} <= {n for n, ps in session.whole_readers.items() if info in ps}
    assert info not in session.whole_readers.get("members", ())  # its own key's collection
    monkeypatch.setattr(machine, "INSERT_ODDS", 10**9)  # the entry replayed as it is
    session.published, session.rarity = (CANCELLED,), (1.0,)
    resumed = found = 0
    for seed in range(120):
        case = Case(session)
        try:
            case.step(ops, Seeded(seed))
        except FindingError as err:
            assert err.finding.operation == "memberInfo" and len(err.finding.steps) <= 8
            found += 1
        resumed += [s.tool for s in case.steps[:6]] == [name for name, _ in CANCELLED]
    assert resumed >= 60
    assert found >= resumed / 9  # without it, a member read drawn at random: 1 in 24


def test_an_actor_an_any_joins_through_the_records_is_drawn_as_one_they_hold() -> None:
    """The cloud set's calls on a VM want an actor who holds an admin or owner membership of the
    VM's project (``any(members[m].project == vms[input.vm].project and members[m].user ==
    input.actor and members[m].role != "viewer" for m in members)``): no key or threshold says
    which name that is. The ``any`` does (``steering.Witness``): a valid draw names such an actor
    three times in four, and a viewer or a member of another project never through it."""
    contract = envfactory.load(IMPLS / "cloud.yaml")
    session = _session(contract, "Cloud")
    stop = {p.name: p for p in plans(session)}["stopVm"]
    assert [w.field for w in stop.steer.witnesses] == ["actor"]
    case = Case(session, replay=True)
    calls = [
        ("createProject", {"project": "p", "owner": "o"}),
        ("createProject", {"project": "q", "owner": "u"}),
        ("addMember", {"project": "p", "actor": "o", "user": "v"}),  # a viewer
        ("addMember", {"project": "p", "actor": "o", "user": "w", "role": "admin"}),
        ("createVm", {"project": "p", "actor": "o", "vm": "a"}),
        ("startVm", {"vm": "a", "actor": "w"}),
    ]
    for name, value in calls:
        case.send(contract.operations[name], value)
    assert len(case.accepted) == len(calls)
    (witness,) = stop.steer.witnesses
    assert witness.candidates(case.state, {"vm": "a", "actor": "x"}) == ["o", "w"]
    src: Any = Seeded(4)
    draws = [case.draw(stop, src, breaking=False) for _ in range(400)]
    actors = [d["actor"] for d in draws if d.get("vm") == "a"]  # the live VM, not a fresh name
    held = sum(a in ("o", "w") for a in actors) / len(actors)
    assert held > 0.7  # three in four, plus what the other draws happen to name
    assert {"o", "w"} <= set(actors)


def test_a_field_a_clause_wants_equal_to_a_state_value_mostly_takes_it() -> None:
    """A key is rotated by showing the current one (``members[input.member].apikey ==
    input.key``): its neighbours are refused, so a valid draw takes the value itself seven
    times in nine (a bound that is a limit takes it, or a neighbour, four in nine)."""
    contract = envfactory.load(IMPLS / "cloud.yaml")
    session = _session(contract, "Cloud")
    rotate = {p.name: p for p in plans(session)}["rotateKey"]
    (key,) = [t for t in rotate.steer.thresholds if t.field == "key"]
    assert key.equal and not key.apart
    case = Case(session, replay=True)
    case.send(contract.operations["createProject"], {"project": "p", "owner": "o"})
    for shown in (1, 2):
        case.send(contract.operations["rotateKey"], {"member": 1, "key": shown})
    assert case.state["members"][1]["apikey"] == 3
    src: Any = Seeded(2)
    keys = [case.draw(rotate, src, breaking=False) for _ in range(450)]
    at = sum(k["key"] == 3 for k in keys if k.get("member") == 1) / sum(k.get("member") == 1 for k in keys)
    assert at > 0.7


def test_a_field_a_clause_wants_in_a_list_mostly_takes_one_of_its_items() -> None:
    """A job may name a secret its pipeline holds (``"secret" not in input or input.secret in
    pipelines[input.pipeline].secrets``): no key says which strings those are, and a drawn one
    never is, so before ``steering.Member`` a valid job nearly always left the field out. Now a
    draw that sends it takes one of the pipeline's secrets three times in four; a secret is
    fresh where it is added (``not (input.secret in ...)``), which is no ``Member``."""
    contract = envfactory.load(IMPLS / "runners.yaml")
    session = _session(contract, "Runners")
    by_name = {p.name: p for p in plans(session)}
    assert [m.field for m in by_name["queueJob"].steer.members] == ["secret"]
    assert not by_name["addSecret"].steer.members
    case = Case(session, replay=True)
    calls = [
        ("createPipeline", {"pipeline": "p"}),
        ("createPipeline", {"pipeline": "q"}),
        ("addSecret", {"pipeline": "p", "secret": "w"}),
        ("addSecret", {"pipeline": "q", "secret": "y"}),
        ("addSecret", {"pipeline": "q", "secret": "z"}),
    ]
    for name, value in calls:
        case.send(contract.operations[name], value)
    assert len(case.accepted) == len(calls)
    src: Any = Seeded(2)
    draws = [case.draw(by_name["queueJob"], src, breaking=False) for _ in range(800)]
    secrets = [d["secret"] for d in draws if d.get("pipeline") == "q" and "secret" in d]
    held = sum(s in ("y", "z") for s in secrets) / len(secrets)
    assert held > 0.6  # three in four; a drawn string is never one
    assert {"y", "z"} <= set(secrets) and "w" not in secrets  # p's secret is not q's
