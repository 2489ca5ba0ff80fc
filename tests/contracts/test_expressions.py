"""The expression language: parser, printer, evaluator laws, and agreement of the two interpreters."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envfactory.contracts import evaluator, interpreter, ir, printer
from envfactory.contracts import types as T
from envfactory.contracts.errors import EvaluationError, ExpressionError, Location
from envfactory.contracts.evaluator import Env, compile_expr
from envfactory.contracts.parser import parse_effect, parse_expr
from envfactory.contracts.typecheck import TypeChecker
from envfactory.contracts.values import FrozenMap

ITEM = T.RecordType((("v", T.INT), ("ok", T.BOOL)), frozenset({"v", "ok"}), False)
SCOPE: dict[str, T.Type] = {
    "n": T.INT,
    "m": T.INT,
    "flag": T.BOOL,
    "name": T.union([T.STRING, T.NULL]),
    "items": T.MapType(T.INT, ITEM),
}

# -- strategies: well-typed expressions over SCOPE and concrete states ---------------------------

small_ints = st.integers(-6, 6)


def int_exprs() -> st.SearchStrategy[ir.Expr]:
    leaves = st.one_of(
        small_ints.map(ir.Const),
        st.sampled_from([ir.Name("n"), ir.Name("m")]),
        st.just(ir.Call("len", (ir.Name("items"),))),
    )

    def extend(children: st.SearchStrategy[ir.Expr]) -> st.SearchStrategy[ir.Expr]:
        return st.one_of(
            st.builds(ir.BinOp, st.sampled_from(["+", "-", "*", "//", "%"]), children, children),
            children.map(negate),
            st.builds(
                lambda f, a, b: ir.Call(f, (a, b)), st.sampled_from(["min", "max"]), children, children
            ),
            st.builds(ir.Call, st.just("abs"), st.tuples(children)),
            st.builds(lambda k: ir.Attr(ir.Index(ir.Name("items"), k), "v"), children),
            st.builds(lambda c, a, b: ir.IfExp(c, a, b), bool_leaf(), children, children),
            st.just(
                ir.Quant("sum", "k", ir.Name("items"), ir.Attr(ir.Index(ir.Name("items"), ir.Name("k")), "v"))
            ),
        )

    return st.recursive(leaves, extend, max_leaves=5)


def negate(e: ir.Expr) -> ir.Expr:
    """Negation in the parser's canonical form (negative literals are folded)."""
    if isinstance(e, ir.Const) and isinstance(e.value, int):
        return ir.Const(-e.value)
    return ir.Unary("-", e)


def bool_leaf() -> st.SearchStrategy[ir.Expr]:
    return st.one_of(
        st.booleans().map(ir.Const),
        st.just(ir.Name("flag")),
        st.builds(lambda k: ir.Compare("in", k, ir.Name("items")), small_ints.map(ir.Const)),
        st.just(ir.Compare("==", ir.Name("name"), ir.Const(None))),
    )


def bool_exprs() -> st.SearchStrategy[ir.Expr]:
    ints = int_exprs()

    def extend(children: st.SearchStrategy[ir.Expr]) -> st.SearchStrategy[ir.Expr]:
        return st.one_of(
            st.builds(ir.Unary, st.just("not"), children),
            st.builds(
                lambda op, xs: ir.BoolOp(op, tuple(xs)),
                st.sampled_from(["and", "or"]),
                st.lists(children, min_size=2, max_size=3),
            ),
            st.builds(ir.Compare, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), ints, ints),
            st.builds(lambda a, b: ir.Call("implies", (a, b)), children, children),
            st.builds(
                lambda body: ir.Quant("all", "k", ir.Name("items"), body),
                st.just(ir.Attr(ir.Index(ir.Name("items"), ir.Name("k")), "ok")),
            ),
            st.builds(
                lambda c: ir.Quant(
                    "any",
                    "k",
                    ir.Name("items"),
                    ir.Compare(">", ir.Attr(ir.Index(ir.Name("items"), ir.Name("k")), "v"), c),
                ),
                small_ints.map(ir.Const),
            ),
            st.builds(
                lambda p: ir.Call("startswith", (ir.Const("abc"), ir.Const(p))),
                st.sampled_from(["", "a", "ab", "b"]),
            ),
        )

    return st.recursive(bool_leaf(), extend, max_leaves=5)


