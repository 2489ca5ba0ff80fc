"""A forked worker's solver state started afresh, so that what it plans does not depend on what
its parent asked Z3 before.

A worker forked for a query (``deadline.bounded``) inherits its parent's Z3 context and the
process-wide table of string literals (``symbolic.LITERALS``). Both carry history: Z3's answers
to the same query depend on what the context already holds (the names of fresh variables, the
order of terms), and an abstract string reads back as the text of whichever literal another
contract encoded earlier gave its identity (a library's isbn came out as a courier's
``"delivered"``). The same seed must make the same calls in a new process and after other work
in the same one (a test suite, a notebook), so a worker that plans starts from a new context and
an empty table. Only ever called in a forked child: every Z3 object the parent made belongs to
the context dropped here.

Imports z3 and the solver modules whose state it resets.
"""

from __future__ import annotations

import itertools

import z3

from envfactory.solver import affixes, feasibility, measures, schema, symbolic


def start_afresh() -> None:
    """A new Z3 context as the default one, and every table made under the old one emptied."""
    z3.z3._main_ctx = None  # z3.main_ctx() makes a new one on its next call
    symbolic._CONSTANTS.clear()
    symbolic._LITERALS.clear()
    symbolic.LITERAL_TEXTS.clear()
    schema._fitting.cache_clear()
    schema.PRINTABLE = schema.printable()
    feasibility._QUICK = feasibility.quick()
    affixes._instances = itertools.count()
    measures._instances = itertools.count()


__all__ = ["start_afresh"]
