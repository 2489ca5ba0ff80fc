"""Deep planted bugs: found by contract-directed steering and shrunk to their minimal length.

The contracts and implementations in ``impls/`` (library, shop, quota) each have a correct class
and classes with one planted bug that takes 3 to 8 calls to show: counters at a limit, distinct
keys, repeated operations on one resource, ids the target assigns. Runs are bounded by
``max_examples`` (same seed, same run), never by a clock; ``bench/bench_fuzz.py`` measures the same
material under a time budget against baselines.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

import envfactory
from envfactory.contracts.evaluator import Env
from envfactory.fuzz import runner, shrink
from envfactory.fuzz.findings import Finding
from envfactory.fuzz.parallel import Job, fuzz_jobs, run_job, seeds
from envfactory.fuzz.references import key_names, references
from envfactory.fuzz.runner import Summary, fuzz
from envfactory.fuzz.steering import KeyField, Steer
from envfactory.fuzz.targets import open_target
from envfactory.trajectory import Step

IMPLS = Path(__file__).resolve().parent / "impls"
QUOTA_BUG = "RevokedStillWorks"
pytestmark = pytest.mark.timeout(1800)  # a hang guard only: runs end by example counts


def _run(
    contract_name: str, factory: str, seed: int, max_examples: int = 200, *, multiple: bool = True
) -> tuple[Finding, ...]:
    """The findings of ``max_examples`` test cases (with ``multiple=False``: up to the first)."""
    contract = envfactory.load(IMPLS / f"{contract_name}.yaml")
    target = open_target(f"python:{IMPLS / f'{contract_name}_impl.py'}:{factory}", contract)
    return fuzz(contract, target, seed=seed, max_examples=max_examples, multiple=multiple).findings


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_third_book_is_found_in_every_seed_and_shrunk_to_seven_calls(seed: int) -> None:
    """The issue's library bug: join, three books, three borrows by one member (limit 2)."""
    (finding,) = _run("library", "ThirdBook", seed, max_examples=400, multiple=False)
    assert (finding.kind, finding.operation) == ("forbidden_accepted", "borrow")
    tools = [s.tool for s in finding.steps]
    assert sorted(tools) == sorted(["join", "addBook", "addBook", "addBook", "borrow", "borrow", "borrow"])
    borrowers = {s.input["name"] for s in finding.steps if s.tool == "borrow"}
    books = {s.input["isbn"] for s in finding.steps if s.tool == "borrow"}
    assert len(borrowers) == 1 and len(books) == 3  # one member, three distinct books


def test_an_account_quota_spread_over_two_keys_shrinks_to_eight_calls() -> None:
    """Two keys, three uses of one and two of the other reach the account's five; the sixth use
    must be refused. A third key the search used shrinks away by renaming, not only deletion."""
    (finding,) = _run("quota", "SpreadOverKeys", seed=1)
    assert (finding.kind, finding.operation) == ("forbidden_accepted", "use")
    assert len(finding.steps) == 8
    assert [s.tool for s in finding.steps].count("createKey") == 2


def test_shrinking_follows_ids_the_target_assigned() -> None:
    """A cancel that hands its id back: the shortest trace is add, restock, place, cancel,
    place, and it names the order by the id the target returned, whatever it was."""
    (finding,) = _run("shop", "IdReused", seed=0)
    assert (finding.kind, finding.operation) == ("postcondition", "place")
    assert [s.tool for s in finding.steps] == ["addProduct", "restock", "place", "cancel", "place"]
    assert finding.steps[3].input["id"] == finding.steps[2].output["id"]


@pytest.mark.parametrize(
    ("contract_name", "factory"), [("library", "Library"), ("shop", "Shop"), ("quota", "Keys")]
)
def test_correct_implementations_have_no_finding(contract_name: str, factory: str) -> None:
    assert _run(contract_name, factory, seed=0, max_examples=150) == ()


def test_key_relations_are_read_off_the_clauses() -> None:
    library = envfactory.load(IMPLS / "library.yaml")
    assert Steer.of(library.operations["join"], library).keys == (KeyField("name", "members", True),)
    borrow = Steer.of(library.operations["borrow"], library)
    assert set(borrow.keys) == {KeyField("isbn", "books", False), KeyField("name", "members", False)}
    assert borrow.needs == {"books", "members"}
    assert not borrow.possible({"members": {"a": {"loans": 0}}, "books": {}})
    give_back = Steer.of(library.operations["giveBack"], library)
    assert [t.field for t in give_back.thresholds] == ["name"]  # books[input.isbn].holder == input.name
    shop = envfactory.load(IMPLS / "shop.yaml")
    (qty,) = Steer.of(shop.operations["place"], shop).thresholds
    assert qty.field == "qty"  # products[input.sku].stock >= input.qty
    assert qty.bound(Env({"products": {"a": {"stock": 4}}}, {"sku": "a"})) == 4


def test_references_point_at_the_response_that_gave_an_id() -> None:
    steps = [
        Step("place", {"sku": "a", "qty": 1}, {"id": 7}, 200, True),
        Step("place", {"sku": "a", "qty": 7}, {"id": 8}, 200, True),
        Step("pay", {"id": 8}, None, 200, True),
        Step("pay", {"id": 7}, None, 200, True),
    ]
    refs = references(steps)
    assert refs[(2, "id")] == (1, "id") and refs[(3, "id")] == (0, "id")
    assert (1, "qty") not in refs  # a quantity that equals an order's number is a quantity
    assert (0, "sku") not in refs
    named = [Step("add", {"name": "x"}, {"id": 3}, 200, True), Step("get", {"petId": 3}, None, 200, True)]
    assert references(named) == {(1, "petId"): (0, "id")}
    token = [
        Step("login", {"user": "x"}, {"token": "t1"}, 200, True),
        Step("me", {"auth": "t1"}, None, 200, True),
    ]
    assert references(token) == {(1, "auth"): (0, "token")}  # a string the target chose is its own


TRACKER_LINKS = [
    *[("createIssue", {})] * 4,
    ("block", {"issue": 4, "by": 2}),
    ("block", {"issue": 4, "by": 3}),
    ("closeIssue", {"issue": 2}),
    ("unblock", {"issue": 4, "by": 2}),
    ("closeIssue", {"issue": 4}),
]
"""The tracker's UnblockDoneDecrements, with an issue made first that nothing uses."""


def test_a_field_names_what_a_response_returned_under_another_name_of_the_same_keys() -> None:
    """The tracker's ``block`` names the blocking issue ``by``, a key of the issues the responses
    number as ``issue``: with the contract's names, ``by`` refers to the response too."""
    contract = envfactory.load(IMPLS / "tracker.yaml")
    names = key_names(contract)
    assert names[("block", "by")] == names[("startIssue", "issue")] and "by" in names[("block", "by")]
    steps = [
        Step("createIssue", {}, {"issue": 1}, 200, True),
        Step("createIssue", {}, {"issue": 2}, 200, True),
        Step("block", {"issue": 2, "by": 1}, None, 200, True),
        Step("addUser", {"user": "u"}, None, 200, True),
    ]
    assert references(steps) == {(2, "issue"): (1, "issue")}  # by name alone, ``by`` is a number
    assert references(steps, names) == {(2, "issue"): (1, "issue"), (2, "by"): (0, "issue")}


def test_a_shrunk_trace_leaves_out_an_issue_its_links_named_by_another_name() -> None:
    """Left out, the first issue moves every number after it down by one; the links' ``by``
    moves with them, and the trace shrinks to the bug's minimal eight calls (nine before, where
    ``by`` stayed at the old numbers and the replay lost the finding)."""
    shrunk = _shrunk("tracker", "UnblockDoneDecrements", TRACKER_LINKS)
    assert shrunk.kind == "forbidden_accepted" and len(shrunk.steps) == 8
    assert [s.tool for s in shrunk.steps].count("createIssue") == 3