@st.composite
def states(draw: st.DrawFn) -> FrozenMap:
    items = draw(
        st.dictionaries(small_ints, st.fixed_dictionaries({"v": small_ints, "ok": st.booleans()}), max_size=4)
    )
    return FrozenMap(
        {
            "n": draw(small_ints),
            "m": draw(small_ints),
            "flag": draw(st.booleans()),
            "name": draw(st.one_of(st.none(), st.sampled_from(["ann", "bob", ""]))),
            "items": FrozenMap(items),
        }
    )


def outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        return ("value", fn(*args))
    except EvaluationError:
        return ("undefined", None)


# -- every interpreter covers every node ------------------------------------------------------------


def test_every_interpreter_covers_every_node_type() -> None:
    every = frozenset(ir.NODE_TYPES)
    assert evaluator.covers() == every
    assert interpreter.covers() == every
    assert printer.covers() == every
    assert {t for t in every if hasattr(TypeChecker, "_" + t.__name__)} == every


# -- differential and algebraic properties ----------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(bool_exprs() | int_exprs(), states())
def test_compiled_closures_agree_with_the_tree_walker(expr: ir.Expr, state: FrozenMap) -> None:
    assert outcome(compile_expr(expr), Env(state)) == outcome(interpreter.evaluate, expr, Env(state))


# The closures read leaves inline (``input.f``, ``output.f``, state variables, loop variables,
# ``c[input.f].g``), each with a fast path for the usual shape and a fallback for the rest. These
# expressions put those leaves in every operator, and the values include what the fast paths do
# not expect (an input that is a list or null, a field that is missing, a record where a number
# should be), so both paths are compared with the tree walker.
CALL_LEAVES = [
    "input.a",
    "input.b",
    "output.a",
    "input",
    "n",
    "name",
    "items[input.a].v",
    "items[output.a].ok",
    "items[n].v",
    "1",
    "0",
    "null",
    '"ann"',
    "true",
]


def call_exprs() -> st.SearchStrategy[str]:
    """Mostly an operator between two leaves (the shapes the closures inline), sometimes nested
    one level: in a boolean connective, under ``not``, in a quantifier, in more arithmetic."""
    leaf = st.sampled_from(CALL_LEAVES)
    ops = st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "+", "-", "in"])
    binary = st.tuples(leaf, ops, leaf).map(lambda p: f"({p[0]} {p[1]} {p[2]})")
    atom = st.one_of(binary, leaf.map(lambda a: f"({a} in items)"), leaf)
    return st.one_of(
        atom,
        st.tuples(atom, st.sampled_from(["and", "or"]), atom).map(lambda p: f"({p[0]} {p[1]} {p[2]})"),
        atom.map(lambda a: f"(not ({a}))"),
        st.tuples(atom, atom).map(lambda p: f"implies({p[0]}, {p[1]})"),
        atom.map(lambda a: f"all(({a}) == items[k].v for k in items)"),
        st.tuples(binary, ops, leaf).map(lambda p: f"({p[0]} {p[1]} {p[2]})"),
    )


SCALARS = [None, True, 0, 1, 2, "ann", ""]
INPUTS = st.one_of(
    st.sampled_from([*SCALARS, [1, 2]]),
    st.fixed_dictionaries(
        {}, optional={"a": st.sampled_from([*SCALARS, [1], {"v": 1}]), "b": st.sampled_from(SCALARS)}
    ),
)
OUTPUTS = INPUTS
"""Small domains, so that leaves often meet equal values: a value the fast paths do not expect
(a list or null where a record is read, a missing field, a record as a key) is drawn often."""


@settings(max_examples=500, deadline=None, database=None, derandomize=True)
@given(call_exprs(), states(), INPUTS, OUTPUTS)
def test_closures_agree_with_the_tree_walker_on_inputs_and_outputs(
    text: str, state: FrozenMap, value: Any, output: Any
) -> None:
    expr = parse_expr(text)
    assert outcome(compile_expr(expr), Env(state, value, output)) == outcome(
        interpreter.evaluate, expr, Env(state, value, output)
    ), text


CALL_ENVS = [
    (1, {"a": 1}),
    ({"a": 1, "b": "ann"}, {"a": 2}),
    ({"a": [1], "b": None}, None),
    ({}, {"a": True}),
    (None, "ann"),
    ([1, 2], 1),
]
"""(input, output) pairs for the sweep: equal and different values, missing fields, non-records."""


