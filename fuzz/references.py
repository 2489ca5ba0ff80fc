"""References between the calls of a trace: an id a response returned, named by a later call.

A call that names "the id step *k* returned" keeps naming it when the calls are sent again and
the target hands out other ids (a shrinking replay with an earlier step left out, a record's
life lived again): ``references`` finds where each such id came from, ``rebind`` puts in the id
this run's response gave instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from envfactory.contracts import ir
from envfactory.contracts.memo import per_contract
from envfactory.contracts.model import Contract, Operation
from envfactory.fuzz.steering import key_fields
from envfactory.trajectory import Step

Ref = tuple[int, str | None]
"""The step whose response gave a value, and the response field it came in (None: the whole)."""
Names = Mapping[tuple[str, str], frozenset[str]]
"""Per operation and input field that names a key of a collection, every input field name the
contract names that collection's keys with, and the output field a maker numbers them in
(``key_names``)."""


@per_contract()
def key_names(contract: Contract) -> Names:
    """The names of each key field's collection's keys: the tracker's ``block`` names the issue
    that blocks another ``by``, which a response gave as ``issue``. By name alone the two are
    unrelated, and a shrinking replay that left out an issue made before kept ``by`` at the old
    number while ``issue`` moved to the new one (a nine-call trace where eight suffice)."""
    per_collection: dict[str, set[str]] = {}
    named: dict[tuple[str, str], set[str]] = {}
    for name, op in contract.operations.items():
        for key in key_fields(op, contract):
            per_collection.setdefault(key.collection, set()).add(key.field)
            named.setdefault((name, key.field), set()).add(key.collection)
        for collection, field in _numbered(op, contract):
            per_collection.setdefault(collection, set()).add(field)
    return {
        place: frozenset(f for c in collections for f in per_collection[c])
        for place, collections in named.items()
    }


def _numbered(op: Operation, contract: Contract) -> list[tuple[str, str]]:
    """The output field that returns the key of the record ``op`` makes where the target numbers
    it (``items[next_item] = ...``, answered as ``{"folder": 4}``): the only scalar field of an
    operation that makes records of one collection at a key no input names. The drive's folders
    come back as ``folder`` and are named ``parent`` and ``item`` after: by name alone a replay
    that left out an earlier upload kept the old numbers, and an 11-call trace stayed 11 where
    7 show the bug."""
    made = {
        e.target.var
        for e in op.effects
        if not e.is_delete
        and e.target.key is not None
        and not e.target.fields
        and e.target.var in contract.state
        and not {"input", "output"} & ir.free_names(e.target.key)
    }
    if len(made) != 1:
        return []
    output = op.output_schema
    props = output.get("properties") if isinstance(output, Mapping) else None
    scalars = [
        str(f)
        for f, schema in (props if isinstance(props, Mapping) else {}).items()
        if isinstance(schema, Mapping) and schema.get("type") in ("integer", "string")
    ]
    return [(made.pop(), scalars[0])] if len(scalars) == 1 else []


def ids(value: Any) -> list[tuple[str | None, Any]]:
    """The scalar values a response (or input) holds at its top level, with their fields."""
    if isinstance(value, Mapping):
        return [(str(k), v) for k, v in value.items() if is_id(v)]
    return [(None, value)] if is_id(value) else []


def is_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, str) and value != ""
    )


def references(steps: Sequence[Step], names: Names | None = None) -> dict[tuple[int, str], Ref]:
    """For each (step, input field) whose value an earlier response returned and that earlier
    call did not send itself (so the target chose it), where that value came from. A number is
    taken for an id only where the names say so (``id`` for ``id``, ``petId`` for ``id``, or
    a response that is the number alone): a course of two seats made after enrollment 2 has
    nothing to do with it, and a replay that moved its seats with the enrollment's number lost
    the finding it was shrinking. With the contract's ``names`` (``key_names``), a field names
    what a response returned under any name of the same collection's keys."""
    sent = [frozenset(v for _, v in ids(step.input)) for step in steps]
    returned = [ids(step.output) for step in steps]
    refs: dict[tuple[int, str], Ref] = {}
    for i, step in enumerate(steps):
        if not isinstance(step.input, Mapping):
            continue
        for field, value in step.input.items():
            if not is_id(value):
                continue
            alike = (names or {}).get((step.tool, str(field)), frozenset()) | {str(field)}
            for j in range(i - 1, -1, -1):
                if value in sent[j]:
                    continue
                hits = [
                    f
                    for f, v in returned[j]
                    if v == value and (isinstance(v, str) or any(_named_alike(a, f) for a in alike))
                ]
                if hits:
                    refs[(i, str(field))] = (j, hits[0])
                    break
    return refs


def rebind(refs: Mapping[tuple[int, str], Ref], i: int, value: Any, outputs: Mapping[int, Any]) -> Any:
    """Step ``i``'s input with each id an earlier response gave replaced by the id that response
    gives this time (``outputs``: this run's responses by step; a step not run keeps the old id)."""
    if not isinstance(value, Mapping):
        return value
    value = dict(value)
    for field in value:
        ref = refs.get((i, str(field)))
        if ref is None or ref[0] not in outputs:
            continue
        fresh = dict(ids(outputs[ref[0]])).get(ref[1])
        if fresh is not None:
            value[field] = fresh
    return value


def _named_alike(field: str, returned: str | None) -> bool:
    """Whether an input field may name what a response returned in ``returned`` (None: the
    whole response): one name ends with the other, case aside (``petId`` and ``id``)."""
    if returned is None:
        return True
    a, b = field.lower(), returned.lower()
    return a.endswith(b) or b.endswith(a)
