"""The value semantics shared by every concrete interpretation of the IR.

Values are JSON values (None, bool, int, float, str, list, dict for records) plus persistent maps
(``FrozenMap``) for state collections and states. The rules, which the Z3 encoder must match:

* ``null`` equals only ``null``; ``true`` is not ``1`` (booleans and numbers never compare equal);
  ``1 == 1.0``.
* ``/`` is true division (a number); ``//`` and ``%`` floor like Python (``-7 // 2 == -4``);
  dividing by zero is undefined.
* ``x in c``: a collection tests its keys, a list its items, a string its substrings, a record its
  field names.
* ``and``, ``or``, ``implies`` and ``x if c else y`` short-circuit: ``k in c and c[k].ok`` is safe.
* Reading a missing key (``c[k]`` with ``k not in c``), a list index out of range, or a field of
  ``null`` is *undefined*: the clause that reads it fails, with the reason. Reading an optional
  record field that is absent gives ``null``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envfactory.contracts.errors import EvaluationError


class FrozenMap(dict[Any, Any]):
    """An immutable dict: ``insert`` and ``remove`` return changed copies.

    States and collections are values: a snapshot is never changed in place, so forking one is
    free and a changed copy shares every record with its parent. Copy-on-write costs O(n) per
    write, but iteration and lookup run at dict speed, which is what verification spends its time
    on (measured: a persistent HAMT iterated 25x slower than a dict at 50 entries). The one
    exception is the verifier's hot loop, which writes into a copy that only it holds
    (``envfactory._fastpath.Run``), so no snapshot anyone else sees ever changes.
    """

    __slots__ = ()

    def insert(self, key: Any, value: Any) -> FrozenMap:
        copy = FrozenMap(self)
        dict.__setitem__(copy, key, value)
        return copy

    def remove(self, key: Any) -> FrozenMap:
        copy = FrozenMap(self)
        dict.__delitem__(copy, key)
        return copy

    def _immutable(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("FrozenMap is immutable; use insert() or remove()")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _immutable
    __ior__ = _immutable

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(freeze(self))

    def __repr__(self) -> str:
        return f"FrozenMap({dict.__repr__(self)})"

    def __reduce__(self) -> Any:
        return (FrozenMap, (dict(self),))


def freeze(value: Any) -> Any:
    """A hashable stand-in with the same equality: maps to frozensets of pairs, lists to tuples."""
    if isinstance(value, dict):
        return frozenset((k, freeze(v)) for k, v in value.items())
    if isinstance(value, list):
        return ("__list__", tuple(freeze(v) for v in value))
    if isinstance(value, bool):
        return ("__bool__", value)
    return value


PersistentMap = FrozenMap


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def strict_eq(a: Any, b: Any) -> bool:
    """Equality in which booleans are not numbers."""
    if (a.__class__ is bool) is not (b.__class__ is bool):
        return False
    return bool(a == b)


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),  # before int: a bool is an int in Python, never in JSON
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (tuple, "array"),
)


def json_type(value: Any) -> str | None:
    """The JSON Schema type name of a value (``None`` for what JSON has no type for)."""
    if value is None:
        return "null"
    for cls, name in _JSON_TYPES:
        if isinstance(value, cls):
            return name
    return "object" if isinstance(value, Mapping) else None


def type_name(value: Any) -> str:
    """The language's name for a value's type, as error messages show it."""
    if isinstance(value, FrozenMap):
        return "collection"
    if isinstance(value, Mapping):
        return "record"
    if isinstance(value, list | tuple):
        return "list"
    return json_type(value) or type(value).__name__


def get_field(value: Any, name: str, source: str) -> Any:
    if isinstance(value, FrozenMap):
        return get_item(value, name, source)
    if isinstance(value, dict):
        return value.get(name)
    if value is None:
        raise EvaluationError(f"{source} is null, so .{name} is undefined")
    raise EvaluationError(f"{source} is {type_name(value)}, which has no field {name!r}")


def missing_key(source: str, key: Any) -> EvaluationError:
    """The error for ``c[k]`` where ``k`` is not a key of ``c`` (or cannot be one at all)."""
    if isinstance(key, Mapping | list):  # unhashable: a loose input schema let a record through
        return EvaluationError(f"{source} is keyed by integers or strings, not by a {type_name(key)}")
    return EvaluationError(f"{source} has no key {key!r}")


def get_item(value: Any, key: Any, source: str) -> Any:
    if isinstance(value, FrozenMap):
        try:
            return value[key]
        except (KeyError, TypeError):
            raise missing_key(source, key) from None
    if isinstance(value, list):
        if not isinstance(key, int) or isinstance(key, bool):
            raise EvaluationError(f"list {source} is indexed by integers, not {type_name(key)}")
        if -len(value) <= key < len(value):
            return value[key]
        raise EvaluationError(f"{source} has {len(value)} items, so [{key}] is out of range")
    if isinstance(value, dict):
        if not isinstance(key, str):
            raise EvaluationError(f"record {source} has string field names, not {type_name(key)}")
        return value.get(key)
    if isinstance(value, str):
        if isinstance(key, int) and not isinstance(key, bool) and -len(value) <= key < len(value):
            return value[key]
        raise EvaluationError(f"{source} has {len(value)} characters, so [{key!r}] is out of range")
    if value is None:
        raise EvaluationError(f"{source} is null, so [{key!r}] is undefined")
    raise EvaluationError(f"{source} is {type_name(value)} and cannot be indexed")


def contains(container: Any, item: Any, source: str) -> bool:
    if isinstance(container, FrozenMap | dict):
        try:
            return item in container
        except TypeError:  # an unhashable probe is in no collection
            return False
    if isinstance(container, list):
        return any(strict_eq(item, x) for x in container)
    if isinstance(container, str):
        if not isinstance(item, str):
            raise EvaluationError(f"'in' {source} needs a string, got {type_name(item)}")
        return item in container
    raise EvaluationError(f"{source} is {type_name(container)}; 'in' needs a collection, a list or a string")


def length(value: Any, source: str) -> int:
    if isinstance(value, str | list | dict | FrozenMap):
        return len(value)
    raise EvaluationError(f"len({source}) is undefined: {source} is {type_name(value)}")


def _need_numbers(op: str, a: Any, b: Any, left: str, right: str) -> None:
    for value, src in ((a, left), (b, right)):
        if not is_number(value):
            raise EvaluationError(f"{op} needs numbers, but {src} is {type_name(value)}")


def arith(op: str, a: Any, b: Any, left: str, right: str) -> Any:
    if op == "+":
        if isinstance(a, str) and isinstance(b, str):
            return a + b
        if isinstance(a, list) and isinstance(b, list):
            return a + b
    _need_numbers(op, a, b, left, right)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0 and op in ("/", "//", "%"):
        raise EvaluationError(f"division by zero: {right} is 0")
    if op == "/":
        return a / b
    if op == "//":
        return a // b
    return a % b


def order(op: str, a: Any, b: Any, left: str, right: str) -> bool:
    if not ((is_number(a) and is_number(b)) or (isinstance(a, str) and isinstance(b, str))):
        raise EvaluationError(
            f"{op} compares two numbers or two strings, but {left} is {type_name(a)} and {right} is {type_name(b)}"
        )
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def set_path(record: Any, fields: tuple[str, ...], value: Any, where: str) -> Any:
    """``record`` with ``value`` at ``.fields`` (a new record at each level: records are never
    changed in place); ``where`` names ``record`` in the error when it is not one."""
    if not isinstance(record, dict):
        raise EvaluationError(f"{where} is not a record, so .{fields[0]} cannot be set")
    head, *rest = fields
    updated = dict(record)
    updated[head] = set_path(record.get(head), tuple(rest), value, f"{where}.{head}") if rest else value
    return updated


def truth(value: Any, source: str) -> bool:
    if value is True or value is False:
        return value
    raise EvaluationError(f"{source} should be true or false, but is {type_name(value)}")


def iterate(domain: Any, source: str) -> list[Any]:
    """The values a quantifier ranges over: a collection's keys or a list's items."""
    if isinstance(domain, FrozenMap | dict):
        return list(domain.keys())
    if isinstance(domain, list):
        return domain
    raise EvaluationError(f"{source} is {type_name(domain)}; all/any/sum range over a collection or a list")


def to_json(value: Any) -> Any:
    """A plain JSON value (collections become objects with string keys, sorted for stable output)."""
    if isinstance(value, FrozenMap):
        items = sorted(value.items(), key=lambda kv: (str(type(kv[0])), kv[0]))
        return {str(k): to_json(v) for k, v in items}
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value
