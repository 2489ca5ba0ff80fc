"""An operation's effects over a symbolic state: the symbolic twin of ``Machine.apply``.

Every key and right-hand side is encoded on the pre-state, then the writes are applied in order
(``x = e``, ``c[k] = e``, ``c[k].f.g = e``, ``del c[k]``), exactly as the concrete machine does.
``apply_effects`` returns the post-state and, per effect, the condition under which it is defined
(a field write or a delete needs its key present; a key or value that reads a missing key is
undefined), so that a report can name the effect that cannot run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from envfactory.contracts.parser import Effect
from envfactory.contracts.values import FrozenMap
from envfactory.solver import maps
from envfactory.solver.encode import Encoder, SymEnv
from envfactory.solver.symbolic import NULL, Map, Py, Rec, SVal, Term, and_, cases, join, merge, or_all


def _py_set(record: Any, fields: Sequence[str], value: Any) -> Any:
    """The concrete ``_set_path``: a changed copy; ``None`` where the path is not all records."""
    if not isinstance(record, dict):
        return None
    head, *rest = fields
    updated = dict(record)
    if rest:
        inner = _py_set(record.get(head), rest, value)
        if inner is None:
            return None
        updated[head] = inner
    else:
        updated[head] = value
    return updated


def _set_path(record: SVal, fields: Sequence[str], value: SVal) -> tuple[SVal, Term]:
    """``record.f.g = value`` with the record unchanged elsewhere; defined only on records."""
    if isinstance(record, Py) and isinstance(value, Py):
        changed = _py_set(record.value, fields, value.value)
        return (NULL, False) if changed is None else (Py(changed), True)
    out: list[tuple[Term, SVal]] = []
    oks: list[Term] = []
    head, *rest = fields
    for g, o in cases(record):
        if not isinstance(o, Rec):
            continue
        if rest:
            present, inner = o.get(head)
            updated, ok = _set_path(inner, rest, value)
            ok = and_(present, ok)
        else:
            updated, ok = value, True
        new_fields = dict(o.fields)
        new_fields[head] = (True, updated)
        out.append((g, Rec(new_fields)))
        oks.append(and_(g, ok))
    return join(out), or_all(oks)


def apply_effects(
    encoder: Encoder,
    effects: Sequence[Effect],
    state: Mapping[str, SVal],
    input: SVal,
    output: SVal,
) -> tuple[dict[str, SVal], list[tuple[Effect, Term]]]:
    """The post-state and ``[(effect, defined)]`` for one call's effects."""
    env = SymEnv(state, input, output)
    planned: list[tuple[Effect, SVal | None, SVal | None, Term]] = []
    for effect in effects:
        key_enc = encoder.encode(effect.target.key, env) if effect.target.key is not None else None
        value_enc = encoder.encode(effect.value, env) if effect.value is not None else None
        ok = and_(key_enc.ok if key_enc else True, value_enc.ok if value_enc else True)
        planned.append(
            (effect, key_enc.value if key_enc else None, value_enc.value if value_enc else None, ok)
        )
    new = dict(state)
    report: list[tuple[Effect, Term]] = []
    for effect, key, value, ok in planned:
        var = effect.target.var
        if key is None:
            assert value is not None
            new[var] = value
            report.append((effect, ok))
            continue
        current = new.get(var)
        if not (
            isinstance(current, Map) or (isinstance(current, Py) and isinstance(current.value, FrozenMap))
        ):
            report.append((effect, False))
            continue
        old, found = encoder.lookup(current, key)
        if value is None:
            new[var] = maps.delete(current, maps.present_key(current, key))
            report.append((effect, and_(ok, found)))
        elif effect.target.fields:
            updated, set_ok = _set_path(old, effect.target.fields, value)
            new[var] = maps.write(current, maps.present_key(current, key), merge(found, updated, old))
            report.append((effect, and_(ok, found, set_ok)))
        else:
            new[var] = maps.write(current, key, value)
            report.append((effect, ok))
    return new, report
