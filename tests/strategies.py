"""Hypothesis strategies for the engine's own inputs: expressions, states, small contracts and
trajectories with holes. Shared by every area's differential tests; import it as ``strategies``
after putting ``tests/`` on ``sys.path`` (see ``tests/solver/test_solver_agreement.py``).

* ``states()``: concrete states over the fixed signature ``SIGNATURE`` (ints, a nullable int,
  strings, a boolean, a list, a collection of records keyed by small integers).
* ``expressions(kind)``: expression *text* over that signature, mostly well typed, with the
  undefined corners included on purpose (missing keys, null reads, division by zero), so that
  "undefined" is compared too.
* ``small_contracts()`` / ``trajectories(contract_text)``: small native contracts whose inputs
  range over tiny domains, and trajectories over them with ``{"$var": ...}`` holes and missing
  outputs, small enough to enumerate every completion by brute force.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from envfactory.contracts.values import FrozenMap

SIGNATURE = {
    "x": "int",
    "y": "int",
    "n": "int|null",
    "s": "str",
    "t": "str",
    "b": "bool",
    "l": "list[int]",
    "c": "map[int -> {a: int, ok: bool, tag?: str}]",
}

small_ints = st.integers(min_value=-6, max_value=6)
short_text = st.text(alphabet="ab", max_size=3)
keys = st.integers(min_value=0, max_value=3)


@st.composite
def records(draw: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"a": draw(small_ints), "ok": draw(st.booleans())}
    if draw(st.booleans()):
        record["tag"] = draw(short_text)
    return record


def states() -> st.SearchStrategy[FrozenMap]:
    """A concrete state over ``SIGNATURE``."""
    return st.builds(
        lambda x, y, n, s, t, b, lst, c: FrozenMap(
            {"x": x, "y": y, "n": n, "s": s, "t": t, "b": b, "l": lst, "c": FrozenMap(c)}
        ),
        small_ints,
        small_ints,
        st.none() | small_ints,
        short_text,
        short_text,
        st.booleans(),
        st.lists(small_ints, max_size=3),
        st.dictionaries(keys, records(), max_size=3),
    )


COMPARISON_STATES = [
    FrozenMap(
        {
            "x": 1,
            "y": 1,
            "n": None,
            "s": "ab",
            "t": "ab",
            "b": True,
            "l": [1],
            "c": FrozenMap({0: {"a": 1, "ok": True}}),
        }
    ),
    FrozenMap(
        {
            "x": -2,
            "y": 3,
            "n": 3,
            "s": "a",
            "t": "b",
            "b": False,
            "l": [],
            "c": FrozenMap({0: {"a": 4, "ok": False, "tag": "b"}}),
        }
    ),
    FrozenMap({"x": 5, "y": 0, "n": 0, "s": "b", "t": "", "b": True, "l": [2, 3], "c": FrozenMap()}),
]
"""States where the operands of ``comparisons()`` are equal, smaller, larger, null or missing."""


def comparisons() -> list[str]:
    """Every comparison operator between every pair of operands of one group over ``SIGNATURE``
    (integers; integer arithmetic with negative operands and zero divisors; strings): a sweep the
    drawn ``expressions`` rarely make (they seldom compare equal values)."""
    operands = [
        ["x", "y", "n", "c[0].a", "1", "len(s)", "(x - y)"],
        ["(x // y)", "(x % y)", "(-x // 2)", "(x % -3)", "(x * y)", "abs(x)", "min(x, y)", "0"],
        ["s", "t", '"ab"', "c[0].tag", '(s + "a")'],
    ]
    ops = ("==", "!=", "<", "<=", ">", ">=")
    return [f"{a} {op} {b}" for group in operands for a in group for b in group for op in ops]


def _lit_str(text: str) -> str:
    return '"' + text + '"'


def expressions(
    kind: str = "bool", depth: int = 3, bound: tuple[str, ...] = (), lists: bool = True
) -> st.SearchStrategy[str]:
    """Expression text of ``kind`` ("bool", "int", "str", "any") over ``SIGNATURE``; without
    ``lists``, none that reads the list ``l`` (for encoders without lists)."""
    return _expr(kind, depth, bound, lists)


@functools.cache
def _expr(kind: str, depth: int, bound: tuple[str, ...], lists: bool = True) -> st.SearchStrategy[str]:
    if kind == "any":
        return st.one_of(
            _expr("bool", depth, bound, lists),
            _expr("int", depth, bound, lists),
            _expr("str", depth, bound, lists),
        )
    key = _key(bound)
    leaves: dict[str, list[st.SearchStrategy[str]]] = {
        "int": [
            small_ints.map(str),
            st.sampled_from(["x", "y", "len(s)", "len(c)", "n", *(["len(l)"] if lists else [])]),
            key.map(lambda k: f"c[{k}].a"),
            *([key.map(lambda k: f"l[{k}]")] if lists else []),
        ],
        "bool": [
            st.sampled_from(["true", "false", "b", "n == null", "n != null"]),
            key.map(lambda k: f"{k} in c"),
            key.map(lambda k: f"c[{k}].ok"),
            key.map(lambda k: f"c[{k}].tag == null"),
        ],
        "str": [
            short_text.map(_lit_str),
            st.sampled_from(["s", "t"]),
            key.map(lambda k: f"c[{k}].tag"),
        ],
    }
    base = st.one_of(*leaves[kind])
    if depth <= 0:
        return base
    sub = depth - 1

    def e(k: str) -> st.SearchStrategy[str]:
        return _expr(k, sub, bound, lists)

    var = "k" if "k" not in bound else "j"
    inner = (*bound, var)
    composite: dict[str, list[st.SearchStrategy[str]]] = {
        "int": [
            st.tuples(e("int"), st.sampled_from(["+", "-", "*", "//", "%"]), e("int")).map(
                lambda p: f"({p[0]} {p[1]} {p[2]})"
            ),
            e("int").map(lambda a: f"-({a})"),
            e("int").map(lambda a: f"abs({a})"),
            st.tuples(st.sampled_from(["min", "max"]), e("int"), e("int")).map(
                lambda p: f"{p[0]}({p[1]}, {p[2]})"
            ),
            st.tuples(e("int"), e("bool"), e("int")).map(lambda p: f"({p[0]} if {p[1]} else {p[2]})"),
            _expr("int", sub, inner, lists).map(lambda body: f"sum({body} for {var} in c)"),
            st.tuples(_expr("int", sub, inner, lists), _expr("bool", sub, inner, lists)).map(
                lambda p: f"sum({p[0]} for {var} in c if {p[1]})"
            ),
            *(
                [_expr("int", sub, inner, lists).map(lambda body: f"sum({body} for {var} in l)")]
                if lists
                else []
            ),
            e("str").map(lambda a: f"len({a})"),
        ],
        "bool": [
            st.tuples(e("int"), st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), e("int")).map(
                lambda p: f"({p[0]} {p[1]} {p[2]})"
            ),
            st.tuples(e("str"), st.sampled_from(["==", "!=", "<", ">="]), e("str")).map(
                lambda p: f"({p[0]} {p[1]} {p[2]})"
            ),
            st.tuples(e("any"), st.sampled_from(["==", "!="]), e("any")).map(
                lambda p: f"({p[0]} {p[1]} {p[2]})"
            ),
            e("bool").map(lambda a: f"(not ({a}))"),  # parenthesised: "x == not y" is no syntax
            st.tuples(e("bool"), st.sampled_from(["and", "or"]), e("bool")).map(
                lambda p: f"({p[0]} {p[1]} {p[2]})"
            ),
            st.tuples(e("bool"), e("bool")).map(lambda p: f"implies({p[0]}, {p[1]})"),
            st.tuples(e("int"), st.sampled_from(["in", "not in"])).map(lambda p: f"({p[0]} {p[1]} c)"),
            *([e("int").map(lambda a: f"({a} in l)")] if lists else []),
            st.tuples(e("str"), e("str")).map(lambda p: f"({p[0]} in {p[1]})"),
            st.tuples(e("str"), st.sampled_from(["startswith", "endswith"]), e("str")).map(
                lambda p: f"{p[0]}.{p[1]}({p[2]})"
            ),
            st.tuples(st.sampled_from(["all", "any"]), _expr("bool", sub, inner, lists)).map(
                lambda p: f"{p[0]}({p[1]} for {var} in c)"
            ),
            st.tuples(
                st.sampled_from(["all", "any"]),
                _expr("bool", sub, inner, lists),
                _expr("bool", sub, inner, lists),
            ).map(lambda p: f"{p[0]}({p[1]} for {var} in c if {p[2]})"),
            st.tuples(key, small_ints, st.booleans()).map(
                lambda p: f'c[{p[0]}] == {{"a": {p[1]}, "ok": {str(p[2]).lower()}}}'
            ),
        ],
        "str": [
            st.tuples(e("str"), e("str")).map(lambda p: f"({p[0]} + {p[1]})"),
            st.tuples(e("str"), key).map(lambda p: f"{p[0]}[{p[1]}]"),
            st.tuples(e("bool"), e("str"), e("str")).map(lambda p: f"({p[1]} if {p[0]} else {p[2]})"),
        ],
    }
    return st.one_of(base, *composite[kind])


def _key(bound: tuple[str, ...]) -> st.SearchStrategy[str]:
    options = [keys.map(str), st.sampled_from(["x", "y"])]
    if bound:
        options.append(st.sampled_from(list(bound)))
    return st.one_of(*options)


# ----------------------------------------------------------------------- small contracts


CONTRACT_TEMPLATE = """\
envfactory: "1"
info: {{title: Small, version: "1"}}
state:
  x: {{type: integer, initial: {x0}}}
  mode: {{type: string, enum: [idle, busy], initial: idle}}
  items:
    collection:
      key: {{type: integer}}
      value:
        type: object
        properties: {{v: {{type: integer}}, active: {{type: boolean}}}}
        required: [v, active]
