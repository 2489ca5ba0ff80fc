"""How an OpenAPI operation's input travels in an HTTP request, and how it is read back.

OpenAPI 3 writes parameters by ``style`` and ``explode`` (``simple``, ``label`` and ``matrix`` in
paths; ``form``, ``spaceDelimited``, ``pipeDelimited`` and ``deepObject`` in queries; ``simple``
in headers) and request bodies as JSON, ``application/x-www-form-urlencoded`` (each field by its
``encoding`` style, ``form`` unless it says ``deepObject``) or ``multipart/form-data`` (a part per
field, an array as repeated parts, an object as a JSON part). ``encode`` writes a call's input
that way, ``decode`` reads it back, each value typed by the operation's input type (so ``?id=5``
is the integer 5 where the parameter is an integer, the text "5" where it is a string).

Both directions live here so that the fuzzer's client and ``replay`` (``fuzz.targets``) and
``envfactory serve`` agree by construction: a client sends a call only when ``decode(encode(x))``
gives ``x`` back, the rest (``-1`` of a string parameter, an item holding its array's delimiter,
an empty array in a query) no request expresses. The server decodes before it splits, so it also
reads what common clients send (``?fields=a%2Cb``). Imports nothing above ``contracts``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

import attrs

from envfactory.contracts.model import HttpBinding, Operation
from envfactory.contracts.types import (
    AnyType,
    ListType,
    MapType,
    Prim,
    RecordType,
    Type,
    options,
    strip_null,
)

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
ENCODED_HEADERS = "x-envfactory-encoded"
"""Names the header parameters whose values a client percent-encoded (HTTP cannot carry them as
they are: control characters, leading spaces); ``envfactory serve`` decodes them."""

DEFAULT_STYLE = {"path": "simple", "query": "form", "header": "simple", "form": "form"}
PARAMETER_STYLES = {
    "path": frozenset({"simple", "label", "matrix"}),
    "query": frozenset({"form", "spaceDelimited", "pipeDelimited", "deepObject"}),
    "header": frozenset({"simple"}),
    "form": frozenset({"form", "spaceDelimited", "pipeDelimited", "deepObject"}),
}
CONTENT = "content"
"""The style of a parameter described by ``content`` (its value is that media type's text: JSON)."""
_DELIMITER = {"spaceDelimited": " ", "pipeDelimited": "|"}
_INTEGER = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_HEADER_TEXT = re.compile(r"([\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?)?")


class Unsendable(Exception):
    """No HTTP request expresses this input (as the operation's binding writes it)."""


@attrs.frozen(slots=True)
class WireRequest:
    """The parts of an HTTP request one call becomes, as texts (before percent-encoding, except
    ``path``, which is ready to append to the base URL)."""

    method: str
    path: str
    path_params: tuple[tuple[str, str], ...] = ()  # each path parameter's text, before quoting
    query: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    media: str | None = None  # the body's media type; None: no body
    form: tuple[tuple[str, str], ...] = ()  # form fields (urlencoded) or parts (multipart)
    json: Any = None  # the JSON body, where ``media`` is JSON
    part_types: tuple[tuple[str, str], ...] = ()  # multipart: a part's content type, where not text


def style_of(binding: HttpBinding, name: str, where: str) -> tuple[str, bool]:
    """A field's (style, explode), OpenAPI's defaults where the document says nothing."""
    for field, style, explode in binding.styles:
        if field == name:
            return style, explode
    style = DEFAULT_STYLE[where]
    return style, style == "form"


# ----------------------------------------------------------------------------------- encoding


def encode(op: Operation, input: Any) -> WireRequest:
    """The request ``op(input)`` becomes; raises ``Unsendable`` where no request expresses it."""
    binding = op.http
    assert binding is not None
    if not isinstance(input, Mapping):
        if binding.body != "*" or binding.media != JSON or binding.path_params:
            raise Unsendable("the input is not an object, and no request expresses it")
        return WireRequest(binding.method, binding.path, media=JSON, json=input)
    placed = {*binding.path_params, *binding.query_params, *binding.header_params}
    if binding.body != "*":
        stray = sorted(set(input) - placed - {binding.body})
        if stray:
            raise Unsendable(f"{stray[0]!r} has no place in the request")
    path = binding.path
    texts: list[tuple[str, str]] = []
    for name in binding.path_params:
        if input.get(name) is None:
            raise Unsendable(f"path parameter {name!r} is missing or null")
        style, explode = style_of(binding, name, "path")
        text = _one_text(name, input[name], style, explode)
        texts.append((name, text))
        path = path.replace("{" + name + "}", quote(text, safe=";=,.!$&'()*+:@"))
    # a segment "." or ".." would be taken away by URL normalization (RFC 3986 dot segments)
    path = "/".join("%2E" * len(seg) if seg in (".", "..") else seg for seg in path.split("/"))
    query: list[tuple[str, str]] = []
    for name in binding.query_params:
        if name in input:
            query.extend(_pairs(name, input[name], *style_of(binding, name, "query")))
    headers: list[tuple[str, str]] = []
    for name in binding.header_params:
        if name in input:
            headers.append((name, _one_text(name, input[name], *style_of(binding, name, "header"))))
    unsendable = [name for name, text in headers if not _HEADER_TEXT.fullmatch(text)]
    if unsendable:  # control characters and the like: sent percent-encoded, and said so
        headers = [(n, quote(t, safe="") if n in unsendable else t) for n, t in headers]
        headers.append((ENCODED_HEADERS, ",".join(unsendable)))
    request = WireRequest(binding.method, path, tuple(texts), tuple(query), tuple(headers))
    if binding.body is None:
        return request
    if binding.body == "*":
        body: Any = {k: v for k, v in input.items() if k not in placed}
        if binding.media != JSON and not body and not binding.body_fields:
            return request  # a form body with no fields (Stripe's deletes): nothing to send
    elif binding.body in input:
        body = input[binding.body]
    else:
        return request
    if binding.media == JSON:
        return attrs.evolve(request, media=JSON, json=body)
    if not isinstance(body, Mapping):
        raise Unsendable(f"a {binding.media} body is a set of fields, not {type(body).__name__}")
    if binding.media == MULTIPART:
        parts: list[tuple[str, str]] = []
        types: list[tuple[str, str]] = []
        for name, value in body.items():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict | list):
                    parts.append((name, _json_text(item)))
                    types.append((name, JSON))
                else:
                    parts.append((name, _text(item)))
        return attrs.evolve(request, media=MULTIPART, form=tuple(parts), part_types=tuple(types))
    fields: list[tuple[str, str]] = []
    for name, value in body.items():
        fields.extend(_pairs(name, value, *style_of(binding, name, "form")))
    return attrs.evolve(request, media=FORM, form=tuple(fields))


