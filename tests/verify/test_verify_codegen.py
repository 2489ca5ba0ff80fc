"""Generated checkers (``envfactory.contracts.codegen``, issue 17 item 1) under DESIGN.md's rules:

* the source of every bundled, corpus and test contract's checkers holds only generator-made
  identifiers and attribute names, and no constant but ``True``/``False``/``None``: every name,
  key, string and number of a contract reaches the code as data, never as source;
* the generated code never says "every clause holds" where the reference (the tree-walking
  interpreter) says one does not, over drawn expressions and drawn states (differential);
* it does settle the common case (else it would be a slower no-op), and a node it does not know
  is read through its closure.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts import codegen, interpreter, ir
from envfactory.contracts.errors import EvaluationError, ExpressionError
from envfactory.contracts.evaluator import Env
from envfactory.contracts.parser import parse_expr
from envfactory.contracts.values import FrozenMap

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import strategies as S
from graph import _graph_contracts as G

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path("/work/shared/corpus/openapi")


def _contract_files() -> list[Path]:
    files = [
        *sorted((ROOT / "examples").glob("*/*.yaml")),
        ROOT / "tests" / "simulator" / "pets_openapi.yaml",
    ]
    files += [p for p in sorted(CORPUS.glob("*.yaml"))] if CORPUS.is_dir() else []
    return files


def _step_sources(contract: envfactory.Contract) -> list[tuple[str, list[str]]]:
    """The generated source of every operation's step checker (``codegen.step_source``)."""
    from envfactory._fastpath import collection_vars
    from envfactory.verification import Verifier, step_spec

    out = []
    for plan in Verifier(contract).plans.values():
        try:
            source, names, data = codegen.step_source(step_spec(plan, collection_vars(contract)))
        except codegen.Unsupported:
            continue
        assert len(names) == len(data)
        out.append((source, names))
    return out


def _clause_groups(contract: envfactory.Contract) -> list[list[ir.Expr]]:
    groups = [[c.expr for c in contract.invariants]]
    for op in contract.operations.values():
        groups += [[c.expr for c in op.requires], [c.expr for c in op.ensures]]
    return [g for g in groups if g]