operations:
  add:
    input:
      type: object
      properties: {{n: {{type: integer, minimum: 0, maximum: 3}}}}
      required: [n]
    requires: ["{add_req}"]
    effects: ["x = x + input.n"]
  put:
    input:
      type: object
      properties: {{k: {{type: integer, minimum: 0, maximum: 2}}, v: {{type: integer, minimum: 0, maximum: 3}}}}
      required: [k, v]
    requires: ["{put_req}"]
    effects: ["items[input.k] = {{\\"v\\": input.v, \\"active\\": input.v > {on_cut}}}"]
  drop:
    input:
      type: object
      properties: {{k: {{type: integer, minimum: 0, maximum: 2}}}}
      required: [k]
    requires: ["input.k in items"]
    effects: ["del items[input.k]"]
  flip:
    input:
      type: object
      properties: {{m: {{type: string, enum: [idle, busy]}}}}
      required: [m]
    requires: ["{flip_req}"]
    effects: ["mode = input.m"]
  peek:
    input: {{type: object, properties: {{}}}}
    output:
      type: object
      properties: {{total: {{type: integer, minimum: 0, maximum: 9}}}}
      required: [total]
    ensures: ["output.total == {peek_ens}"]
invariants: ["{invariant}"]
"""

ADD_REQS = ["x + input.n <= 5", "input.n > 0", 'mode == \\"idle\\" or input.n == 0', "true"]
PUT_REQS = ["not (input.k in items)", "x >= input.v", "len(items) < 2", "true"]
FLIP_REQS = ["input.m != mode", 'x > 0 or input.m == \\"idle\\"', "true"]
PEEK_ENS = ["x", "len(items)", "sum(items[k].v for k in items)", "x % 3"]
INVARIANTS = ["x <= 6", "all(items[k].v <= x + 3 for k in items)", "true", "len(items) <= 2"]


@st.composite
def small_contracts(draw: Any) -> str:
    """YAML text of a small native contract (the template above with drawn clauses)."""
    return CONTRACT_TEMPLATE.format(
        x0=draw(st.integers(0, 2)),
        add_req=draw(st.sampled_from(ADD_REQS)),
        put_req=draw(st.sampled_from(PUT_REQS)),
        on_cut=draw(st.integers(0, 3)),
        flip_req=draw(st.sampled_from(FLIP_REQS)),
        peek_ens=draw(st.sampled_from(PEEK_ENS)),
        invariant=draw(st.sampled_from(INVARIANTS)),
    )


DOMAINS: dict[tuple[str, str], list[Any]] = {
    ("add", "n"): [0, 1, 2, 3],
    ("put", "k"): [0, 1, 2],
    ("put", "v"): [0, 1, 2, 3],
    ("drop", "k"): [0, 1, 2],
    ("flip", "m"): ["idle", "busy"],
}
"""Every value an input field can take (its schema's whole domain), for brute force."""
PEEK_DOMAIN = list(range(10))


@st.composite
def trajectories(draw: Any, max_steps: int = 4, max_holes: int = 2) -> dict[str, Any]:
    """A trajectory (as a JSON object) over ``small_contracts``: holes share names on purpose."""
    names = [f"h{i}" for i in range(max_holes)]
    steps = []
    for _ in range(draw(st.integers(1, max_steps))):
        tool = draw(st.sampled_from(["add", "put", "drop", "flip", "peek"]))
        value: dict[str, Any] = {}
        for (op, field), domain in DOMAINS.items():
            if op != tool:
                continue
            if draw(st.integers(0, 3)) == 0:
                value[field] = {
                    "$var": draw(st.sampled_from(names)) + ("s" if isinstance(domain[0], str) else "")
                }
            else:
                value[field] = draw(st.sampled_from(domain))
        step: dict[str, Any] = {"tool": tool, "input": value}
        if tool == "peek" and draw(st.booleans()):
            step["output"] = {"total": draw(st.sampled_from(PEEK_DOMAIN))}
        steps.append(step)
    return {"id": "t", "steps": steps}