def _text(value: Any) -> str:
    """A scalar's text: JSON's spelling of numbers, booleans and null (as empty), strings as they are."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        raise Unsendable(f"{value!r} has no text")
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    raise Unsendable(f"a {type(value).__name__} inside a parameter has no text")


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        raise Unsendable(f"{value!r} has no JSON text") from None


def _flat(value: Any, joiner: str, explode: bool) -> str:
    """An array or object as one text: items (``k=v`` when exploded, ``k,v`` when not) joined."""
    if isinstance(value, list):
        return joiner.join(_text(v) for v in value)
    if isinstance(value, dict):
        if explode:
            return joiner.join(f"{k}={_text(v)}" for k, v in value.items())
        return joiner.join(f"{k}{joiner}{_text(v)}" for k, v in value.items())
    return _text(value)


def _one_text(name: str, value: Any, style: str, explode: bool) -> str:
    """A path or header parameter's text (``simple``, ``label``, ``matrix``, or ``content``)."""
    if style == CONTENT:
        return _json_text(value)
    if style == "label":
        return "." + _flat(value, "." if explode else ",", explode)
    if style == "matrix":
        if isinstance(value, list) and explode:
            return "".join(f";{name}={_text(v)}" for v in value)
        if isinstance(value, dict) and explode:
            return "".join(f";{k}={_text(v)}" for k, v in value.items())
        return f";{name}=" + _flat(value, ",", False) if value != "" else f";{name}"
    return _flat(value, ",", explode)


def _pairs(name: str, value: Any, style: str, explode: bool) -> list[tuple[str, str]]:
    """A query parameter's (or form field's) name=text pairs."""
    if style == CONTENT:
        return [(name, _json_text(value))]
    if style == "deepObject":
        return _deep(name, value)
    if isinstance(value, list):
        if explode:
            return [(name, _text(v)) for v in value]
        return [(name, _DELIMITER.get(style, ",").join(_text(v) for v in value))]
    if isinstance(value, dict):
        if explode:
            return [(k, _text(v)) for k, v in value.items()]
        return [(name, _DELIMITER.get(style, ",").join(f"{k},{_text(v)}" for k, v in value.items()))]
    return [(name, _text(value))]