def test_every_operator_between_leaves_agrees_with_the_tree_walker() -> None:
    """Every operator between every two leaves, in states and calls that make the leaves equal,
    different, missing or of the wrong kind: the inline paths of the closures, exhaustively."""
    state = FrozenMap(
        {
            "n": 1,
            "m": 0,
            "flag": True,
            "name": "ann",
            "items": FrozenMap({1: {"v": 1, "ok": True}, 2: {"v": 0, "ok": False}}),
        }
    )
    for left in CALL_LEAVES:
        for right in CALL_LEAVES:
            for op in ("==", "!=", "<", "<=", ">", ">=", "+", "-", "in", "and", "or"):
                expr = parse_expr(f"({left} {op} {right})")
                for value, output in CALL_ENVS:
                    env = Env(state, value, output)
                    assert outcome(compile_expr(expr), env) == outcome(interpreter.evaluate, expr, env), (
                        f"({left} {op} {right})",
                        value,
                        output,
                    )


CONSTANTS = ["null", '"ann"', '""', "1", "0", "1.0", "-1", "true", "false"]
PARSED_VALUES = json.loads('[null, "ann", "", "bob", 1, 0, 1.0, 0.5, -1, true, false, [1], {"v": 1}]')
"""Values as a trajectory brings them: parsed at run time, so no string is the constant's own
object (an identity test in place of ``==`` would show)."""


def test_a_computed_value_against_every_constant_agrees_with_the_tree_walker() -> None:
    """``e OP constant`` and ``constant OP e`` with ``e`` computed (not a leaf), for every parsed
    value: the closures that compare with a constant inline."""
    for value in PARSED_VALUES:
        env = Env(FrozenMap({"items": FrozenMap({1: {"w": value}})}), {"k": 1})
        for constant in CONSTANTS:
            for op in ("==", "!=", "<", "<=", ">", ">="):
                for text in (f"items[input.k].w {op} {constant}", f"{constant} {op} items[input.k].w"):
                    expr = parse_expr(text)
                    assert outcome(compile_expr(expr), env) == outcome(interpreter.evaluate, expr, env), (
                        text,
                        value,
                    )


@settings(max_examples=200, deadline=None)
@given(bool_exprs() | int_exprs())
def test_printing_then_parsing_gives_the_same_tree(expr: ir.Expr) -> None:
    assert parse_expr(printer.to_source(expr)) == expr


@settings(max_examples=200, deadline=None)
@given(bool_exprs() | int_exprs(), st.integers(min_value=0))
def test_a_tree_rebuilt_child_by_child_is_visited_in_walk_order(expr: ir.Expr, pick: int) -> None:
    """``ir.with_children`` calls its change in the order ``walk`` visits (so a rewrite can count
    reads as the evaluator meets them), keeps a tree nothing changes, and replaces just the node
    changed."""
    nodes = list(ir.walk(expr))
    seen: list[ir.Expr] = []

    def copy(node: ir.Expr) -> ir.Expr:
        seen.append(node)
        return ir.with_children(node, copy)

    assert copy(expr) is expr
    assert len(seen) == len(nodes) and all(a is b for a, b in zip(seen, nodes, strict=True))
    k = pick % len(nodes)
    count = [0]
    marker = ir.Const("marker")

    def swap(node: ir.Expr) -> ir.Expr:
        count[0] += 1
        return marker if count[0] == k + 1 else ir.with_children(node, swap)

    changed = list(ir.walk(swap(expr)))
    assert changed[k] is marker
    assert len(changed) == len(nodes) - len(list(ir.walk(nodes[k]))) + 1


@settings(max_examples=200, deadline=None)
@given(bool_exprs() | int_exprs())
def test_generated_expressions_type_check(expr: ir.Expr) -> None:
    TypeChecker(SCOPE).check(expr)


@settings(max_examples=200, deadline=None)
@given(bool_exprs(), bool_exprs(), states())
def test_de_morgan_and_short_circuit(a: ir.Expr, b: ir.Expr, state: FrozenMap) -> None:
    env = Env(state)
    lhs = outcome(compile_expr(ir.Unary("not", ir.BoolOp("and", (a, b)))), env)
    rhs = outcome(compile_expr(ir.BoolOp("or", (ir.Unary("not", a), ir.Unary("not", b)))), env)
    assert lhs == rhs
    # false and <anything, even undefined> is false; true or <anything> is true
    undefined = ir.Attr(ir.Index(ir.Name("items"), ir.Const(999)), "ok")
    assert compile_expr(ir.BoolOp("and", (ir.Const(False), undefined)))(env) is False
    assert compile_expr(ir.BoolOp("or", (ir.Const(True), undefined)))(env) is True
    assert compile_expr(ir.Call("implies", (ir.Const(False), undefined)))(env) is True