# u's folder b at the root, a file, folder a inside b, two folders in a, folder b in a's second,
# b inside that one; b's innermost folder and its folder trashed, and the innermost restored: at
# the root (its folder is in the trash), where folder b has its name
DRIVE_RESTORE: list[tuple[str, dict[str, Any]]] = [
    ("register", {"user": "a"}),
    ("upload", {"by": "a", "parent": 0, "name": "a", "size": 3}),
    ("createFolder", {"name": "b", "by": "a", "parent": 0}),
    ("createFolder", {"name": "a", "by": "a", "parent": 2}),
    ("createFolder", {"name": "a", "by": "a", "parent": 3}),
    ("createFolder", {"name": "b", "by": "a", "parent": 3}),
    ("createFolder", {"name": "b", "by": "a", "parent": 2}),
    ("createFolder", {"name": "b", "by": "a", "parent": 6}),
    ("delete", {"by": "a", "item": 7}),
    ("delete", {"by": "a", "item": 6}),
    ("restore", {"by": "a", "item": 7}),
]


def test_a_numbered_record_is_named_by_the_only_field_its_maker_answers_with() -> None:
    """The drive answers a new folder as ``folder`` and a new file as ``file``, and names items
    ``item`` and ``parent``: the only scalar field of an operation that makes items at a key no
    input names is a name of the items' keys. Without it, a replay with the upload left out kept
    the old numbers, and the run's 11-call trace stayed 11; with it the shrinker reaches the
    bug's minimal 7 (one folder in another, the inner one trashed with its folder, restored)."""
    names = key_names(envfactory.load(IMPLS / "drive.yaml"))
    items = names[("restore", "item")]
    assert {"folder", "file"} <= items and items == names[("move", "parent")]
    assert "link" in names[("download", "link")]
    shrunk = _shrunk("drive", "RestoreNameCheckedInOldFolder", DRIVE_RESTORE)
    assert (shrunk.kind, shrunk.operation, len(shrunk.steps)) == ("forbidden_accepted", "restore", 7)
    assert [s.tool for s in shrunk.steps].count("createFolder") == 3


def test_jobs_fuzz_several_seeds_and_merge_their_findings() -> None:
    options = {"max_examples": 60}
    path = str(IMPLS / "library.yaml")
    target = f"python:{IMPLS / 'library_impl.py'}:ThirdBook"
    merged = fuzz_jobs([Job(path, None, False, target, s, options) for s in seeds(0, 2)])
    # each seed alone in a process of its own, as ``envfactory fuzz --seed S`` runs it: the
    # planner's worker is forked from the process that plans, and Z3's answers there depend on
    # what that process did before (this test's own process has run the suite's solver tests)
    spawn = multiprocessing.get_context("spawn")
    pools = [concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn) for _ in seeds(0, 2)]
    try:
        runs = [
            pool.submit(run_job, Job(path, None, False, target, s, options))
            for pool, s in zip(pools, seeds(0, 2))
        ]
        alone = [run.result() for run in runs]
    finally:
        for pool in pools:
            pool.shutdown()
    assert merged.jobs == 2 and merged.calls == sum(r.calls for r in alone)
    (finding,) = merged.findings  # the same bug from both seeds, once
    assert (finding.operation, finding.kind) == ("borrow", "forbidden_accepted")
    assert len(finding.steps) == min(len(r.findings[0].steps) for r in alone) == 7


def _unlocks(findings: tuple[Finding, ...]) -> list[Finding]:
    return [f for f in findings if (f.operation, f.kind) == ("unlock", "forbidden_accepted")]


def test_the_solver_reaches_what_random_search_does_not() -> None:
    """The vault's lock forgets to reset a dial that takes sixteen clicks (with a reset among the
    operations): the bug needs 19 calls. After a share of the examples the solver plans a prefix
    to the operations never accepted, and the search goes on from there."""
    (unlock,) = _unlocks(_run("vault", "StickyDial", seed=0, max_examples=200))
    assert [s.tool for s in unlock.steps] == ["click"] * 16 + ["unlock", "lock", "unlock"]
    assert _run("vault", "Vault", seed=0, max_examples=200) == ()