def _deep(name: str, value: Any) -> list[tuple[str, str]]:
    """``name[key][0]=text``: objects by key, arrays by index, at any depth (as Stripe writes them)."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _deep(f"{name}[{k}]", v)]
    if isinstance(value, list):
        return [pair for i, v in enumerate(value) for pair in _deep(f"{name}[{i}]", v)]
    return [(name, _text(value))]


# ----------------------------------------------------------------------------------- decoding


def decode(
    op: Operation,
    *,
    path: Mapping[str, str],
    query: Sequence[tuple[str, str]],
    headers: Mapping[str, str],
    form: Sequence[tuple[str, str]] | None = None,
    media: str | None = None,
) -> dict[str, Any]:
    """The operation's input fields from a request's decoded texts (path parameters by name,
    query pairs, headers by lower-case name, form fields or parts) for a ``form`` or
    ``multipart`` body; a JSON body is the caller's (it is a value already)."""
    binding = op.http
    assert binding is not None
    value: dict[str, Any] = {}
    for name in binding.path_params:
        if name in path:
            style, explode = style_of(binding, name, "path")
            value[name] = _read_one(name, path[name], style, explode, field_type(op, name))
    claimed = set(binding.query_params)  # an exploded object's properties are the other names
    for name in binding.query_params:
        found = _read_pairs(name, query, *style_of(binding, name, "query"), field_type(op, name), claimed)
        if found is not _ABSENT:
            value[name] = found
    encoded = set(headers.get(ENCODED_HEADERS, "").split(","))
    for name in binding.header_params:
        text = headers.get(name.lower())
        if text is not None:
            if name in encoded:
                text = unquote(text)
            style, explode = style_of(binding, name, "header")
            value[name] = _read_one(name, text, style, explode, field_type(op, name))
    if form is not None and binding.body is not None:
        fields = _read_form(op, binding, form, media or binding.media)
        if binding.body == "*":
            value.update((k, v) for k, v in fields.items() if k not in value)
        else:
            value[binding.body] = fields
    return value


class _Absent:
    pass


_ABSENT: Any = _Absent()


def field_type(op: Operation, name: str) -> Type:
    """The type of one input field (``ANY`` where the input type does not say)."""
    return _member(op.input_type, name)


def _member(t: Type, name: str) -> Type:
    for option in options(strip_null(t)):
        if isinstance(option, RecordType):
            found = option.field(name)
            if found is not None:
                return found
        if isinstance(option, MapType):
            return option.value
    return AnyType()


def _shape(t: Type) -> set[str]:
    """What a value of ``t`` may be here: ``list``, ``object`` and/or ``leaf``."""
    shapes: set[str] = set()
    for option in options(strip_null(t)):
        if isinstance(option, ListType):
            shapes.add("list")
        elif isinstance(option, RecordType | MapType):
            shapes.add("object")
        else:
            shapes.add("leaf")
    return shapes


def read_scalar(text: str, t: Type) -> Any:
    """A parameter's text as its type's scalar: an integer, a number, a boolean or null where the
    type admits one and the text spells it; else the text."""
    kinds = {o.kind for o in options(t) if isinstance(o, Prim)}
    if kinds & {"integer", "number"} and _INTEGER.fullmatch(text):
        return int(text)  # exact at any size
    if "number" in kinds and _NUMBER.fullmatch(text):
        return float(text)
    if "boolean" in kinds and text in ("true", "false"):
        return text == "true"
    if (
        "null" in kinds
        and text == ""
        and "string" not in kinds
        and not any(isinstance(o, AnyType) for o in options(t))
    ):
        return None
    return text


def _item_type(t: Type) -> Type:
    for option in options(strip_null(t)):
        if isinstance(option, ListType):
            return option.item
    return AnyType()


def _read_list(items: list[str], t: Type) -> list[Any]:
    item = _item_type(t)
    return [read_scalar(x, item) for x in items]


def _read_object(pairs: list[tuple[str, str]], t: Type) -> dict[str, Any]:
    return {k: read_scalar(v, _member(t, k)) for k, v in pairs}


def _alternating(items: list[str]) -> list[tuple[str, str]]:
    if len(items) % 2:
        return [(k, "") for k in items]  # not key,value pairs: read as keys, judged by the schema
    return list(zip(items[::2], items[1::2]))


def _key_values(items: list[str]) -> list[tuple[str, str]]:
    return [(k, v) for k, _, v in (item.partition("=") for item in items)]


def _read_one(name: str, text: str, style: str, explode: bool, t: Type) -> Any:
    """A path or header parameter from its text."""
    if style == CONTENT:
        return _read_json(text)
    shapes = _shape(t)
    if style == "label" and text.startswith("."):
        text = text[1:]
        joiner = "." if explode else ","
    elif style == "matrix" and text.startswith(";"):
        if explode and shapes == {"object"}:
            return _read_object(_key_values(text[1:].split(";")), t)
        if explode and shapes == {"list"}:
            return _read_list([item.partition("=")[2] for item in text[1:].split(";")], t)
        text = text[1:].partition("=")[2]
        joiner = ","
    else:
        joiner = ","
    if shapes == {"list"}:
        return _read_list(text.split(joiner) if text else [], t)
    if shapes == {"object"}:
        items = text.split(joiner) if text else []
        return _read_object(_key_values(items) if explode else _alternating(items), t)
    return read_scalar(text, t)