@settings(max_examples=200, deadline=None)
@given(int_exprs(), int_exprs(), states())
def test_floor_division_and_modulo_follow_python(a: ir.Expr, b: ir.Expr, state: FrozenMap) -> None:
    env = Env(state)
    x, y = outcome(compile_expr(a), env), outcome(compile_expr(b), env)
    if x[0] == "undefined" or y[0] == "undefined":
        return
    div = outcome(compile_expr(ir.BinOp("//", a, b)), env)
    mod = outcome(compile_expr(ir.BinOp("%", a, b)), env)
    if y[1] == 0:
        assert div[0] == mod[0] == "undefined"
    else:
        assert div[1] * y[1] + mod[1] == x[1]
        assert div[1] == x[1] // y[1]


# -- documented semantics ---------------------------------------------------------------------------


STATE = FrozenMap(
    {"n": 3, "m": -7, "flag": True, "name": None, "items": FrozenMap({1: {"v": 5, "ok": True}})}
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("n / 2", 1.5),
        ("m // 2", -4),
        ("m % 2", 1),
        ("true == 1", False),
        ("1 == 1.0", True),
        ("name == null", True),
        ("1 in items", True),
        ("2 not in items", True),
        ('"b" in "abc"', True),
        ("2 in [1, 2]", True),
        ("0 < n < 5", True),
        ("0 < n < 2", False),
        ("len(items) + len([1, 2])", 3),
        ('"ab".startswith("a") and "ab".endswith("b")', True),
        ("sum(items[k].v for k in items if items[k].ok)", 5),
        ("all(items[k].v > 10 for k in items)", False),
        ("any(items[k].ok for k in items)", True),
        ("n if flag else m", 3),
        ("items[1].missing == null", True),
        ('{"a": n}', {"a": 3}),
    ],
)
def test_semantics_examples(text: str, expected: Any) -> None:
    assert compile_expr(parse_expr(text))(Env(STATE)) == expected
    assert interpreter.evaluate(parse_expr(text), Env(STATE)) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("items[2].v > 0", "items has no key 2"),
        ("len(name) > 0", "len(name) is undefined"),
        ("n // 0 == 1", "division by zero"),
        ("n + name == 1", "needs numbers"),
    ],
)
def test_undefined_reads_are_evaluation_errors_with_a_reason(text: str, reason: str) -> None:
    expr = parse_expr(text)
    with pytest.raises(EvaluationError):
        compile_expr(expr)(Env(STATE))
    _, why = interpreter.explain(expr, Env(STATE))
    assert why is not None and reason in why


def test_explain_reports_sub_expression_values() -> None:
    values, reason = interpreter.explain(parse_expr("items[1].v + n > 100"), Env(STATE))
    assert reason is None
    assert values["items[1].v"] == 5
    assert values["n"] == 3
    assert values["items[1].v + n"] == 8


# -- parse errors carry locations -------------------------------------------------------------------

BASE = Location("c.yaml", 7, 12)


@pytest.mark.parametrize(
    ("text", "message", "col"),
    [
        ("x ** 2", "** is not part", 12),
        ("lambda: 1", "lambdas", 12),
        ("n + open(1)", "unknown function 'open'", 16),
        ("x.__class__", "not allowed", 12),
        ("[k for k in items]", "list comprehensions", 12),
        ("n is None", "'is' is not part", 12),
        ("items[1:2]", "slices", 12),
        ("f'{n}'", "f-strings", 12),
        ("(x := 1)", "assignment expressions", 13),
        ("n +", "syntax error", 12),
        ("all(x for x in a for y in b)", "only one 'for'", 15),
    ],
)
def test_syntax_outside_the_language_is_rejected_with_location(text: str, message: str, col: int) -> None:
    with pytest.raises(ExpressionError) as info:
        parse_expr(text, BASE)
    assert message in str(info.value)
    assert info.value.location is not None
    assert info.value.location.file == "c.yaml" and info.value.location.line == 7
    if message != "syntax error":
        assert info.value.location.col == col