@pytest.mark.usefixtures("no_planner")
def test_the_corpus_reaches_what_random_search_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the solver, the corpus gets to the vault's bug too: each case that turned the dial
    further than any before is a start for later cases. Without either, the same seed finds
    nothing in as many examples."""
    findings = _run("vault", "StickyDial", seed=0, max_examples=500, multiple=False)
    # the case that shows it, whichever call it ends with: sixteen clicks, unlock, lock
    assert {tuple(s.tool for s in f.steps[:-1]) for f in findings} == {("click",) * 16 + ("unlock", "lock")}
    monkeypatch.setattr(runner, "EPOCH", 10**9)  # and no case ever starts from the corpus
    assert _run("vault", "StickyDial", seed=0, max_examples=500) == ()


def test_two_crashes_in_one_operation_are_two_findings(tmp_path: Path) -> None:
    """Distinct by exception type and raising line: a ValueError does not hide an OverflowError
    in the same method, and the run goes on after the first to find the second."""
    (tmp_path / "calc.yaml").write_text(
        'envfactory: "1"\ninfo: {title: Calc, version: "1"}\nstate: {}\noperations:\n'
        "  root:\n    input: {type: object, properties: {x: {type: integer}}, required: [x], additionalProperties: false}\n",
        encoding="utf-8",
    )
    (tmp_path / "calc_impl.py").write_text(
        "class Calc:\n"
        "    def root(self, x):\n"
        "        if type(x) is not int: return {'error': 'x is not an integer', 'status': 422}\n"
        "        if x < 0:\n"
        "            raise ValueError('negative')\n"
        "        if x > 10**6:\n"
        "            raise OverflowError('too large')\n"
        "        return {'r': x}\n",
        encoding="utf-8",
    )
    contract = envfactory.load(tmp_path / "calc.yaml")
    target = open_target(f"python:{tmp_path / 'calc_impl.py'}:Calc", contract)
    summary = fuzz(contract, target, seed=0, max_examples=200)
    causes = sorted(f.cause.split(" at ")[0] for f in summary.findings if f.kind == "crash")
    assert causes == ["OverflowError", "ValueError"]
    assert all(f.cause.endswith(("calc_impl.py:5", "calc_impl.py:7")) for f in summary.findings)


HOTEL = [
    # (planted bug, the operations that may show it, its minimal length, examples to search)
    ("FullHouse", {"checkIn"}, 10, 3000),
    ("LongStay", {"extend"}, 8, 1000),
    ("BusyClose", {"closeRoom"}, 9, 1000),
    ("StaleCount", {"roomInfo", "occupancy", "closeRoom"}, 8, 1000),
    ("StaysCapped", {"occupancy"}, 11, 1000),
    # the count left behind shows at a read, a close, or a move back into the room it was left in
    ("MoveLeaks", {"roomInfo", "occupancy", "closeRoom", "move"}, 8, 1000),
]


@pytest.mark.parametrize(("factory", "shows", "minimal", "examples"), HOTEL, ids=[h[0] for h in HOTEL])
def test_held_out_hotel_bugs_eight_to_eleven_calls_deep_are_found_and_shrunk(
    factory: str, shows: set[str], minimal: int, examples: int
) -> None:
    """A held-out set, written before the corpus: a fourth guest in a room of three, a fifth night,
    a room closed after three visits with a guest inside, a count left behind by a guest who
    extended twice, a stay counter that saturates at three, a move between two distinct rooms.
    Each is found (the run ends at the first finding) and shrunk to its minimal length."""
    findings = _run("hotel", factory, seed=0, max_examples=examples, multiple=False)
    shown = [f for f in findings if f.operation in shows]
    assert shown, [(f.operation, f.kind, len(f.steps)) for f in findings]
    assert min(len(f.steps) for f in shown) == minimal


@pytest.mark.usefixtures("light_planner")
def test_the_correct_hotel_has_no_finding() -> None:
    assert _run("hotel", "Hotel", seed=0, max_examples=150) == ()


def test_corpus_features_see_counters_sizes_and_flags() -> None:
    """The state facts whose first appearance makes a call sequence a corpus entry."""
    from envfactory.fuzz.corpus import Corpus, bucket, features

    rooms = {"101": {"guests": 2, "open": True}, "102": {"guests": 0, "open": False}}
    assert set(features("rooms", rooms)) == {
        ("rooms", "size", 2),
        ("rooms", "guests", "max", 2),
        ("rooms", "guests", "min", 0),
        ("rooms", "open", "set", 1),
    }
    assert [bucket(v) for v in (3, 16, 17, 40, -40)] == [3, 16, 21, 22, -22]
    corpus = Corpus()
    assert corpus.novel({"stays": 3}, ["stays"]) and not corpus.novel({"stays": 3}, ["stays"])
    assert corpus.novel({"stays": 4}, ["stays"])


def test_corpus_features_see_what_the_clauses_read_of_texts_and_lists() -> None:
    """Of text and list fields, what the review board's clauses read: how many pull requests
    hold each status the contract names, the longest and shortest list of reviewers, the pull
    requests that share a branch (a server that keys the reopen count by branch goes wrong
    there); a free-text field no clause reads is no feature. A logged-in user is no feature by
    name, but by what they are: a user, an admin, the author of two pull requests."""
    from envfactory.fuzz.corpus import Corpus, features

    contract = envfactory.load(IMPLS / "reviews.yaml")
    corpus = Corpus(contract)
    assert {"draft", "open", "closed", "merged", "release/", "-wip"} <= corpus.words
    assert corpus.read["pulls"] >= {"branch", "status", "reviewers", "approvals", "author"}
    pull = {"author": "ann", "branch": "x", "status": "closed", "reviewers": ["bo"], "approvals": []}
    pulls = {1: pull, 2: {**pull, "status": "open", "reviewers": []}, 3: {**pull, "branch": "y"}}
    pulls[4] = {**pull, "branch": "release/x"}
    shown = set(features("pulls", pulls, corpus.words, corpus.read["pulls"], corpus.affixes))
    assert {
        ("pulls", "status", "is", "closed", 3),
        ("pulls", "status", "is", "open", 1),
        ("pulls", "reviewers", "len", "max", 1),
        ("pulls", "reviewers", "len", "min", 0),
        ("pulls", "branch", "shared", 1),
        ("pulls", "author", "shared", 3),
        ("pulls", "branch", "has", "release/", 1),
    } <= shown
    assert not [f for f in shown if "status" in f and "shared" in f]  # named values are counted
    cache: dict[tuple[str, int], tuple[object, Summary]] = {}
    for _ in range(2):  # read into the cache, then out of it: the same features
        again = features("pulls", pulls, corpus.words, corpus.read["pulls"], corpus.affixes, cache)
        assert set(again) == shown and len(cache) == len(pulls)
    shapes = {f[2] for f in shown if f[1] == "record"}
    fields = sorted(corpus.read["pulls"])
    assert len(shapes) == 3  # 1 and 3 differ in their branch's text alone; 4's is a release
    assert (
        "pulls",
        "record",
        (("len", 0), ("text",), ("text", "release/"), None, None, ("len", 1), "closed"),
    ) in shown
    assert {
        "approvals": ("len", 0),
        "author": ("text",),
        "branch": ("text",),
        "pushes": None,
        "reopened": None,
        "reviewers": ("len", 1),
        "status": "closed",
    } in [dict(zip(fields, shape, strict=True)) for shape in shapes]
    # no field read: no text, list or shape feature
    assert set(features("pulls", pulls, corpus.words, (), corpus.affixes)) == {("pulls", "size", 4)}
    users = {"ann": {"admin": True, "merged": 0}, "bo": {"admin": False, "merged": 0}}
    state = {"session": "ann", "users": users, "pulls": pulls}
    assert corpus.novel(state, ["session"])
    assert {
        ("session", "text"),
        ("session", "key of", "users"),
        ("session", "users", "admin", "set"),
        ("session", "in", "pulls", "author", 4),
    } <= corpus.seen.keys()
    assert not [f for f in corpus.seen if "ann" in f]
    assert corpus.novel({**state, "session": "bo"}, ["session"])  # a reviewer now, no admin
    assert not corpus.novel({**state, "session": "cy", "users": {**users, "cy": users["ann"]}}, ["session"])
    # an account made again while a pull request still names it as a reviewer is new once
    assert corpus.remade("users", "bo", 0, state) and not corpus.remade("users", "bo", 0, state)
    assert ("remade", "users", 0, ("pulls", "reviewers")) in corpus.seen
    assert corpus.remade("users", "dee", 0, state) and not corpus.remade("users", "eve", 0, state)


def test_corpus_atoms_count_the_records_a_clause_comparison_holds_of() -> None:
    """The auction's comparisons of a lot with the clock and with the seller's other lots are
    features by how many lots satisfy them: a lot in its last round (where a bid extends it) is
    a new state even though no field of it took a new value."""
    from envfactory.contracts.printer import to_source
    from envfactory.fuzz.corpus import Corpus, atoms

    contract = envfactory.load(IMPLS / "auction.yaml")
    found = {to_source(a.expr): a for a in atoms(contract)}
    assert "clock < lots[input.lot].deadline" in found
    assert "lots[input.lot].deadline - clock == 1" in found
    assert any(source.startswith("sum(1 for l in lots") for source in found)
    # a lot field against a constant is the record's own features' business
    assert not any("extended < 2" in source or '"draft"' in source for source in found)

    def lot(deadline: int) -> dict[str, object]:
        return {"seller": "s", "status": "live", "reserve": 1, "step": 1, "deadline": deadline}

    corpus = Corpus(contract)
    last = list(found).index("lots[input.lot].deadline - clock == 1")
    assert corpus.novel({"clock": 0, "lots": {"a": lot(2)}}, ["lots"])
    assert ("atom", last, 0) in corpus.seen and ("atom", last, 1) not in corpus.seen
    # the clock ticks: no lot field changes, and the lot is in its last round
    assert corpus.novel({"clock": 1, "lots": {"a": lot(2)}}, ["clock"])
    assert ("atom", last, 1) in corpus.seen
    assert not corpus.novel({"clock": 1, "lots": {"b": lot(2)}}, ["clock", "lots"])  # by another name


def test_corpus_tells_which_record_satisfies_an_atom_by_its_shape() -> None:
    """A lot extended twice and a lot in its last round are both old news; the lot extended
    twice *in* its last round (where a third late bid must not extend it) is a new state: each
    record's shape is a feature together with the atoms it satisfies."""
    from envfactory.fuzz.corpus import Corpus

    contract = envfactory.load(IMPLS / "auction.yaml")

    def lots(deadline: int, extended: int) -> dict[str, object]:
        lot = {"seller": "s", "status": "live", "reserve": 1, "step": 1, "top": 2, "leader": "b"}
        return {"a": {**lot, "deadline": deadline, "extended": extended, "bidders": ["b", "c"]}}

    corpus = Corpus(contract)
    assert corpus.novel({"clock": 2, "lots": lots(3, 0)}, ["clock", "lots"])  # last round
    assert corpus.novel({"clock": 0, "lots": lots(3, 2)}, ["clock", "lots"])  # extended twice
    before = set(corpus.seen)
    assert corpus.novel({"clock": 2, "lots": lots(3, 2)}, ["clock"])  # both, of one lot
    assert all(f[1] == "record" for f in corpus.seen.keys() - before)
    assert not corpus.novel({"clock": 2, "lots": lots(3, 2)}, ["clock", "lots"])