def _read_pairs(
    name: str, pairs: Sequence[tuple[str, str]], style: str, explode: bool, t: Type, claimed: set[str]
) -> Any:
    """A query parameter (or form field) from the request's name=text pairs; ``_ABSENT`` when
    the request does not carry it."""
    shapes = _shape(t)
    if style == "deepObject" or (style != CONTENT and shapes & {"list", "object"}):
        # name[key]=text (also read where the document says form: clients write it either way)
        nested = [(k[len(name) :], v) for k, v in pairs if k.startswith(name + "[")]
        if nested:
            return _read_tree(_tree(nested), t)
    mine = [v for k, v in pairs if k == name]
    if style == CONTENT:
        return _read_json(mine[-1]) if mine else _ABSENT
    if style == "deepObject":
        return read_scalar(mine[-1], t) if mine else _ABSENT
    if "list" in shapes and (len(mine) > 1 or (mine and "leaf" not in shapes)):
        if explode:
            return _read_list(mine, t)
        return _read_list(mine[-1].split(_DELIMITER.get(style, ",")) if mine[-1] else [], t)
    if shapes == {"object"} and explode:
        props = _props(t)
        found = [(k, v) for k, v in pairs if k in props and k not in claimed]
        return _read_object(found, t) if found else _ABSENT
    if shapes == {"object"} and mine:
        return _read_object(_alternating(mine[-1].split(_DELIMITER.get(style, ","))) if mine[-1] else [], t)
    return read_scalar(mine[-1], t) if mine else _ABSENT


def _props(t: Type) -> set[str]:
    return {k for o in options(strip_null(t)) if isinstance(o, RecordType) for k in o.names}


def _tree(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """``[a][0]=x`` pairs as nested dicts of texts (an empty ``[]`` appends)."""
    root: dict[str, Any] = {}
    for suffix, text in pairs:
        keys = _BRACKETS.findall(suffix)
        if not keys or "".join(f"[{k}]" for k in keys) != suffix:
            continue  # not a bracket path: a different field whose name starts like this one
        node = root
        for key in keys[:-1]:
            key = key or str(len(node))
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
        last = keys[-1] or str(len(node))
        node[last] = text
    return root


def _read_tree(node: Any, t: Type) -> Any:
    if not isinstance(node, dict):
        return read_scalar(node, t)
    shapes = _shape(t)
    if "list" in shapes and node and all(k.isdigit() for k in node):
        item = _item_type(t)
        return [_read_tree(node[k], item) for k in sorted(node, key=int)]
    return {k: _read_tree(v, _member(t, k)) for k, v in node.items()}


def _read_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _read_form(
    op: Operation, binding: HttpBinding, form: Sequence[tuple[str, str]], media: str
) -> dict[str, Any]:
    """A form body's fields (urlencoded by their encoding styles, or multipart parts)."""
    body_type = op.input_type if binding.body == "*" else field_type(op, str(binding.body))
    names = list(dict.fromkeys(k.partition("[")[0] for k, _ in form))
    fields: dict[str, Any] = {}
    if media == MULTIPART:
        for name in names:
            t = _member(body_type, name)
            texts = [v for k, v in form if k == name]
            shapes = _shape(t)
            if "list" in shapes and (len(texts) > 1 or "leaf" not in shapes):
                item = _item_type(t)
                fields[name] = [_read_part(x, item) for x in texts]
            else:
                fields[name] = _read_part(texts[-1], t)
        return fields
    for name in names:
        style, explode = style_of(binding, name, "form")
        found = _read_pairs(name, form, style, explode, _member(body_type, name), set())
        if found is not _ABSENT:
            fields[name] = found
    return fields


def _read_part(text: str, t: Type) -> Any:
    if "object" in _shape(t) or "list" in _shape(t):
        found = _read_json(text)
        if isinstance(found, dict | list):
            return found
    return read_scalar(text, t)


def same(a: Any, b: Any) -> bool:
    """JSON equality that tells booleans from numbers (``True`` is not ``1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


__all__ = [
    "ENCODED_HEADERS",
    "FORM",
    "JSON",
    "MULTIPART",
    "Unsendable",
    "WireRequest",
    "decode",
    "encode",
    "field_type",
    "read_scalar",
    "same",
    "style_of",
]