def test_deep_expressions_are_rejected_quickly() -> None:
    with pytest.raises(ExpressionError, match="deep"):
        parse_expr("(" * 5000 + "1" + ")" * 5000, BASE)
    with pytest.raises(ExpressionError):
        parse_expr("not " * 5000 + "true", BASE)
    with pytest.raises(ExpressionError, match="characters long"):
        parse_expr("1 + " * 10000 + "1", BASE)


def test_multiline_expressions_map_locations_to_later_lines() -> None:
    expr = parse_expr("n > 0 and\n  m < 0", Location("c.yaml", 3, 10))
    assert isinstance(expr, ir.BoolOp)
    assert expr.operands[1].loc.line == 4


# -- type errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nn > 0", "did you mean 'n'?"),
        ("items[1].vv > 0", "no field 'vv'; did you mean 'v'?"),
        ("n + flag > 0", "needs numbers"),
        ('n == "3"', "always false"),
        ("n", "must be true or false"),
        ('"a" in items', "keyed by integer"),
        ("flag < 3", "compares two numbers or two strings"),
        ("len(n) > 0", "len() needs"),
        ("sum(items[k].ok for k in items) > 0", "sum() adds numbers"),
        ("all(k for k in n)", "iterates over a collection"),
    ],
)
def test_type_errors_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(ExpressionError) as info:
        TypeChecker(SCOPE).check_bool(parse_expr(text, BASE))
    assert message in str(info.value)
    assert str(info.value).startswith("c.yaml:7:")


def test_enum_comparisons_are_checked() -> None:
    scope = {"status": T.Prim("string", ("open", "closed"))}
    TypeChecker(scope).check_bool(parse_expr('status == "open"'))
    with pytest.raises(ExpressionError, match="not one of"):
        TypeChecker(scope).check_bool(parse_expr('status == "opne"'))


# -- effects ----------------------------------------------------------------------------------------


def test_effects_parse_all_forms() -> None:
    assert parse_effect("n = n + 1").target.var == "n"
    aug = parse_effect("n -= 2")
    assert aug.value == ir.BinOp("-", ir.Name("n"), ir.Const(2))
    field = parse_effect("items[1].v = 0")
    assert field.target.fields == ("v",) and field.target.key == ir.Const(1)
    assert parse_effect("del items[n]").is_delete


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("n == 1", "bare expression"),
        ("a = b = 1", "chained"),
        ("del n", "del removes one entry"),
        ("n.x = 1", "not to var.field"),
        ("n **= 2", r"\*\*"),
        ("import os", "is not an effect"),
    ],
)
def test_bad_effects(text: str, message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        parse_effect(text, BASE)


# -- record types read off schemas ----------------------------------------------------------------


def _fields_readable(schema: dict[str, Any], name: str) -> bool:
    """Whether a clause may read ``output.<name>`` when the output has ``schema``."""
    scope = {"output": T.from_schema(schema, lambda ref: SCHEMAS[ref.rsplit("/", 1)[-1]])}
    try:
        TypeChecker(scope).check_bool(parse_expr(f"output.{name} != null"))
    except ExpressionError:
        return False
    return True


SCHEMAS: dict[str, Any] = {
    # Box's style: a nullable base record extended through allOf, three levels deep
    "Base": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
    "Mini": {"type": ["object", "null"], "allOf": [{"$ref": "#/Base"}, {"properties": {"etag": {}}}]},
    "File": {"type": "object", "allOf": [{"$ref": "#/Mini"}, {"properties": {"size": {"type": "integer"}}}]},
    "Vague": {"not": {"type": "string"}},
}


@pytest.mark.parametrize(
    ("schema", "readable", "unreadable"),
    [
        ({"type": "object", "properties": {"id": {"type": "integer"}}}, ["id"], ["idd"]),
        ({"type": "object"}, ["anything"], []),
        (
            {"type": "object", "properties": {"id": {}}, "additionalProperties": True},
            ["id", "extra"],
            [],
        ),
        ({"$ref": "#/File"}, ["id", "etag", "size"], ["sise"]),
        ({"allOf": [{"$ref": "#/Vague"}, {"properties": {"id": {}}}]}, ["id", "extra"], []),
    ],
)
def test_declared_properties_close_a_record_to_clauses(
    schema: dict[str, Any], readable: list[str], unreadable: list[str]
) -> None:
    for name in readable:
        assert _fields_readable(schema, name), name
    for name in unreadable:
        assert not _fields_readable(schema, name), name
