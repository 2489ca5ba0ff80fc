"""Benchmark: `envfactory fuzz` against baselines, on one HTTP server with planted bugs.

Run: ``.venv/bin/python bench/bench_fuzz.py [--budget SECONDS]``

A small REST pet store (an OpenAPI 3.0 document with ``links``, served by uvicorn on loopback)
comes in five copies, each with one planted bug: a use after delete, a crash on a non-ASCII name,
a missing validation, a delete of a missing pet that succeeds, and an output outside its schema.
Within the same wall-clock budget per bug, three fuzzers look for each:

* envfactory (the contract inferred from the OpenAPI document, ``--engine fast``, adversarial);
* (a) random call sequences: uniform operations, inputs from the same schema sampler driven by a
  seeded ``random.Random`` (no key linking, no shrinking), judged by the same oracle;
* (b) Schemathesis's stateful testing (``schema.as_state_machine()``, its default checks), when
  it is installed.

Printed: bugs found by each, and the median time to the first failure (over the bugs it found),
with the ratio to envfactory.

Then deep planted bugs (``tests/fuzz/impls``: a lending library, a shop with target-assigned order
ids, API keys with quotas; eleven bugs 3 to 8 calls deep that need distinct keys, counters at a
limit and repeated operations on one resource), each fuzzed with several seeds and a budget per
run, by envfactory (default options but the budget, in process), (a) random sequences judged by
the same oracle, and (c) for the library, a hand-written Hypothesis ``RuleBasedStateMachine`` of
the kind a tester writes (bundles of members and books, the model in the machine). Printed per
bug: seeds found, the median time to the first finding, envfactory's shrunk length against the
minimal one, and the shares found with the ratio of medians. Then calls per second against a Python target (envfactory's
``python:`` target on the bank example's correct implementation), for both engines, in wall
and CPU seconds (the CPU figure is what a loaded machine cannot distort).
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Bench pet store", "version": "1.0"},
    "paths": {
        "/pets": {
            "post": {
                "operationId": "createPet",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}},
                },
                "responses": {
                    "201": {
                        "description": "created",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}},
                        "links": {
                            "GetPet": {
                                "operationId": "getPet",
                                "parameters": {"petId": "$response.body#/id"},
                            },
                            "DeletePet": {
                                "operationId": "deletePet",
                                "parameters": {"petId": "$response.body#/id"},
                            },
                        },
                    },
                    "422": {"description": "invalid"},
                },
            }
        },
        "/pets/{petId}": {
            "parameters": [{"name": "petId", "in": "path", "required": True, "schema": {"type": "integer"}}],
            "get": {
                "operationId": "getPet",
                "responses": {
                    "200": {
                        "description": "the pet",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}},
                    },
                    "404": {"description": "no such pet"},
                    "422": {"description": "invalid id"},
                },
            },
            "delete": {
                "operationId": "deletePet",
                "responses": {
                    "204": {"description": "deleted"},
                    "404": {"description": "no such pet"},
                    "422": {"description": "invalid id"},
                },
            },
        },
    },
    "components": {
        "schemas": {
            "NewPet": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 40},
                    "price": {"type": "integer", "minimum": 0, "maximum": 1000},
                },
                "required": ["name", "price"],
                "additionalProperties": False,
            },
            "Pet": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "price": {"type": "integer", "minimum": 0, "maximum": 1000},
                },
                "required": ["id", "name", "price"],
            },
        }
    },
}

BUGS = ("use_after_delete", "crash_on_unicode", "missing_validation", "delete_missing_ok", "bad_output")


def make_app(bug: str | None) -> Any:
    """The REST pet store, with ``bug`` planted (None: correct)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    state: dict[str, Any] = {"pets": {}, "gone": {}, "next": 1}

    def reset() -> None:
        state.update(pets={}, gone={}, next=1)

    async def do_reset(request: Request) -> Response:
        reset()
        return JSONResponse({})

    async def pets(request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError:
            return JSONResponse({"error": "bad json"}, status_code=422)
        if not isinstance(body, dict) or set(body) - {"name", "price"}:
            return JSONResponse({"error": "invalid"}, status_code=422)
        name, price = body.get("name"), body.get("price")
        if not (isinstance(name, str) and 1 <= len(name) <= 40):
            return JSONResponse({"error": "invalid name"}, status_code=422)
        price_ok = type(price) is int and price >= 0 and (price <= 1000 or bug == "missing_validation")
        if not price_ok:
            return JSONResponse({"error": "invalid price"}, status_code=422)
        if bug == "crash_on_unicode":
            name.encode("ascii", errors="strict") if not name.isascii() else None
        pet = {"id": state["next"], "name": name, "price": price}
        state["pets"][pet["id"]] = pet
        state["next"] += 1
        return JSONResponse(pet, status_code=201)

    async def pet(request: Request) -> Response:
        try:
            pet_id = int(request.path_params["petId"])
        except ValueError:
            return JSONResponse({"error": "bad id"}, status_code=422)
        found = state["pets"].get(pet_id)
        if request.method == "GET":
            if found is None and bug == "use_after_delete":
                found = state["gone"].get(pet_id)
            if found is None:
                return JSONResponse({"error": "no such pet"}, status_code=404)
            if bug == "bad_output" and found["price"] == 0:
                return JSONResponse({**found, "price": "free"})
            return JSONResponse(found)
        if found is None:
            if bug == "delete_missing_ok":
                return Response(status_code=204)
            return JSONResponse({"error": "no such pet"}, status_code=404)
        state["gone"][pet_id] = state["pets"].pop(pet_id)
        return Response(status_code=204)

    async def crash_guard(request: Request) -> Response:
        try:
            return await pets(request)
        except Exception:
            return JSONResponse({"error": "internal error"}, status_code=500)

    return Starlette(
        routes=[
            Route("/_envfactory/reset", do_reset, methods=["POST"]),
            Route("/pets", crash_guard, methods=["POST"]),
            Route("/pets/{petId}", pet, methods=["GET", "DELETE"]),
        ]
    )


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """uvicorn in a thread, binding its own port (a handed-over socket leaves Nagle on)."""
    import uvicorn

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", lifespan="off", http="h11")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# ------------------------------------------------------------------------------------ fuzzers


def run_envfactory(contract: Any, url: str, budget: float, seed: int) -> float | None:
    from envfactory.fuzz.runner import fuzz
    from envfactory.fuzz.targets import open_target

    target = open_target(url, contract)
    try:
        summary = fuzz(
            contract,
            target,
            seed=seed,
            max_examples=100_000,
            steps=10,
            time_budget=budget,
            engine="fast",
            multiple=False,
            shrink_cases=50,
        )
    finally:
        target.close()
    return summary.first_finding_seconds


class RandomSource:
    """The fuzzer's draw interface over ``random.Random`` (the random baseline: no Hypothesis)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, low: int | None = None, high: int | None = None) -> int:
        return self.rng.randint(-(2**31) if low is None else low, 2**31 if high is None else high)

    def index(self, n: int) -> int:
        return self.rng.randrange(n) if n > 1 else 0

    def pick(self, items: Any) -> Any:
        return items[self.index(len(items))]

    def boolean(self, p: float = 0.5) -> bool:
        return self.rng.random() < p

    def number(self, low: float | None, high: float | None) -> float:
        return self.rng.uniform(low if low is not None else -1e6, high if high is not None else 1e6)

    def string(self, alphabet: Any, min_size: int, max_size: int) -> str:
        size = self.rng.randint(min_size, max_size)
        return "".join(chr(alphabet[self.rng.randrange(len(alphabet))]) for _ in range(size))

    def strategy(self, strategy: Any) -> Any:
        raise NotImplementedError("the bench spec has no patterns or formats")


def run_random(contract: Any, url: str, budget: float, seed: int, steps: int = 10) -> float | None:
    """Random call sequences of ``steps`` calls, judged by the same oracle, until the budget is spent."""
    from envfactory.contracts.semantics import Machine
    from envfactory.contracts.state import initial_state
    from envfactory.fuzz import inputs, oracle
    from envfactory.fuzz.targets import open_target

    closed = contract.with_closed_world()
    machine = Machine(closed)
    ops = list(closed.operations.values())
    gens = {op.name: inputs.compile_schema(op.input_schema) for op in ops}
    src = RandomSource(random.Random(seed))
    target = open_target(url, closed)
    start = time.monotonic()
    try:
        while time.monotonic() - start < budget:
            target.reset()
            state = initial_state(closed)
            for _ in range(steps):
                op = src.pick(ops)
                value = gens[op.name](src)
                expect = oracle.judge(machine, state, op, value)
                response = target.call(op.name, value)
                if expect.accepted:
                    post, verdict = oracle.check_accepted(machine, state, op, value, expect, response)
                    if verdict is not None:
                        return time.monotonic() - start
                    state = post
                elif oracle.check_rejected(op, expect, response, lambda: None) is not None:
                    return time.monotonic() - start
    finally:
        target.close()
    return None


def baseline_settings(steps: int) -> Any:
    """Hypothesis settings of the state-machine baselines: generate only (a failure surfaces as
    soon as it is found), no database, no limit but the budget their setup enforces."""
    import hypothesis

    return hypothesis.settings(
        max_examples=10**9,
        deadline=None,
        database=None,
        stateful_step_count=steps,
        suppress_health_check=list(hypothesis.HealthCheck),
        phases=[hypothesis.Phase.generate],
    )


def run_schemathesis(url: str, budget: float, seed: int) -> float | None:
    """Schemathesis's stateful testing (its state machine from the document's ``links``, its
    default checks) against ``url``; the seconds to its first failure, or None."""
    import urllib.request

    import schemathesis

    schema = schemathesis.openapi.from_dict(SPEC)
    base = schema.as_state_machine()
    start = time.monotonic()
    first: list[float] = []
    spent: list[bool] = []

    class Machine(base):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            if time.monotonic() - start > budget:
                spent.append(True)
                raise TimeoutError("budget spent")
            reset = urllib.request.Request(url + "/_envfactory/reset", data=b"", method="POST")
            urllib.request.urlopen(reset, timeout=10).close()

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": url}

    config = baseline_settings(steps=10)
    Machine._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    try:
        Machine.run(settings=config)
    except BaseException:  # a failure, or the budget running out
        # only the generate phase runs, so the failure surfaces as soon as it is found
        if not spent:
            first.append(time.monotonic() - start)
    return first[0] if first else None


def schemathesis_python(given: str | None) -> str | None:
    """A Python that can import schemathesis: this one, else ``given`` (``--schemathesis-python``:
    a separate venv keeps its pins away from the project's), else None."""
    import importlib.util
    import subprocess

    if importlib.util.find_spec("schemathesis") is not None:
        return sys.executable
    if given and subprocess.run([given, "-c", "import schemathesis"], capture_output=True).returncode == 0:
        return given
    return None


def run_schemathesis_in(python: str, url: str, budget: float, seed: int) -> float | None:
    """``run_schemathesis`` in ``python`` (a subprocess when it is another interpreter)."""
    import subprocess

    if python == sys.executable:
        return run_schemathesis(url, budget, seed)
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); from bench_fuzz import run_schemathesis; "
        "print(json.dumps(run_schemathesis(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))))"
    )
    out = subprocess.run(
        [python, "-c", code, str(ROOT / "bench"), url, str(budget), str(seed)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result = json.loads(out.splitlines()[-1])
    return float(result) if result is not None else None


# ---------------------------------------------------------------------------------- throughput


LAYERS = {"contracts": "contracts", "statemachine": "statemachine", "solver": "solver", "fuzz": "fuzz"}


def throughput_of(rev: str, seconds: float) -> dict[str, tuple[float, float]]:
    """``throughput`` of the code at git revision ``rev``, in a subprocess that imports it from a
    temporary checkout (the package rebuilt with symbolic links, as pyproject.toml maps it)."""
    import subprocess

    with tempfile.TemporaryDirectory(prefix="envfactory-bench-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev], check=True
        )
        try:
            pkg = Path(tmp) / "site" / "envfactory"
            pkg.mkdir(parents=True)
            for entry in (tree / "envfactory").iterdir():
                (pkg / entry.name).symlink_to(entry)
            for name, folder in LAYERS.items():
                (pkg / name).symlink_to(tree / folder)
            code = (
                "import json, sys; sys.path.insert(0, sys.argv[1]); "
                "from bench_fuzz import throughput; print(json.dumps(throughput(float(sys.argv[2]))))"
            )
            out = subprocess.run(
                [sys.executable, "-c", code, str(tree / "bench"), str(seconds)],
                env={"PYTHONPATH": str(pkg.parent), "PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                check=True,
                cwd=tree,
            ).stdout
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    return {k: (v[0], v[1]) for k, v in json.loads(out.splitlines()[-1]).items()}


def report_throughput(against: str | None) -> dict[str, tuple[float, float]]:
    """Print calls per second of both engines (and of revision ``against`` in the same run)."""
    rates = throughput(4.0)
    before = throughput_of(against, 4.0) if against else {}
    for engine, (wall, cpu) in rates.items():
        than = (
            f", {cpu / before[engine][1]:.2f}x {against}'s {before[engine][1]:,.0f}"
            if engine in before
            else ""
        )
        print(
            f"python target, engine {engine}: {wall:,.0f} calls/s wall, {cpu:,.0f} calls per CPU-second{than}"
        )
    return rates


def throughput(seconds: float) -> dict[str, tuple[float, float]]:
    """Calls per second (wall, CPU) against the bank example's correct Python implementation."""
    import envfactory
    from envfactory.fuzz.runner import fuzz
    from envfactory.fuzz.targets import open_target

    root = Path.cwd() if (Path.cwd() / "examples").is_dir() else ROOT  # a --against checkout runs here
    contract = envfactory.load(root / "examples" / "bank" / "bank.yaml")
    spec = f"python:{root / 'tests' / 'fuzz' / 'impls' / 'bank_impl.py'}:Bank"
    out = {}
    for engine in ("fast", "rules"):
        target = open_target(spec, contract)
        cpu = time.process_time()
        summary = fuzz(
            contract, target, seed=1, max_examples=100_000, steps=20, time_budget=seconds, engine=engine
        )
        cpu = time.process_time() - cpu
        out[engine] = (summary.calls / summary.seconds, summary.calls / cpu)
    return out


# ------------------------------------------------------------------------------- deep bugs

IMPLS = ROOT / "tests" / "fuzz" / "impls"
DEEP: dict[str, list[tuple[str, int]]] = {
    # contract: [(planted bug class, its minimal length)]
    "library": [("ThirdBook", 7), ("AnyoneReturns", 5), ("LeaveWithBooks", 4), ("StuckAtLimit", 7)],
    "shop": [("CancelShipped", 6), ("LastUnitKept", 4), ("PayFreesSlot", 7), ("IdReused", 5)],
    "quota": [("SpreadOverKeys", 8), ("RevokedStillWorks", 3), ("FourthUse", 5)],
    # held out: written before the corpus was built, and used to measure it
    "hotel": [
        ("FullHouse", 10),
        ("LongStay", 8),
        ("BusyClose", 9),
        ("StaleCount", 8),
        ("StaysCapped", 11),
        ("MoveLeaks", 8),
    ],
    # held out (session 7): written before the steering changes it was used to find
    "ledger": [
        ("ChainTransfer", 7),
        ("FifthDeposit", 7),
        ("RepayTwice", 6),
        ("Reopened", 6),
        ("Overdraft", 6),
        ("PerSourceLimit", 8),
        ("SecondThaw", 6),
    ],
    # held out (session 8): written after the last change to the fuzzer, never tuned on
    "depot": [
        ("TwoSources", 8),
        ("SeventhMove", 10),
        ("ThirdUnlock", 8),
        ("FourthOrder", 8),
        ("ReAdded", 8),
        ("FullCancel", 8),
    ],
    # held out (session 9): written before that session's changes to the fuzzer, never tuned on
    "garage": [
        ("SecondLeave", 8),
        ("FifthRelocate", 8),
        ("PeakResize", 8),
        ("RecycledIds", 10),
        ("MiddleLeave", 8),
        ("RelocatedLimit", 10),
    ],
    # held out (session 10): written after that session's first fuzzer change, measured before
    # any change made with it in view
    "registrar": [
        ("FourthCourse", 9),
        ("FullSwapLeak", 8),
        ("DroppedSwaps", 10),
        ("ReopenForgets", 8),
        ("RecreatedCourse", 9),
        ("FrozenSwap", 7),
    ],
    # held out (session 12): written before that session's changes to the fuzzer, in shapes the
    # other sets have less of (two keys each at a limit, a limit summed over keys, an order of
    # three calls on one key, two collections interacting), and measured on the code before them
    "fleet": [
        ("TwoBanned", 8),
        ("RecreatedCar", 9),
        ("WrongDriverCredited", 8),
        ("StrikeWhileOut", 6),
        ("FleetSum", 10),
        ("FourthTrip", 9),
        ("BannedComesBack", 6),
    ],
    # held out (session 14): written without reading the fuzzer, in shapes the others have less
    # of (a limit reached by two operations, three keys, a lifecycle walked twice, an exact amount,
    # optional input fields, a derived read), and measured on the code as it was
    "clinic": [
        ("MixedMoves", 9),
        ("CapOfSource", 7),
        ("SecondBill", 6),
        ("FullPayment", 6),
        ("ReRegistered", 7),
        ("StaleFree", 6),
        ("TriageBypass", 7),
        ("DischargeAdmitter", 7),
    ],
    # held out (session 15): the first in OpenAPI form, written without reading the fuzzer, in
    # shapes the others do not have (a server-assigned number, a nullable session, list fields,
    # a `//` majority, a branch prefix), and measured on the code as it was
    "reviews": [
        ("HalfQuorum", 11),
        ("OwnApprovalKept", 10),
        ("BranchReopens", 8),
        ("Resurrected", 8),
        ("ReleaseSelfMerge", 11),
        ("DraftRefund", 8),
        ("RecreatedReviewer", 10),
        ("ReopenedDraftApproved", 10),
    ],
    # held out (session 18): written without reading the fuzzer, in shapes the others have less
    # of (a clock with deadlines a late bid pushes back, a bid exactly at the leading bid plus the
    # step, funds held across lots and an escrow that must equal them, a per-seller limit counted
    # across records, a lifecycle branching to cancelled, a lot id removed and made again)
    "auction": [
        ("ExactRebid", 8),
        ("ExtendedDeadline", 8),
        ("ThirdExtension", 10),
        ("DraftCancelFreesSlot", 11),
        ("ClosedNotHeld", 8),
        ("StaleLockReleased", 10),
        ("ReusedLotId", 11),
        ("RemoveUnsettled", 8),
    ],
    # held out (session 20): written without reading the fuzzer, in shapes the others have less
    # of (a list field's length limit reached exactly, routes through three hubs with the middle
    # link undone, a limit counted up by two operations, a refund equal to a fee copied from
    # another record, attempts repeated as often as the destination allows, a lifecycle walked
    # twice, outputs pinned by ensures, optional input fields whose absence matters)
    "courier": [
        ("StaleRoutes", 8),
        ("TriesOfOrigin", 8),
        ("NewRateRefund", 9),
        ("ShelfAsStack", 8),
        ("ReturnKeepsRoom", 10),
        ("AttemptsCarriedOver", 10),
        ("ResendUnrouted", 10),
        ("ResendNotCounted", 11),
    ],
    # held out (session 24): written without reading the fuzzer, in shapes the others have less
    # of (a first-come-first-served waitlist as a list field and a cancellation promoting its first
    # waiter, a show's capacity reached exactly, a per-customer limit summed across shows, a ticket
    # passed on between two distinct customers and refunded to its holder, a show's lifecycle with a
    # branch to cancelled, a customer who leaves and signs up again, a box-office-wide limit)
    "boxoffice": [
        ("PromotedNotSeated", 7),
        ("WaitlistAsStack", 8),
        ("TransferKeepsHold", 7),
        ("RefundToBuyer", 7),
        ("PromoteOnCancelledShow", 8),
        ("CancelledShowNotHeld", 8),
        ("ReSignedPassed", 9),
        ("CloseKeepsLive", 10),
    ],
    # held out (session 24): written without reading the fuzzer, in the shape a user reported
    # (eight operations over customers, products and orders; two counters; invariants): ids the
    # store assigns, a per-customer cap and a store-wide one reached exactly, points redeemed and
    # earned with exact amounts, an order's whole lifecycle
    "storefront": [
        ("IdsPerCustomer", 5),
        ("ExactPointsRefused", 5),
        ("CapKeyedBySku", 6),
        ("SharedBasket", 6),
        ("ListPriceRefund", 7),
        ("ReturnKeepsUsedPoints", 8),
        ("RefundBeforeCheck", 8),
        ("PaidCancelKeepsOpen", 9),
    ],
    # held out: written without reading the fuzzer, in shapes the others have less of (memberships
    # numbered by the service, roles changed while members act, one project per owner so that a
    # move between two distinct projects needs a member added, an API key rotated up to a limit
    # around a membership removed and made again, a restart that must fit the quota again, a VM
    # deleted and made again under its name, snapshots summed per project and carried by a move,
    # an optional field that starts a moved VM)
    "cloud": [
        ("SourceStillCounted", 8),
        ("FullStorageMove", 10),
        ("RecreatedVmSnapshots", 10),
        ("RestartOldQuota", 10),
        ("RoleAsAdded", 8),
        ("RejoinKeepsRotations", 8),
        ("MoveStartUnbilled", 8),
        ("StoragePerVm", 11),
    ],
    # held out (session 53): written without reading the fuzzer, in shapes the others have less
    # of (issues numbered by the service, a limit of three in progress per person reached by four
    # starts, a per-person tally forgotten when they leave and come back, a reopen limit with an
    # optional assignee on one reopen, blockers kept as a queue of two, a count of open blockers
    # beside the links, a move checked against the wrong sprint, a capacity summed over the
    # sprint's issues and the ones a close carries into it, a close with an optional target)
    "tracker": [
        ("FourthInProgress", 9),
        ("BlockersAsStack", 8),
        ("RejoinKeepsDone", 7),
        ("ReopenNamedUncounted", 8),
        ("CapacityOfSource", 7),
        ("CarryIgnoresLoad", 8),
        ("DoneCarriedOver", 8),
        ("UnblockDoneDecrements", 8),
    ],
    # held out (session 54): a chat server written without reading the fuzzer (bounded lists
    # with removal spelt out, a limit per person over the messages they have standing, counting
    # people who left, invites numbered by the server good for an optional number of joins, an
    # optional mute flag, a ban that unpins, a nested all over sums)
    "chat": [
        ("SlotKeptOnModeratorDelete", 8),
        ("LimitIgnoresLeavers", 9),
        ("InviteCountsPeople", 9),
        ("ModeratorAnywhereDeletes", 8),
        ("BanUnpinSkips", 10),
        ("LeaverStaysModerator", 8),
        ("InvitePardonsBan", 7),
        ("MuteTogglesByDefault", 7),
    ],
    # held out (session 57): a subscription billing service written without reading the fuzzer
    # (subscriptions numbered by the service, a clock that ends trials and periods, invoices
    # numbered per renewal, a coupon limited in all and once per customer, a credit balance that
    # pays first and takes refunds, a slot limit over the statuses that count, a plan change)
    "billing": [
        ("CouponOncePerSubscription", 7),
        ("CouponOneTooMany", 8),
        ("CancelKeepsPastDueSlot", 9),
        ("ReactivateForgetsOpenInvoice", 7),
        ("PaymentEndsPastDue", 8),
        ("CreditUnusedByDefault", 9),
        ("RefundKeepsCreditPart", 10),
        ("InvoiceAtStartingPrice", 7),
    ],
    # held out (session 57): a warehouse written without reading the fuzzer (lots numbered by the
    # service and reserved first-expiring-first, reservations that lapse on a clock, orders of one
    # or two lines, a limit per customer per product, a store-wide cap of open orders, moves
    # between bins within capacity, a write-off approved by two distinct staff)
    "warehouse": [
        ("FifoByLotNumber", 6),
        ("LapseOneDayLate", 6),
        ("MoveKeepsGivingCount", 6),
        ("SameApproverTwice", 7),
        ("LimitCountsFirstLineOnly", 7),
        ("CancelKeepsOpenSlot", 8),
        ("CancelGivesBackToFirstLine", 8),
        ("WriteOffIgnoresHolds", 9),
    ],
    # held out (session 58): a sports league written without reading the fuzzer (rosters of three,
    # a transfer window, matches numbered by the service between two distinct teams, lineups of
    # two, cards that suspend for the team's next match, a season that ends)
    "league": [
        ("TransferLeavesOldRoster", 7),
        ("RedCardAddsYellow", 7),
        ("TransferForgetsSuspension", 8),
        ("TransferResetsYellows", 8),
        ("ServedByHomeSideOnly", 9),
        ("DropKeepsLineupCount", 9),
        ("ResultIgnoresSuspension", 9),
        ("BookedOnceByLastMatch", 10),
    ],
    # held out (session 58): a shared drive written without reading the fuzzer (folders and files
    # numbered by the service, nested three deep, shares that reach inside a folder, a quota of
    # versions, a trash of three with restore, download links with a limit)
    "drive": [
        ("RestoreNameCheckedInOldFolder", 7),
        ("HeightIgnoresTrash", 7),
        ("SpreadStopsThreeDown", 8),
        ("MoveRefreshesItemOnly", 8),
        ("RefusedDownloadCounts", 8),
        ("DropFreesUploader", 9),
        ("RestoreToRootKeepsTrashSlot", 9),
        ("ViewerKeptOnUpgrade", 9),
    ],
}
CORRECT = {
    "library": "Library",
    "shop": "Shop",
    "quota": "Keys",
    "hotel": "Hotel",
    "ledger": "Ledger",
    "depot": "Depot",
    "garage": "Garage",
    "registrar": "Registrar",
    "fleet": "Fleet",
    "clinic": "Clinic",
    "reviews": "Reviews",
    "auction": "Auction",
    "courier": "Courier",
    "boxoffice": "BoxOffice",
    "storefront": "Storefront",
    "cloud": "Cloud",
    "tracker": "Tracker",
    "chat": "Chat",
    "billing": "Billing",
    "warehouse": "Warehouse",
    "league": "League",
    "drive": "Drive",
}


CPU_AT_FIRST: list[float] = []
"""CPU seconds each envfactory deep run had spent at its first finding (a loaded machine stretches
wall-clock time, not this)."""


def deep_envfactory(contract: Any, spec: str, budget: float, seed: int) -> tuple[float | None, int | None]:
    """envfactory as a user runs it (default options, the time budget), stopping at a finding."""
    from envfactory.fuzz.runner import fuzz
    from envfactory.fuzz.targets import open_target

    target = open_target(spec, contract)
    cpu = time.process_time()
    first: list[float] = []
    try:
        summary = fuzz(
            contract,
            target,
            seed=seed,
            time_budget=budget,
            multiple=False,
            on_finding=lambda _: first.append(time.process_time() - cpu),
        )
    finally:
        target.close()
    if not summary.findings:
        return None, None
    CPU_AT_FIRST.append(first[0] if first else time.process_time() - cpu)
    return summary.first_finding_seconds, min(len(f.steps) for f in summary.findings)


def deep_random(contract: Any, spec: str, budget: float, seed: int) -> float | None:
    return run_random(contract, spec, budget, seed, steps=20)


def deep_handwritten(spec: str, budget: float, seed: int) -> float | None:
    """A hand-written state machine for the library contract: the model and the target side by
    side, bundles so that calls name members and books that exist, every response checked."""
    from hypothesis import strategies as st
    from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, rule, run_state_machine_as_test

    from envfactory.fuzz.targets import load_factory

    factory = load_factory(spec)
    start = time.monotonic()
    spent: list[bool] = []

    def status(call: Callable[[], Any]) -> int:
        try:
            call()
        except Exception as err:  # the target protocol: an integer status means an error response
            code = getattr(err, "status", None)
            if isinstance(code, int):
                return code
            raise
        return 200

    class Library(RuleBasedStateMachine):
        members = Bundle("members")
        books = Bundle("books")

        def __init__(self) -> None:
            super().__init__()
            if time.monotonic() - start > budget:
                spent.append(True)
                raise TimeoutError("budget spent")
            self.lib = factory()
            self.loans: dict[str, int] = {}
            self.holder: dict[str, str | None] = {}

        @rule(target=members, name=st.text(min_size=1, max_size=5))
        def join(self, name: str) -> Any:
            assert status(lambda: self.lib.join(name=name)) == (409 if name in self.loans else 200)
            self.loans.setdefault(name, 0)
            return name

        @rule(target=books, isbn=st.text(min_size=1, max_size=5))
        def add_book(self, isbn: str) -> Any:
            assert status(lambda: self.lib.addBook(isbn=isbn, title="t")) == (
                409 if isbn in self.holder else 200
            )
            self.holder.setdefault(isbn, None)
            return isbn

        @rule(name=members, isbn=books)
        def borrow(self, name: str, isbn: str) -> None:
            if name not in self.loans:
                return
            ok = self.holder[isbn] is None and self.loans[name] < 2
            assert (status(lambda: self.lib.borrow(name=name, isbn=isbn)) == 200) == ok
            if ok:
                self.holder[isbn] = name
                self.loans[name] += 1

        @rule(name=members, isbn=books)
        def give_back(self, name: str, isbn: str) -> None:
            if name not in self.loans:
                return
            ok = self.holder[isbn] == name
            assert (status(lambda: self.lib.giveBack(name=name, isbn=isbn)) == 200) == ok
            if ok:
                self.holder[isbn] = None
                self.loans[name] -= 1

        @rule(name=consumes(members))
        def leave(self, name: str) -> None:
            if name not in self.loans:
                return
            ok = self.loans[name] == 0
            assert (status(lambda: self.lib.leave(name=name)) == 200) == ok
            if ok:
                del self.loans[name]

        @rule()
        def on_loan(self) -> None:
            assert self.lib.onLoan() == {"count": sum(self.loans.values())}

    config = baseline_settings(steps=20)
    Library._hypothesis_internal_use_seed = seed  # type: ignore[attr-defined]
    try:
        run_state_machine_as_test(Library, settings=config)
    except BaseException:
        return None if spent else time.monotonic() - start
    return None


def deep(budget: float, seed_count: int, sets: str | None = None) -> None:
    import envfactory

    rows = []
    found: dict[str, list[float]] = {"envfactory": [], "random": [], "hand-written": []}
    runs = {"envfactory": 0, "random": 0, "hand-written": 0}
    false_alarms = 0
    chosen = {name: DEEP[name] for name in (sets.split(",") if sets else DEEP)}
    for name, bugs in chosen.items():
        contract = envfactory.load(IMPLS / f"{name}.yaml")
        module = IMPLS / f"{name}_impl.py"
        for seed in range(seed_count):
            time_, _ = deep_envfactory(contract, f"python:{module}:{CORRECT[name]}", budget, seed)
            false_alarms += time_ is not None
            if name == "library":  # the baseline must not fail on the correct library either
                assert deep_handwritten(f"python:{module}:{CORRECT[name]}", budget, seed) is None
        for bug, minimal in bugs:
            spec = f"python:{module}:{bug}"
            ours = [deep_envfactory(contract, spec, budget, seed) for seed in range(seed_count)]
            rand = [deep_random(contract, spec, budget, seed) for seed in range(seed_count)]
            hand = (
                [deep_handwritten(spec, budget, seed) for seed in range(seed_count)]
                if name == "library"
                else []
            )
            for label, times in (
                ("envfactory", [t for t, _ in ours]),
                ("random", rand),
                ("hand-written", hand),
            ):
                runs[label] += len(times)
                found[label] += [t for t in times if t is not None]
            lengths = [n for _, n in ours if n is not None]
            rows.append((f"{name}.{bug}", minimal, ours, rand, hand, lengths))
    print(
        f"deep planted bugs: {sum(len(b) for b in chosen.values())}, {seed_count} seeds, budget {budget:g}s per run"
    )
    print(f"false alarms on the correct implementations: {false_alarms} of {len(chosen) * seed_count} runs")
    print(f"{'bug':<26}{'min':>4}{'envfactory':>16}{'shrunk to':>12}{'random':>12}{'hand-written':>14}")

    def cell(times: list[Any]) -> str:
        hits = [t for t in times if t is not None]
        if not times:
            return "-"
        return f"{len(hits)}/{len(times)}" + (f" {statistics.median(hits):.1f}s" if hits else "")

    for bug, minimal, ours, rand, hand, lengths in rows:
        shrunk = ",".join(map(str, lengths)) or "-"
        print(
            f"{bug:<26}{minimal:>4}{cell([t for t, _ in ours]):>16}{shrunk:>12}{cell(rand):>12}{cell(hand):>14}"
        )
    ours_median = statistics.median(found["envfactory"]) if found["envfactory"] else None
    for label in found:
        share = f"{len(found[label])}/{runs[label]}"
        median = statistics.median(found[label]) if found[label] else None
        ratio = (
            f", {median / ours_median:.1f}x envfactory's median"
            if median and ours_median and label != "envfactory"
            else ""
        )
        shown = f"{median:.2f}s" if median is not None else "n/a"
        print(f"{label:<13} found {share} runs, median time to first finding {shown}{ratio}")
    if CPU_AT_FIRST:
        print(f"envfactory median CPU seconds to first finding: {statistics.median(CPU_AT_FIRST):.2f}")
    minimal = sum(1 for _, m, _, _, _, lengths in rows if lengths and max(lengths) == m)
    print(f"envfactory shrunk to the minimal length on every seed: {minimal} of {len(rows)} bugs")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per bug per fuzzer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--deep-budget", type=float, default=5.0, help="seconds per deep-bug run")
    parser.add_argument("--deep-seeds", type=int, default=3)
    parser.add_argument(
        "--deep-sets",
        default=",".join(DEEP),
        help="comma-separated contracts of the deep bugs (default: all)",
    )
    parser.add_argument("--only-deep", action="store_true", help="skip the HTTP bugs and the throughput")
    parser.add_argument("--only-throughput", action="store_true", help="the calls per second alone")
    parser.add_argument(
        "--schemathesis-python",
        default=None,
        metavar="PYTHON",
        help="a Python with schemathesis installed (a separate venv), for baseline (b)",
    )
    parser.add_argument(
        "--against", default=None, metavar="REV", help="also measure the throughput of git revision REV"
    )
    args = parser.parse_args()
    if args.only_throughput:
        sys.path.insert(0, str(ROOT))
        report_throughput(args.against)
        return
    if args.only_deep:
        sys.path.insert(0, str(ROOT))
        deep(args.deep_budget, args.deep_seeds, args.deep_sets)
        return
    sys.path.insert(0, str(ROOT))
    import envfactory

    st_python = schemathesis_python(args.schemathesis_python)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "petstore.json"
        path.write_text(json.dumps(SPEC))
        contract = envfactory.load(path)
    fuzzers: dict[str, Callable[[str], float | None]] = {
        "envfactory": lambda url: run_envfactory(contract, url, args.budget, args.seed),
        "random": lambda url: run_random(contract, url, args.budget, args.seed),
    }
    if st_python is not None:
        fuzzers["schemathesis"] = lambda url: run_schemathesis_in(st_python, url, args.budget, args.seed)
    results: dict[str, dict[str, float | None]] = {name: {} for name in fuzzers}
    with serving(make_app(None)) as url:
        clean = {name: fn(url) for name, fn in fuzzers.items()}
    for bug in BUGS:
        with serving(make_app(bug)) as url:
            for name, fn in fuzzers.items():
                results[name][bug] = fn(url)
    print(f"planted bugs: {len(BUGS)}, budget {args.budget:.1f}s per bug per fuzzer, seed {args.seed}")
    print(
        f"false alarms on the correct server: {', '.join(f'{k}={v is not None}' for k, v in clean.items())}"
    )
    print(f"{'bug':<20}" + "".join(f"{name:>16}" for name in fuzzers))
    for bug in BUGS:
        cells = "".join(
            f"{(f'{results[name][bug]:.2f}s' if results[name][bug] is not None else 'missed'):>16}"
            for name in fuzzers
        )
        print(f"{bug:<20}{cells}")
    ours = [t for t in results["envfactory"].values() if t is not None]
    ours_median = statistics.median(ours) if ours else None
    for name in fuzzers:
        times = [t for t in results[name].values() if t is not None]
        median = statistics.median(times) if times else None
        ratio = (
            f", {median / ours_median:.2f}x envfactory's median"
            if median is not None and ours_median and name != "envfactory"
            else ""
        )
        shown = f"{median:.2f}s" if median is not None else "n/a"
        print(f"{name:<13} found {len(times)}/{len(BUGS)}, median time to first failure {shown}{ratio}")
    if st_python is None:
        print(
            "schemathesis: not importable here nor by --schemathesis-python (pip install schemathesis,"
            " in a separate venv if need be), baseline (b) skipped"
        )
    rates = report_throughput(args.against)
    fast_cpu = rates["fast"][1]
    print(
        f"target >= 3,000 calls/s: {'met' if fast_cpu >= 3000 else 'not met'} (fast engine, per CPU-second)"
    )
    deep(args.deep_budget, args.deep_seeds, args.deep_sets)


if __name__ == "__main__":
    main()
