"""A contract whose concrete state space grows with N: a warehouse of N item slots, stock 0..N.

Items are integers 1..N; each may be listed or not and holds 0..N units, so the reachable concrete
states number (N + 2) ** N. The goal (three items listed, each full) takes six calls whatever N
is, and the invariants are inductive, so the symbolic engines face the same problem at every N
while explicit-state search must walk the states.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATE = """\
envfactory: "1"
info: {{title: Warehouse {n}, version: "1"}}
state:
  stock:
    collection:
      key: {{type: integer}}
      value: {{type: object, properties: {{qty: {{type: integer}}}}, required: [qty]}}
operations:
  add:
    input: {{type: object, properties: {{item: {{type: integer, minimum: 1, maximum: {n}}}}}, required: [item]}}
    requires:
      - not (input.item in stock)
    effects:
      - 'stock[input.item] = {{"qty": 0}}'
  restock:
    input:
      type: object
      properties: {{item: {{type: integer, minimum: 1, maximum: {n}}}, amount: {{type: integer, minimum: 1, maximum: {n}}}}}
      required: [item, amount]
    requires:
      - input.item in stock
      - stock[input.item].qty + input.amount <= {n}
    effects:
      - stock[input.item].qty = stock[input.item].qty + input.amount
  sell:
    input: {{type: object, properties: {{item: {{type: integer, minimum: 1, maximum: {n}}}}}, required: [item]}}
    requires:
      - input.item in stock
      - stock[input.item].qty > 0
    effects:
      - stock[input.item].qty = stock[input.item].qty - 1
  remove:
    input: {{type: object, properties: {{item: {{type: integer, minimum: 1, maximum: {n}}}}}, required: [item]}}
    requires:
      - input.item in stock
      - stock[input.item].qty == 0
    effects:
      - del stock[input.item]
invariants:
  - all(stock[i].qty >= 0 and stock[i].qty <= {n} for i in stock)
  - all(i >= 1 and i <= {n} for i in stock)
goals:
  three_full: len(stock) >= 3 and all(stock[i].qty == {n} for i in stock)
"""


def warehouse(n: int) -> str:
    """The contract's YAML text for N (N >= 3 so that the goal is reachable)."""
    return TEMPLATE.format(n=n)


def write(n: int, folder: Path) -> Path:
    path = folder / f"warehouse_{n}.yaml"
    path.write_text(warehouse(n), encoding="utf-8")
    return path
