"""Small contracts written for the state-graph, plan and prove tests (known answers)."""

from __future__ import annotations

from pathlib import Path

import envfactory
from envfactory.contracts.model import Contract

COUNTER = """
envfactory: "1"
info: {title: Counter, version: "1"}
state:
  count: {type: integer, initial: 0}
  items:
    collection: {key: {type: integer}, value: {type: object, properties: {v: {type: integer}}, required: [v]}}
operations:
  inc:
    input: {type: object, properties: {by: {type: integer, minimum: 1, maximum: 3}}, required: [by]}
    effects: [count = count + input.by]
  dec:
    input: {type: object}
    requires: [count > 0]
    effects: [count = count - 2]
  put:
    input: {type: object, properties: {k: {type: integer}, v: {type: integer, minimum: 0}}, required: [k, v]}
    requires: [not (input.k in items)]
    effects: ['items[input.k] = {"v": input.v}']
invariants:
  - count >= 0
goals:
  five: count == 5
"""

DOOR = """
envfactory: "1"
info: {title: Door, version: "1"}
state:
  open: {type: boolean, initial: false}
  locked: {type: boolean, initial: false}
  broken: {type: boolean, initial: false}
  uses: {type: integer, initial: 0}
operations:
  open_door:
    input: {type: object}
    requires: [not open, not locked]
    effects: [open = true, uses = uses + 1]
  close_door:
    input: {type: object}
    requires: [open]
    effects: [open = false]
  lock:
    input: {type: object}
    requires: [not open, not locked]
    effects: [locked = true]
  smash:
    input: {type: object}
    requires: [locked]
    effects: [broken = true, locked = false, open = true]
  repair:
    input: {type: object}
    requires: [broken and not open and uses < 0]
    effects: [broken = false]
invariants:
  - uses >= 0
goals:
  smashed: broken
  negative: uses < 0
"""

TRAP = """
envfactory: "1"
info: {title: Trap, version: "1"}
state:
  done: {type: boolean, initial: false}
  n: {type: integer, initial: 0}
operations:
  step:
    input: {type: object}
    requires: [not done]
    effects: [n = n + 1]
  finish:
    input: {type: object}
    requires: [not done and n >= 2]
    effects: [done = true]
"""


def write_contract(folder: Path, name: str, text: str) -> Contract:
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return envfactory.load(path)


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str) -> Contract:
    return envfactory.load(EXAMPLES / name / f"{name}.yaml")