def assert_safe(source: str, names: list[str]) -> None:
    """Every identifier generator-made, every constant a generator literal, every attribute one of
    the generator's: nothing from the contract is in the source."""
    tree = ast.parse(source)
    allowed = codegen.generated_names(len(names) + source.count("_v"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            assert node.id in allowed, node.id
        elif isinstance(node, ast.arg):
            assert node.arg in allowed, node.arg
        elif isinstance(node, ast.FunctionDef):
            assert node.name in allowed, node.name
        elif isinstance(node, ast.Constant):
            assert node.value is None or node.value is True or node.value is False, repr(node.value)
        elif isinstance(node, ast.Attribute):
            assert node.attr in codegen.ATTRIBUTES, node.attr
        elif isinstance(node, ast.JoinedStr | ast.Lambda | ast.Import | ast.ImportFrom | ast.Global):
            pytest.fail(f"generated source holds {type(node).__name__}")


@pytest.mark.parametrize("path", _contract_files(), ids=lambda p: p.name)
def test_generated_source_of_every_bundled_contract_takes_constants_as_data(path: Path) -> None:
    contract = envfactory.load(path)
    groups = _clause_groups(contract)
    for group in groups:
        source, names, data = codegen.source_of(group)
        assert_safe(source, names)
        assert len(names) == len(data)
    for source, names in _step_sources(contract):
        assert_safe(source, names)


@pytest.mark.parametrize("text", [G.COUNTER, G.DOOR, G.TRAP], ids=["counter", "door", "trap"])
def test_generated_source_of_test_contracts_takes_constants_as_data(text: str, tmp_path: Path) -> None:
    contract = G.write_contract(tmp_path, "c", text)
    for group in _clause_groups(contract):
        assert_safe(*codegen.source_of(group)[:2])
    for source, names in _step_sources(contract):
        assert_safe(source, names)


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(S.small_contracts())
def test_generated_source_of_drawn_contracts_takes_constants_as_data(text: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.yaml"
        path.write_text(text, "utf-8")
        contract = envfactory.load(path)
    for group in _clause_groups(contract):
        assert_safe(*codegen.source_of(group)[:2])
    for source, names in _step_sources(contract):
        assert_safe(source, names)


def test_a_hostile_constant_stays_data() -> None:
    text = '"x\\"); import os; os._exit(3) #" == s and x == 12345 and c[0].tag != "__import__"'
    source, names, data = codegen.source_of([parse_expr(text)])
    assert_safe(source, names)
    assert "12345" not in source and "import" not in source.replace("_factory", "")
    assert 12345 in data and "__import__" in data


def test_a_hostile_constant_in_a_step_stays_data() -> None:
    from envfactory.contracts.parser import parse_effect

    spec = codegen.StepSpec(
        requires=(parse_expr('c[input.k].tag != "\\"); __import__(\'os\')._exit(3) #"'),),
        effects=(
            parse_effect('c[input.k] = {"__class__": 98765, "x\\"); import os": input.v}'),
            parse_effect('c[input.k].tag = "__builtins__"'),
        ),
        ensures=(parse_expr("len(c) >= 424242"),),
        rechecks=((parse_expr("all(k < 31337 for k in c)"), True),),
        input_test=None,
        output_test=None,
        needs_output=False,
        collections=frozenset({"c"}),
    )
    source, names, data = codegen.step_source(spec)
    assert_safe(source, names)
    for number in ("98765", "424242", "31337", "import os", "__builtins__"):
        assert number not in source
    assert 98765 in data and 424242 in data and "__builtins__" in data


def _reference(exprs: list[ir.Expr], env: Env) -> bool:
    try:
        return all(interpreter.evaluate(e, env) is True for e in exprs)
    except EvaluationError:
        return False


def _generated(exprs: list[ir.Expr], env: Env) -> bool:
    check = codegen.all_true(exprs)
    assert check is not None
    try:
        return check(env) is True
    except Exception:  # "not sure", as the verifier reads it (``verification._surely``)
        return False


INPUTS = st.one_of(
    st.none(),
    st.integers(-2, 2),
    st.fixed_dictionaries(
        {},
        optional={
            "a": st.integers(-2, 3)
            | st.text("ab", max_size=2)
            | st.none()
            | st.booleans()
            | st.sampled_from([1.0, 0.5]),
            "k": S.keys,
        },
    ),
)
INPUT_TEXTS = [
    "input.a > x",
    "input.a == s",
    "input.k in c",
    "not (input.k in c)",
    "c[input.k].a >= input.a",
    "input.a + 1 != y",
    "implies(input.a == 0, b)",
    "(input.a if b else x) <= 3",
    "len(c) < input.a",
    "input.a == 1",
    "input.a != 0",
    "input.a == true",
    "input.a != false",
    'input.a == "a"',
    "input.a != null",
    "input.a == input.a",
    "c[input.k].a == 1",
    # ill-typed on purpose: the reference calls these undefined, never true
    "not n",
    "not input.a",
    "b and input.a",
    "input.a or not b",
    "(input.a if input.a else b) == 1",
    "input.a == n",
    "-input.a < x",
    "c[input.a].ok",
]
INPUT_CLAUSES = st.sampled_from(INPUT_TEXTS)


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(st.lists(INPUT_CLAUSES, max_size=2), st.lists(S.expressions("bool"), max_size=2), S.states(), INPUTS)
def test_generated_code_never_says_true_where_the_reference_does_not(
    chosen: list[str], drawn: list[str], state: FrozenMap, value: Any
) -> None:
    texts = chosen + drawn
    assume(texts)
    try:
        exprs = [parse_expr(t) for t in texts]
    except ExpressionError:  # the drawn text is sometimes not an expression (the parser says so)
        assume(False)
        return
    env = Env(state, value)
    if _generated(exprs, Env(state, value)):
        assert _reference(exprs, env), texts


FIXED_STATES = [
    FrozenMap(
        {
            "x": x,
            "y": 2,
            "n": n,
            "s": "a",
            "t": "ab",
            "b": b,
            "l": [1],
            "c": FrozenMap(
                {0: {"a": 1, "ok": True}, 1: {"a": True, "ok": False, "tag": "a"}, 2: {"a": 1.0, "ok": b}}
            ),
        }
    )
    for x, n, b in ((1, None, True), (0, 1, False), (-1, 0, True))
]
FIXED_INPUTS = [
    None,
    0,
    {},
    *(
        {"a": a, "k": k}
        for a in (1, 0, True, False, 1.0, 0.5, "a", "", None, -1)
        for k in (0, 1, 2, 3, "0", 1.0)
    ),
]


def test_generated_code_agrees_with_the_reference_on_every_input_clause() -> None:
    """Exhaustive over the input clauses, a grid of inputs (booleans against numbers, floats,
    strings, null, missing keys) and a few states: never True where the reference is not, and
    True wherever the reference is on these plain values."""
    settled = 0
    for text in INPUT_TEXTS:
        expr = [parse_expr(text)]
        for state in FIXED_STATES:
            for value in FIXED_INPUTS:
                ours, theirs = _generated(expr, Env(state, value)), _reference(expr, Env(state, value))
                assert not ours or theirs, (text, value)
                settled += ours
    assert settled > 100


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(S.states())
def test_generated_code_settles_plain_clauses(state: FrozenMap) -> None:
    """On exact ints, strings, booleans, records and collections it answers like the reference,
    True included (a checker that always said "not sure" would pass the test above)."""
    texts = [
        "x == x",
        "x + y == y + x and s == s",
        "not (b and not b)",
        "len(c) >= 0",
        "(0 in c) or not (0 in c)",
        "implies(0 in c, c[0].a == c[0].a)",
        "(x if b else y) <= 6",
        "s != t or s == t",
    ]
    for text in texts:
        assert _generated([parse_expr(text)], Env(state)) is True, text
        assert _reference([parse_expr(text)], Env(state)) is True, text


def test_a_node_the_generator_does_not_know_is_read_through_its_closure() -> None:
    """``min`` has no generated form: read through its closure. In a quantifier's body the
    closure could not see the loop variable, so the whole quantifier goes to its closure."""
    for text in ("min(x, y) <= x and x == x", "all(min(c[k].a, 0) <= 0 for k in c) and x == x"):
        expr = parse_expr(text)
        names = codegen.source_of([expr])[1]
        assert sum(n.startswith("_f") for n in names) == 1, text
    expr = parse_expr("all(min(c[k].a, 5) > -10 for k in c) and x == x")
    state = FrozenMap({"x": 1, "y": 2, "c": FrozenMap({0: {"a": 1, "ok": True}})})
    assert _generated([expr], Env(state)) is True
    broken = FrozenMap({"x": 1, "y": 2, "c": FrozenMap({0: {"a": -20, "ok": True}})})
    assert _generated([expr], Env(broken)) is False


def test_quantifiers_are_generated_as_loops() -> None:
    expr = parse_expr("all(c[k].a > -10 for k in c) and sum(c[k].a for k in c if c[k].ok) >= 0")
    source, names, _ = codegen.source_of([expr])
    assert not any(n.startswith("_f") for n in names) and "for " in source
    state = FrozenMap({"c": FrozenMap({0: {"a": 1, "ok": True}, 1: {"a": 3, "ok": False}})})
    assert _generated([expr], Env(state)) is True
    assert _generated([expr], Env(FrozenMap({"c": FrozenMap({0: {"a": -20, "ok": True}})}))) is False


def test_verify_uses_the_generated_checkers(tmp_path: Path) -> None:
    """The verifier's plans hold a generated checker for each operation with requires, and the
    bundled examples verify as before."""
    from envfactory.verification import Verifier

    contract = envfactory.load(ROOT / "examples" / "tickets" / "tickets.yaml")
    verifier = Verifier(contract)
    for name, plan in verifier.plans.items():
        assert (plan.requires_all is not None) == bool(contract.operations[name].requires)
        assert (plan.ensures_all is not None) == bool(contract.operations[name].ensures)
