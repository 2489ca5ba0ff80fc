"""Lint on the face of a contract: findings that need no solver.

Unused state, constant clauses, preconditions unsatisfiable on their face, and goals and
invariants that mention nothing any operation changes. The state-graph layer adds reachability
findings to the same list.
"""

from __future__ import annotations

from typing import Any

import attrs

from envfactory.contracts import ir
from envfactory.contracts.errors import EvaluationError, Location
from envfactory.contracts.evaluator import Env
from envfactory.contracts.model import Clause, Contract


@attrs.frozen(slots=True)
class Finding:
    """One lint result; ``severity`` is ``warning`` or ``info`` (errors stop loading instead)."""

    kind: str
    severity: str
    message: str
    location: Location | None = None
    operation: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "location": str(self.location) if self.location is not None else None,
            "operation": self.operation,
        }


def _state_names(node: ir.Expr, state: set[str]) -> set[str]:
    return set(ir.free_names(node)) & state


def _constant_value(clause: Clause) -> Any:
    try:
        return clause.fn(Env({}))
    except EvaluationError:
        return None


def _contradiction(node: ir.Expr) -> bool:
    """A clause false on its face: ``e != e``, ``e < e``, ``a and not a``."""
    match node:
        case ir.Compare(op=op, left=left, right=right) if op in ("!=", "<", ">") and left == right:
            return True
        case ir.BoolOp(op="and", operands=operands):
            if any(_contradiction(o) for o in operands):
                return True
            positives = {o for o in operands if not isinstance(o, ir.Unary)}
            negated = {o.operand for o in operands if isinstance(o, ir.Unary) and o.op == "not"}
            return bool(positives & negated)
        case ir.Const(value=False):
            return True
    return False


def lint(contract: Contract) -> list[Finding]:
    """Every face-value finding, in a stable order (defects the loader read past come first)."""
    findings: list[Finding] = [
        Finding(kind, "warning", message, where) for kind, message, where in contract.load_defects
    ]
    state = set(contract.state)
    read: set[str] = set()
    written: set[str] = set()
    for op in contract.operations.values():
        for effect in op.effects:
            written.add(effect.target.var)
            for part in (effect.value, effect.target.key):
                if part is not None:
                    read |= _state_names(part, state)
            if effect.target.key is not None or effect.target.fields:
                read.add(effect.target.var)
    for _, clause in contract.clauses():
        read |= _state_names(clause.expr, state)

    for name, var in contract.state.items():
        if name not in read and name not in written:
            findings.append(
                Finding(
                    "unused_state", "warning", f"state variable {name!r} is never read nor written", var.loc
                )
            )
        elif name not in read:
            findings.append(
                Finding(
                    "write_only_state",
                    "info",
                    f"state variable {name!r} is written but no clause reads it",
                    var.loc,
                )
            )

    for op_name, clause in contract.clauses():
        names = ir.free_names(clause.expr)
        if _contradiction(clause.expr):
            kind = "unsatisfiable_precondition" if clause.kind == "requires" else "constant_clause"
            findings.append(
                Finding(
                    kind,
                    "warning",
                    f"{clause.kind} {clause.source!r} is false on its face",
                    clause.loc,
                    op_name,
                )
            )
        elif not names:
            value = _constant_value(clause)
            if value is False and clause.kind == "requires":
                findings.append(
                    Finding(
                        "unsatisfiable_precondition",
                        "warning",
                        f"requires {clause.source!r} is always false: {op_name} can never be called",
                        clause.loc,
                        op_name,
                    )
                )
            else:
                findings.append(
                    Finding(
                        "constant_clause",
                        "warning",
                        f"{clause.kind} {clause.source!r} is always {str(value).lower()}; it mentions no state, input or output",
                        clause.loc,
                        op_name,
                    )
                )

    findings.extend(_unfilled_collections(contract))

    for clause in list(contract.invariants) + list(contract.goals.values()):
        mentioned = _state_names(clause.expr, state)
        if mentioned and not (mentioned & written):
            what = "goal" if clause.kind == "goal" else "invariant"
            label = f" {clause.name!r}" if clause.name else ""
            findings.append(
                Finding(
                    f"unchanging_{what}",
                    "warning",
                    f"{what}{label} {clause.source!r} mentions only {', '.join(sorted(mentioned))}, which no operation changes",
                    clause.loc,
                )
            )
    findings.extend(_broken_at_start(contract))
    return findings


def _broken_at_start(contract: Contract) -> list[Finding]:
    """Invariants the declared initial state already breaks: every trajectory starts invalid,
    and nothing can be planned, generated or proved."""
    from envfactory.contracts.semantics import broken_at_start

    return [
        Finding(
            "initial_state_breaks_invariant",
            "warning",
            f"the initial state breaks invariant {clause.source!r}: every trajectory starts invalid",
            clause.loc,
        )
        for clause in broken_at_start(contract)
    ]


def _unfilled_collections(contract: Contract) -> list[Finding]:
    """Collections that preconditions look into but no operation ever adds to.

    Starting empty (closed world), the operations that need an entry can never succeed; starting
    unknown (open world, e.g. inferred from OpenAPI), they rely on data the server already holds.
    """
    findings: list[Finding] = []
    for name, var in contract.state.items():
        if not var.collection:
            continue
        filled = any(
            e.target.var == name and not e.is_delete
            for op in contract.operations.values()
            for e in op.effects
        )
        if filled:
            continue
        needing = [
            op_name
            for op_name, op in contract.operations.items()
            if any(name in ir.free_names(c.expr) for c in op.requires)
        ]
        if not needing:
            continue
        shown = ", ".join(repr(n) for n in needing[:4]) + (" ..." if len(needing) > 4 else "")
        if not var.known:
            findings.append(
                Finding(
                    "unfilled_collection",
                    "info",
                    f"no operation adds to {name!r}; calls to {shown} rely on entries that exist before the first call",
                    var.loc,
                )
            )
        elif not var.initial:
            findings.append(
                Finding(
                    "unfilled_collection",
                    "warning",
                    f"no operation adds to {name!r} and it starts empty, so calls to {shown} can never succeed",
                    var.loc,
                )
            )
    return findings