def test_value_moves_survive_a_replay_that_comes_back_shorter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Moving a value can make the finding show in fewer steps (the replay stops at the first
    failing call); the shrinker's walk over the steps must follow the shorter trace, not index
    past its end (an IndexError ended a 2,000-example run of the hotel's FullHouse)."""
    from envfactory.fuzz import shrink

    contract = envfactory.load(IMPLS / "hotel.yaml")
    target = open_target(f"python:{IMPLS / 'hotel_impl.py'}:Hotel", contract)
    session = runner.Session(contract, target, mode="adversarial", time_budget=None)
    steps = tuple(
        Step("addRoom", {"number": n, "capacity": c}, None, 200, True)
        for n, c in (("a", 2), ("b", 3), ("c", 1), ("a", 2))
    )
    finding = Finding("forbidden_accepted", "addRoom", "m", steps, "status 409")

    def shorter(session: object, trial: list[Step], key: object, skip: int | None = None) -> Finding:
        return Finding("forbidden_accepted", "addRoom", "m", tuple(trial[:2]), "status 409")

    monkeypatch.setattr(shrink, "replay", shorter)
    for move in (shrink._normalize, shrink._extremes):
        assert len(move(session, finding).steps) == 2


def _found(
    contract_name: str, factory: str, calls: Sequence[tuple[str, Any]]
) -> tuple[runner.Session, Finding]:
    """A session on a held-out implementation, and the finding ``calls`` end in."""
    from envfactory.fuzz.findings import FindingError
    from envfactory.fuzz.machine import Case, plans

    contract = envfactory.load(IMPLS / f"{contract_name}.yaml")
    target = open_target(f"python:{IMPLS / f'{contract_name}_impl.py'}:{factory}", contract)
    session = runner.Session(contract, target, mode="adversarial", time_budget=None)
    plans(session)
    case = Case(session, replay=True)
    with pytest.raises(FindingError) as err:
        for name, value in calls:
            case.send(contract.operations[name], value)
    return session, err.value.finding


def _shrunk(contract_name: str, factory: str, calls: Sequence[tuple[str, Any]]) -> Finding:
    """The finding ``calls`` end in, through the whole shrinker (``shrink.minimize``)."""
    from envfactory.fuzz.shrink import minimize

    session, finding = _found(contract_name, factory, calls)
    return minimize(session, finding)


def _reported(contract_name: str, factory: str, calls: Sequence[tuple[str, Any]]) -> runner.Session:
    """A session whose run found only what ``calls`` end in, once its findings are shrunk
    (``runner._minimize_new``)."""
    session, finding = _found(contract_name, factory, calls)
    session.findings.add(finding, 1.5)
    runner._minimize_new(session, set())
    return session


def test_a_shrunk_trace_names_what_it_made_plainly() -> None:
    """The search's names (any Unicode a string strategy draws) become ``a``, ``b``, ... in the
    order the trace first used them; the trace keeps its length and its finding."""
    weird, odd = "\U000ddb6d\xe2", "(]Zb"
    calls = [
        ("join", {"name": weird}),
        *[("addBook", {"isbn": isbn, "title": ""}) for isbn in (odd, "a", "x\u200b")],
        *[("borrow", {"name": weird, "isbn": isbn}) for isbn in (odd, "a", "x\u200b")],
    ]
    finding = _shrunk("library", "ThirdBook", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("forbidden_accepted", "borrow", 7)
    assert {s.input["name"] for s in finding.steps if "name" in s.input} == {"a"}
    assert [s.input["isbn"] for s in finding.steps if s.tool == "addBook"] == ["b", "c", "d"]


def test_minimizing_goes_on_from_the_plain_names_until_nothing_more_goes() -> None:
    """Where a search's trace of the courier's ReturnKeepsRoom stalled (13 calls: a shelf of room
    1 refuses a parcel as full where the one given back should have freed it). With the optional
    fields left out (a customer's credit, a hub's tries) and the names made plain, the same moves
    again let a hub and a send go: 11, where minimizing that again gains nothing."""
    calls: Sequence[tuple[str, Any]] = [
        ("signup", {"credit": 9, "name": "=p"}),
        ("addHub", {"tries": 3, "name": "=p"}),
        ("addHub", {"name": "a"}),
        ("addHub", {"name": "a3", "tries": 1, "cap": 1}),
        ("link", {"hub": "a3", "to": "a"}),
        ("link", {"hub": "=p", "to": "a3"}),
        *[("send", {"hub": "=p", "parcel": p, "sender": "=p", "to": "a3"}) for p in ("U", "qap")],
        ("forward", {"parcel": "U"}),
        ("attempt", {"home": False, "parcel": "U"}),
        ("giveBack", {"parcel": "U"}),
        ("send", {"hub": "=p", "parcel": "k", "sender": "=p", "to": "a"}),
        ("send", {"hub": "a3", "parcel": "\u00a1\u009b", "sender": "=p", "to": "a"}),
    ]
    finding = _shrunk("courier", "ReturnKeepsRoom", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("wrong_status", "send", 11)
    again = _shrunk("courier", "ReturnKeepsRoom", [(s.tool, s.input) for s in finding.steps])
    assert len(again.steps) == 11


def test_a_call_moved_with_two_fields_or_later_lets_a_trace_reach_its_minimal_length() -> None:
    """A search's DroppedSwaps trace (registrar, 13 calls; its minimum is 10) that no deletion
    or one-field rename shortens: a swap of a third enrollment moves onto the second one together
    with the course it goes to, and the second enrollment moves after the first one's drop, where
    the same student may enroll again, so the third enrollment and the other student go."""
    calls = [
        ("addStudent", {"name": "a"}),
        ("addCourse", {"seats": 1, "code": "t"}),
        ("addStudent", {"name": "x"}),
        *[("addCourse", {"seats": 3, "code": code}) for code in "bc"],
        ("enroll", {"course": "c", "student": "x"}),
        ("enroll", {"course": "c", "student": "a"}),
        ("swap", {"course": "b", "id": 1}),
        ("enroll", {"course": "c", "student": "x"}),
        ("swap", {"course": "t", "id": 1}),
        ("drop", {"id": 1}),
        ("swap", {"course": "b", "id": 2}),
        ("swap", {"course": "b", "id": 3}),
    ]
    finding = _shrunk("registrar", "DroppedSwaps", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("forbidden_accepted", "swap", 10)
    assert [s.tool for s in finding.steps].count("addStudent") == 1


def test_a_call_moved_with_two_fields_onto_names_other_fields_use_reaches_the_minimum() -> None:
    """A search's PerSourceLimit trace (ledger, 10 calls; its minimum is 8): the fifth transfer
    overall is let through because the limit is counted per source. The trace's third account
    sends one of the five; moved to go back from the account the first ones went to (a source
    and a destination the trace never used in those fields), it lets the third account go."""
    transfer = "transfer"
    calls = [
        ("open", {"name": "a"}),
        ("open", {"name": "b"}),
        ("lend", {"amount": 100, "name": "a"}),
        (transfer, {"amount": 1, "dest": "b", "source": "a"}),
        ("open", {"name": "c"}),
        ("lend", {"amount": 100, "name": "c"}),
        (transfer, {"amount": 1, "dest": "b", "source": "a"}),
        (transfer, {"amount": 1, "dest": "b", "source": "c"}),
        (transfer, {"amount": 1, "dest": "b", "source": "a"}),
        (transfer, {"amount": 2, "dest": "b", "source": "a"}),
    ]
    finding = _shrunk("ledger", "PerSourceLimit", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("forbidden_accepted", transfer, 8)
    assert {s.input["name"] for s in finding.steps if s.tool == "open"} == {"a", "b"}


def test_a_name_merged_into_another_lets_its_creation_go() -> None:
    """Two search traces of the clinic set: in TriageBypass (8 calls, minimum 7) the admissions
    move onto the senior doctor, who comes later in the trace, and the other doctor goes; in
    MixedMoves (12 calls) a third doctor's admission and transfer both move onto the second one,
    which neither rename alone allows."""
    triage = [
        ("register", {"name": "b"}),
        ("addDoctor", {"cap": 3, "senior": True, "name": "c"}),
        ("addDoctor", {"cap": 3, "name": "d"}),
        ("register", {"urgent": True, "name": "e"}),
        ("admit", {"doctor": "d", "patient": "b"}),
        ("register", {"name": "a"}),
        ("admit", {"doctor": "d", "patient": "a"}),
        ("admit", {"doctor": "c", "patient": "e"}),
    ]
    finding = _shrunk("clinic", "TriageBypass", triage)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("forbidden_accepted", "admit", 7)
    moves = [
        ("addDoctor", {"cap": 3, "senior": False, "name": "x"}),
        ("addDoctor", {"cap": 1, "name": "y"}),
        ("register", {"name": "p"}),
        ("admit", {"doctor": "y", "patient": "p"}),
        ("transfer", {"doctor": "y", "patient": "p", "to": "x"}),
        ("addDoctor", {"cap": 1, "senior": True, "name": "z"}),
        ("addDoctor", {"cap": 1, "senior": True, "name": "w"}),
        ("register", {"urgent": False, "name": "q"}),
        ("admit", {"doctor": "w", "patient": "q"}),
        ("transfer", {"doctor": "w", "patient": "q", "to": "z"}),
        ("discharge", {"fee": 1, "patient": "q"}),
        ("admit", {"doctor": "x", "patient": "q"}),
    ]
    finding = _shrunk("clinic", "MixedMoves", moves)
    assert (finding.kind, finding.operation) == ("forbidden_accepted", "admit")
    assert len(finding.steps) <= 10
    assert sum(s.tool == "addDoctor" for s in finding.steps) == 2


def test_a_merge_that_needs_a_call_first_gets_it() -> None:
    """Hotel's StaysCapped as a search gave it (13 calls, minimum 11): four check-ins into two
    rooms. Merging the rooms makes the fourth check-in find the room full; a check-out put before
    it (a call the trace never made) lets it in, and the fourth guest is then a returning one."""
    calls = [
        ("addRoom", {"capacity": 3, "number": "b"}),
        ("openRoom", {"number": "b"}),
        ("register", {"name": "c"}),
        ("register", {"name": "d"}),
        ("checkIn", {"name": "c", "number": "b"}),
        ("register", {"name": "e"}),
        ("addRoom", {"capacity": 3, "number": "a"}),
        ("register", {"name": "a"}),
        ("openRoom", {"number": "a"}),
        ("checkIn", {"name": "e", "number": "a"}),
        ("checkIn", {"name": "a", "number": "b"}),
        ("checkIn", {"name": "d", "number": "a"}),
        ("occupancy", {}),
    ]
    finding = _shrunk("hotel", "StaysCapped", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("postcondition", "occupancy", 11)
    tools = [s.tool for s in finding.steps]
    assert tools.count("addRoom") == 1 and tools.count("checkOut") == 1


def test_the_costlier_moves_start_from_the_values_moved_to_their_bounds() -> None:
    """Hotel's StaysCapped as seed 1 gave it (13 calls, minimum 11): the first room holds one
    guest, so the rooms merge only once its capacity is moved to the most a room may have. That
    move keeps the trace's length, and the merge that needs a check-out first starts from it."""
    calls = [
        ("register", {"name": "a"}),
        ("register", {"name": "b"}),
        ("addRoom", {"capacity": 1, "number": "c"}),
        ("register", {"name": "d"}),
        ("addRoom", {"capacity": 3, "number": "e"}),
        ("openRoom", {"number": "c"}),
        ("register", {"name": "f"}),
        ("openRoom", {"number": "e"}),
        ("checkIn", {"name": "b", "number": "c"}),
        ("checkIn", {"name": "d", "number": "e"}),
        ("checkIn", {"name": "a", "number": "e"}),
        ("checkIn", {"name": "f", "number": "e"}),
        ("occupancy", {}),
    ]
    finding = _shrunk("hotel", "StaysCapped", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("postcondition", "occupancy", 11)
    assert [s.input["capacity"] for s in finding.steps if s.tool == "addRoom"] == [3]


def test_a_merge_the_values_moved_to_their_bounds_would_close_is_tried_without_them() -> None:
    """Hotel's StaysCapped as a search gave it with a twin room (13 calls, minimum 11): a room
    of three made and opened again under a fresh number, and a guest checked into it. The rooms
    merge at three; the move to the bounds puts both capacities at one first (the trace as long
    as before), where no merge or check-out lets them, so the costlier moves are tried on the
    trace as it was too."""
    calls = [
        ("addRoom", {"capacity": 3, "number": "a"}),
        ("register", {"name": "b"}),
        ("openRoom", {"number": "a"}),
        ("checkIn", {"name": "b", "number": "a"}),
        ("checkOut", {"name": "b"}),
        ("addRoom", {"capacity": 3, "number": "c"}),
        ("openRoom", {"number": "c"}),
        ("checkIn", {"name": "b", "number": "a"}),
        ("checkOut", {"name": "b"}),
        ("register", {"name": "d"}),
        ("checkIn", {"name": "d", "number": "c"}),
        ("checkIn", {"name": "b", "number": "a"}),
        ("occupancy", {}),
    ]
    finding = _shrunk("hotel", "StaysCapped", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("postcondition", "occupancy", 11)
    assert [s.tool for s in finding.steps].count("addRoom") == 1


@pytest.mark.parametrize(
    ("calls", "operation"),
    [
        (
            [
                ("addCourse", {"seats": 3, "code": "a"}),
                ("addStudent", {"name": "b"}),
                ("enroll", {"course": "a", "student": "b"}),
                ("addCourse", {"seats": 1, "code": "c"}),
                ("addStudent", {"name": "j"}),
                ("enroll", {"course": "a", "student": "j"}),
                ("addStudent", {"name": "d"}),
                ("enroll", {"course": "a", "student": "d"}),
                ("swap", {"course": "c", "id": 3}),
                ("courseInfo", {"code": "a"}),
            ],
            "courseInfo",
        ),
        (
            [
                ("addCourse", {"seats": 3, "code": "a"}),
                ("addCourse", {"seats": 3, "code": "b"}),
                ("addStudent", {"name": "j"}),
                ("enroll", {"course": "b", "student": "j"}),
                ("addStudent", {"name": "c"}),
                ("enroll", {"course": "b", "student": "c"}),
                ("addStudent", {"name": "d"}),
                ("enroll", {"course": "b", "student": "d"}),
                ("swap", {"course": "a", "id": 1}),
                ("swap", {"course": "b", "id": 1}),
            ],
            "swap",
        ),
    ],
)
def test_a_size_one_smaller_lets_a_step_go_that_neither_move_alone_lets_go(
    calls: Sequence[tuple[str, Any]], operation: str
) -> None:
    """The registrar's FullSwapLeak as a search gave it (session 30, 10 calls, minimum 8): a
    swap out of a full course of three keeps the seat taken. The course is full only from two
    seats in the implementation, a bound no clause states; three seats down to two with one
    enrollment left out shows the same bug in a student and an enrollment fewer. Names come
    out in the order the trace first used them."""
    finding = _shrunk("registrar", "FullSwapLeak", calls)
    assert (finding.operation, len(finding.steps)) == (operation, 8)
    assert [s.input["seats"] for s in finding.steps if s.tool == "addCourse"] in ([2, 1], [1, 2])
    assert shrink._strings(finding.steps) == ["a", "b", "c", "d"]


def test_a_number_that_equals_an_id_is_not_moved_with_it_when_a_step_goes() -> None:
    """The registrar's RecreatedCourse as a search gave it (session 31, 14 calls, minimum 9): the
    course made again with three seats came after enrollment 3, and the one with two after
    enrollment 2. Taken for references, the seats moved with the enrollments' numbers in every
    replay with a step left out, and the course made again got its old seats back: no step
    could go."""
    calls = [
        ("addCourse", {"code": "a", "seats": 3}),
        ("addCourse", {"code": "b", "seats": 1}),
        ("addStudent", {"name": "c"}),
        ("enroll", {"student": "c", "course": "b"}),
        ("enroll", {"student": "c", "course": "a"}),
        ("addStudent", {"name": "d"}),
        ("addCourse", {"seats": 2, "code": "e"}),
        ("enroll", {"course": "e", "student": "c"}),
        ("enroll", {"course": "e", "student": "d"}),
        ("drop", {"id": 4}),
        ("drop", {"id": 3}),
        ("removeCourse", {"code": "e"}),
        ("addCourse", {"seats": 3, "code": "e"}),
        ("courseInfo", {"code": "e"}),
    ]
    finding = _shrunk("registrar", "RecreatedCourse", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("postcondition", "courseInfo", 9)
    assert [s.tool for s in finding.steps].count("drop") == 2


def test_a_wrong_status_from_a_clause_not_checked_gives_way_to_the_accepted_call() -> None:
    """Fleet's FourthTrip: a car due for service goes out a fourth time (9 calls); 14 calls in,
    its driver at his limit too, the car is refused with the driver limit's 429 where service
    due's 423 was due. Both say the target skips one clause: the run reports the shorter one. A
    wrong status that no skipped clause explains stays."""
    from envfactory.fuzz.findings import FindingError
    from envfactory.fuzz.machine import Case, plans
    from envfactory.fuzz.shrink import skipped

    contract = envfactory.load(IMPLS / "fleet.yaml")
    target = open_target(f"python:{IMPLS / 'fleet_impl.py'}:FourthTrip", contract)
    session = runner.Session(contract, target, mode="adversarial", time_budget=None)
    plans(session)

    def finding(calls: Sequence[tuple[str, Any]]) -> Finding:
        case = Case(session, replay=True)
        with pytest.raises(FindingError) as err:
            for name, value in calls:
                case.send(contract.operations[name], value)
        return err.value.finding

    trip = [("rent", {"driver": "m", "plate": "d"}), ("giveBack", {"plate": "d"})]
    made = [("addDriver", {"name": "m"}), *[("addCar", {"plate": p}) for p in "bcd"]]
    late = finding([*made, *trip * 3, *[("rent", {"driver": "m", "plate": p}) for p in "bcd"]])
    assert (late.kind, late.status, len(late.steps)) == ("wrong_status", 429, 13)
    assert skipped(session, late) is None  # nothing shorter reported yet
    early = finding([*made, *trip * 3, ("rent", {"driver": "m", "plate": "d"})])
    assert early.kind == "forbidden_accepted" and early.clause == late.clause
    for found in (late, early):
        session.findings.add(found, 0.0)
    assert skipped(session, late) == early
    runner._minimize_new(session, set())
    assert [f.kind for f in session.findings.all()] == ["forbidden_accepted"]
    assert late.key in session.explained
    other = attrs.evolve(late, status=400)  # no clause left out answers 400
    assert skipped(session, other) is None


def test_a_wrong_status_shrinks_into_the_forbidden_call_accepted() -> None:
    """The cloud's RoleAsAdded as a search gave it (session 36, 16 calls, all accepted but the
    last): an admin made viewer moves a VM in, and the target, which judges the role the mover
    was added with, refuses it for the target's snapshots (413) where the role's 403 was due.
    No step can go and keep that status (the snapshots make it), but with one snapshot gone the
    move is accepted: the shrinker follows the finding there, to the 8 calls of the defect."""
    vm = [("startVm", {"vm": "m", "actor": "a"}), ("stopVm", {"vm": "m", "actor": "a"})]
    calls = [
        ("createProject", {"project": "h", "owner": "a"}),
        ("createVm", {"project": "h", "actor": "a", "vm": "m"}),
        *vm,
        ("createProject", {"project": "b", "owner": "h"}),
        *[("snapshotVm", {"vm": "m", "actor": "a"})] * 3,
        ("addMember", {"project": "b", "actor": "h", "user": "a", "role": "admin"}),
        ("moveVm", {"vm": "m", "actor": "a", "target": "b"}),
        ("createVm", {"project": "h", "actor": "a", "vm": "d"}),
        *[(name, {**value, "vm": "d"}) for name, value in vm],
        ("snapshotVm", {"vm": "d", "actor": "a"}),
        ("setRole", {"actor": "h", "role": "viewer", "member": 3}),
        ("moveVm", {"actor": "a", "target": "b", "vm": "d"}),
    ]
    finding = _shrunk("cloud", "RoleAsAdded", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("forbidden_accepted", "moveVm", 8)
    assert [s.tool for s in finding.steps].count("snapshotVm") == 0


def test_a_wrong_status_reported_alone_is_reported_as_the_accepted_call_it_shrinks_to() -> None:
    """Fleet's FourthTrip found only as its wrong status (13 calls, the driver's 429 where the
    car's 423 was due): once shrunk, the run reports the car let out a fourth time, and the
    wrong status as explained, so that the search does not report it again."""
    trip = [("rent", {"driver": "m", "plate": "d"}), ("giveBack", {"plate": "d"})]
    made = [("addDriver", {"name": "m"}), *[("addCar", {"plate": p}) for p in "bcd"]]
    late = [*made, *trip * 3, *[("rent", {"driver": "m", "plate": p}) for p in "bcd"]]
    session = _reported("fleet", "FourthTrip", late)
    [found] = session.findings.all()
    assert (found.kind, found.operation, len(found.steps)) == ("forbidden_accepted", "rent", 9)
    assert session.findings.first_seen[found.key] == 1.5
    assert ("rent", "wrong_status", "") in session.explained


STALE_RESENDS = [
    [
        ("addHub", {"name": "a"}),
        ("addHub", {"name": "b"}),
        ("addHub", {"name": "c", "tries": 1}),
        ("signup", {"name": "d"}),
        ("link", {"hub": "a", "to": "b"}),
        ("link", {"hub": "b", "to": "c"}),
        ("send", {"hub": "a", "parcel": "e", "sender": "d", "to": "c"}),
        ("forward", {"parcel": "e"}),
        ("forward", {"parcel": "e"}),
        ("attempt", {"home": False, "parcel": "e"}),
        ("link", {"hub": "b"}),
        ("giveBack", {"parcel": "e"}),
        ("resend", {"parcel": "e"}),
    ],
    [
        ("addHub", {"name": "a"}),
        ("signup", {"name": "b"}),
        ("addHub", {"name": "b", "tries": 1}),
        ("link", {"hub": "a", "to": "b"}),
        ("send", {"parcel": "a", "sender": "b", "hub": "a", "to": "b"}),
        ("forward", {"parcel": "a"}),
        ("addHub", {"name": "c"}),
        ("attempt", {"home": False, "parcel": "a"}),
        ("giveBack", {"parcel": "a"}),
        ("link", {"hub": "b", "to": "c"}),
        ("link", {"hub": "b"}),
        ("resend", {"parcel": "a", "to": "c"}),
    ],
]


@pytest.mark.parametrize("calls", STALE_RESENDS, ids=["13", "12"])
def test_a_parcel_sent_again_on_a_stale_route_is_shown_as_a_send_on_it(
    calls: Sequence[tuple[str, Any]],
) -> None:
    """The courier's StaleRoutes as two searches gave it (sessions 36 and 37): a parcel given
    back is sent again to c through b after b was unlinked, and the target, whose route from a is
    stale, lets it go. The route was stale from the unlink on: a send from a to c right after
    it, which the model refuses by a clause that reads the same links, shows the defect in 8
    calls. The second trace cannot be shorter as a resend (12 calls), and the send after the
    unlink is as long before it shrinks: it is taken all the same."""
    session = _reported("courier", "StaleRoutes", calls)
    [found] = session.findings.all()
    assert (found.kind, found.operation, len(found.steps)) == ("forbidden_accepted", "send", 8)
    assert ("resend", "forbidden_accepted", "") in session.explained


def test_a_wrong_record_is_read_back_alone_after_the_step_that_changed_it() -> None:
    """The courier's AttemptsCarriedOver as a search gave it (session 43, 11 calls): a parcel sent
    again keeps the failed attempts of its first round, so a second give-back is let through.
    The resend changed three records (the sender, the hub, the parcel); the parcel read back right
    after it shows the defect in 10 calls, without the reads of the other two before it."""
    calls = [
        ("addHub", {"name": "a", "tries": 1}),
        ("signup", {"name": "b"}),
        ("addHub", {"name": "c"}),
        ("link", {"hub": "c", "to": "a"}),
        ("send", {"parcel": "d", "sender": "b", "hub": "c", "to": "a"}),
        ("forward", {"parcel": "d"}),
        ("attempt", {"home": False, "parcel": "d"}),
        ("giveBack", {"parcel": "d"}),
        ("resend", {"parcel": "d"}),
        ("forward", {"parcel": "d"}),
        ("giveBack", {"parcel": "d"}),
    ]
    session = _reported("courier", "AttemptsCarriedOver", calls)
    [found] = session.findings.all()
    assert (found.kind, found.operation, len(found.steps)) == ("postcondition", "parcel", 10)
    assert [s.tool for s in found.steps[-2:]] == ["resend", "parcel"]


def test_names_are_made_plain_around_the_values_a_schema_lists() -> None:
    """The cloud's RoleAsAdded as a search gave it (session 37, 9 calls): the names the search
    drew (f, v, p, b) become a, b, c, d all at once, the roles (an enum) staying as they are;
    renamed with the others, a role the schema does not list lost the finding, and the names
    were left as drawn."""
    calls = [
        ("createProject", {"project": "f", "owner": "v"}),
        ("createVm", {"project": "f", "actor": "v", "vm": "p"}),
        ("createProject", {"project": "b", "owner": "b"}),
        ("startVm", {"vm": "p", "actor": "v"}),
        ("stopVm", {"vm": "p", "actor": "v"}),
        ("addMember", {"project": "f", "actor": "v", "user": "b", "role": "admin"}),
        ("moveVm", {"vm": "p", "actor": "b", "target": "b"}),
        ("setRole", {"actor": "v", "role": "viewer", "member": 3}),
        ("moveVm", {"vm": "p", "actor": "b", "target": "f"}),
    ]
    finding = _shrunk("cloud", "RoleAsAdded", calls)
    assert finding.kind == "forbidden_accepted" and len(finding.steps) <= 9
    assert shrink._strings(finding.steps) == ["a", "b", "c", "d", "admin", "viewer"]


def test_a_call_made_again_goes_with_its_undoing_and_later_calls_name_the_first() -> None:
    """The cloud's RoleAsAdded as a search gave it (session 37, 11 calls): member b removed and
    added again, as admin as before, then made viewer and let move a VM in. The add again and its
    removal go together, and the demotion names membership 3, the first add's, not 4: 9 calls.
    One step at a time neither can go (without the removal the add is refused; without the add,
    membership 4 is missing)."""
    member = ("addMember", {"project": "a", "actor": "a", "user": "b", "role": "admin"})
    calls = [
        ("createProject", {"project": "a", "owner": "a"}),
        ("createProject", {"project": "b", "owner": "b"}),
        ("createVm", {"project": "a", "actor": "a", "vm": "a"}),
        ("startVm", {"vm": "a", "actor": "a"}),
        ("stopVm", {"vm": "a", "actor": "a"}),
        member,
        ("moveVm", {"vm": "a", "actor": "b", "target": "b"}),
        ("removeMember", {"actor": "b", "member": 3}),
        member,
        ("setRole", {"member": 4, "actor": "a", "role": "viewer"}),
        ("moveVm", {"vm": "a", "actor": "b", "target": "a"}),
    ]
    finding = _shrunk("cloud", "RoleAsAdded", calls)
    assert (finding.kind, len(finding.steps)) == ("forbidden_accepted", 9)
    [demotion] = [s for s in finding.steps if s.tool == "setRole"]
    assert demotion.input["member"] == 3 and "removeMember" not in [s.tool for s in finding.steps]


def test_a_field_added_lets_another_call_move_onto_its_hub_and_two_calls_go() -> None:
    """The courier's ResendNotCounted as a search gave it (session 36, 13 calls): the third
    parcel on the way goes from a hub d made for it, since hub b's shelf (two at most by
    default) is full. With hub b made with room for three (a field added), the send moves onto
    b, and d's creation and link go: the 11 calls of the defect. Found as its wrong status
    (credit short at d's rate), it is reported as the send let go."""
    calls = [
        ("addHub", {"name": "a", "tries": 1}),
        ("addHub", {"name": "b"}),
        ("link", {"hub": "b", "to": "a"}),
        ("signup", {"name": "b"}),
        ("send", {"parcel": "b", "sender": "b", "hub": "b", "to": "a"}),
        ("forward", {"parcel": "b"}),
        ("attempt", {"parcel": "b", "home": False}),
        ("giveBack", {"parcel": "b"}),
        ("send", {"hub": "b", "parcel": "c", "sender": "b", "to": "a"}),
        ("addHub", {"name": "d", "rate": 5}),
        ("link", {"hub": "d", "to": "a"}),
        ("resend", {"parcel": "b"}),
        ("send", {"parcel": "e", "sender": "b", "hub": "d", "to": "a"}),
    ]
    session = _reported("courier", "ResendNotCounted", calls)
    [found] = session.findings.all()
    assert (found.kind, found.operation, len(found.steps)) == ("forbidden_accepted", "send", 11)
    assert [s.input.get("cap") for s in found.steps if s.tool == "addHub"].count(3) == 1


def test_hypothesis_shrinks_while_it_makes_progress_and_a_stall_or_its_share_ends_it() -> None:
    """In a run with a time budget, a round's shrinking is not cut a fixed number of cases after
    the first finding: each failing case (the shrinker only tries smaller ones) restarts the
    count, and ``SHRINK_CASES`` cases without one end the round, as does ``SHRINK_SHARE`` of the
    budget. A run bounded by examples shrinks ``SHRINK_CASES`` cases from its first finding; a
    hang is bounded from its first case."""
    contract = envfactory.load(IMPLS / "library.yaml")
    target = open_target(f"python:{IMPLS / 'library_impl.py'}:ThirdBook", contract)
    session = runner.Session(contract, target, mode="adversarial", time_budget=1000.0)
    clock = [100.0]
    session.elapsed = lambda: clock[0]  # type: ignore[method-assign]
    steps = (Step("join", {"name": "a"}, None, 200, True),)
    finding = Finding("forbidden_accepted", "join", "m", steps, "status 409")
    session.found(finding)  # the first finding, at case 0
    for _ in range(3 * runner.SHRINK_CASES):  # far past the cap, with a failing case every 50
        session.begin_case()
        if session.test_cases % 50 == 0:
            session.found(finding)
    with pytest.raises(runner.StopRun):  # then no progress: the stall ends the round
        for _ in range(runner.SHRINK_CASES + 1):
            session.begin_case()
    assert session.test_cases - session.last_failure == runner.SHRINK_CASES

    # a share of the budget ends the shrinking however it progresses
    session.first_case, session.test_cases, session.stopped, session.time_budget = None, 0, False, 20.0
    session.found(finding)
    clock[0] += 20.0 * runner.SHRINK_SHARE - 0.01
    session.found(finding)
    assert not session.shrunk_enough()
    clock[0] += 0.01
    assert session.shrunk_enough()

    # bounded by examples: a count from the first finding, progress or not (the same seed, the
    # same run)
    session.first_case, session.test_cases, session.stopped, session.time_budget = None, 0, False, None
    session.found(finding)
    with pytest.raises(runner.StopRun):
        for _ in range(runner.SHRINK_CASES + 1):
            session.begin_case()
            session.found(finding)
    assert session.test_cases == runner.SHRINK_CASES

    session.first_case, session.test_cases, session.stopped = None, 0, False
    session.found(attrs.evolve(finding, kind="hang"))
    with pytest.raises(runner.StopRun):
        for _ in range(runner.SLOW_SHRINK_CASES + 1):
            session.begin_case()
            session.found(attrs.evolve(finding, kind="hang"))  # progress does not extend a hang's
    assert session.test_cases == runner.SLOW_SHRINK_CASES


def test_an_optional_field_sent_lets_a_call_go_and_one_not_needed_is_left_out() -> None:
    """A lot opened with the default two rounds needs two ticks before it closes; opened for one
    round (a field the trace never sent) it needs one, and the other tick goes with the field
    added (the minimal 8 calls, not 9). The funds the search drew for the bidder are left out."""
    calls = [
        ("join", {"name": "s"}),
        ("join", {"name": "b", "funds": 17}),
        ("create", {"lot": "x", "seller": "s"}),
        ("open", {"lot": "x"}),
        ("bid", {"lot": "x", "bidder": "b", "amount": 3}),
        ("tick", {}),
        ("tick", {}),
        ("close", {"lot": "x"}),
        ("remove", {"lot": "x"}),
    ]
    finding = _shrunk("auction", "RemoveUnsettled", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("forbidden_accepted", "remove", 8)
    assert [s.tool for s in finding.steps].count("tick") == 1
    assert all("funds" not in s.input for s in finding.steps)


def test_a_name_freed_and_made_again_becomes_a_new_name() -> None:
    """A lot made, cancelled, removed and made again under its old name stands for a lot made
    under a new one: the removal goes (11 calls, the minimal, not 12)."""
    calls = [
        ("join", {"name": "s"}),
        *[("create", {"lot": lot, "seller": "s"}) for lot in ("p", "q", "r")],
        *[("open", {"lot": lot}) for lot in ("p", "q", "r")],
        ("create", {"lot": "t", "seller": "s"}),
        ("cancel", {"lot": "t"}),
        ("remove", {"lot": "t"}),
        ("create", {"lot": "t", "seller": "s"}),
        ("open", {"lot": "t"}),
    ]
    finding = _shrunk("auction", "DraftCancelFreesSlot", calls)
    assert (finding.kind, finding.operation, len(finding.steps)) == ("forbidden_accepted", "open", 11)
    assert "remove" not in [s.tool for s in finding.steps]


class _Jumpy:
    """A ``time`` module whose monotonic clock jumps a minute at each reading: a loaded machine,
    as Hypothesis's engine sees it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)

    def monotonic(self) -> float:
        self.now += 60.0
        return self.now


@pytest.mark.usefixtures("no_planner")
def test_a_run_bounded_by_examples_makes_the_same_calls_on_a_loaded_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hypothesis stops generating ten seconds of wall time after its first failing case; a run
    bounded by examples does not let that clock decide how many cases it runs after a finding."""
    from hypothesis.internal.conjecture import engine

    def run() -> Summary:
        contract = envfactory.load(IMPLS / "quota.yaml")
        target = open_target(f"python:{IMPLS / 'quota_impl.py'}:{QUOTA_BUG}", contract)
        return fuzz(contract, target, seed=0, max_examples=40)

    idle = run()
    assert idle.findings
    monkeypatch.setattr(engine, "time", _Jumpy())
    loaded = run()
    assert (loaded.test_cases, loaded.calls) == (idle.test_cases, idle.calls)


LATE_ATTEMPT = [
    ("signup", {"name": "l", "credit": 2}),
    ("addHub", {"name": "l", "cap": 1, "tries": 2}),
    ("addHub", {"name": "p", "rate": 3, "tries": 3}),
    ("link", {"hub": "l", "to": "p"}),
    ("send", {"parcel": "a", "sender": "l", "hub": "l", "to": "p"}),
    ("forward", {"parcel": "a"}),
    ("attempt", {"parcel": "a", "home": True}),
    ("signup", {"name": "\x12üô~"}),
    ("addHub", {"cap": 2, "rate": 5, "tries": 2, "name": "X"}),
    ("addHub", {"name": "ntby"}),
    ("addHub", {"rate": 2, "tries": 3, "name": "orak"}),
    ("hub", {"name": "orak"}),
    ("addHub", {"rate": 5, "tries": 1, "name": "(Od0"}),
    ("setRate", {"rate": 5, "hub": "X"}),
    ("hub", {"name": "X"}),
    ("signup", {"credit": 7, "name": "1|"}),
    ("customer", {"name": "1|"}),
    ("setRate", {"rate": 1, "hub": "(Od0"}),
    ("link", {"hub": "orak", "to": "(Od0"}),
    ("send", {"hub": "orak", "parcel": "ohgf", "sender": "\x12üô~", "to": "(Od0"}),
    ("forward", {"parcel": "ohgf"}),
    ("attempt", {"home": False, "parcel": "ohgf"}),
    ("attempt", {"home": True, "parcel": "ohgf"}),
]
"""A run's last finding on the courier's TriesOfOrigin, found as its grace period ran out: a
parcel attempted past the tries of the hub it is bound for, which counts those of its origin."""


def test_a_finding_made_as_the_grace_period_ends_still_gets_its_deletions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the grace period spent, the single-step deletions still run (``DELETIONS_FLOOR``,
    made long here so that the test does not hang on the machine's speed): the reads and the hubs
    and sender never used leave, and the moves after them do not run past the deadline."""
    monkeypatch.setattr(runner, "DELETIONS_FLOOR", 3600.0)
    session, finding = _found("courier", "TriesOfOrigin", LATE_ATTEMPT)
    assert len(finding.steps) == 23
    spent = time.monotonic() - 1.0
    session.minimize_deadline = spent
    session.findings.add(finding, 19.5)
    runner._minimize_new(session, set())
    (shrunk,) = session.findings.all()
    assert (shrunk.operation, shrunk.kind, len(shrunk.steps)) == ("attempt", "forbidden_accepted", 8)
    assert session.minimize_deadline == spent
    # the names are as the search drew them: renaming is one of the moves past the deadline
    assert shrunk.steps[0].input == {"name": "\x12üô~"}


def test_one_call_standing_for_two_in_a_row_shortens_a_trace() -> None:
    """A job picked by a runner and failed, then retried and canceled twice: the third retry is
    let through by the runners set's RetryOffByOne. A run reported those 10 calls; the pick and
    the failed finish are one cancel as far as the retries go, and with them gone the runner
    goes too: 8 calls, the minimum. No deletion, rename or inserted call gets there, since the
    retry needs the job ended and the finish needs the pick (``shrink._replaced``)."""
    calls = [
        ("registerRunner", {"runner": "a"}),
        ("createPipeline", {"pipeline": "b"}),
        ("queueJob", {"pipeline": "b"}),
        ("pickJob", {"runner": "a", "job": 1}),
        ("finishJob", {"job": 1, "passed": False}),
        ("retryJob", {"job": 1}),
        ("cancelJob", {"job": 1}),
        ("retryJob", {"job": 1}),
        ("cancelJob", {"job": 1}),
        ("retryJob", {"job": 1}),
    ]
    shrunk = _shrunk("runners", "RetryOffByOne", calls)
    assert (shrunk.operation, shrunk.kind) == ("retryJob", "forbidden_accepted")
    assert [s.tool for s in shrunk.steps] == [
        "createPipeline",
        "queueJob",
        *["cancelJob", "retryJob"] * 3,
    ]
