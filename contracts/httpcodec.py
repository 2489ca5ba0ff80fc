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
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote, unquote_plus

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
MAX_DEPTH = 64
"""Bracket levels a ``deepObject`` field may nest (a deeper one is not read: the schema judges)."""
CONTENT = "content"
"""The style of a parameter described by ``content`` (its value is that media type's text: JSON)."""
_INTEGER = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_HEADER_TEXT = re.compile(r"([\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?)?")


class Unsendable(Exception):
    """No HTTP request expresses this input (as the operation's binding writes it)."""


@attrs.frozen(slots=True)
class WireRequest:
    """The parts of an HTTP request one call becomes. Path parameters, query pairs and
    urlencoded form fields are *raw*: percent-encoded, items escaped and delimiters literal, as
    they go on the wire (``,`` inside an item is ``%2C``, the ``,`` between items is not); header
    values and multipart parts are plain texts."""

    method: str
    path: str  # ready to append to the base URL
    path_params: tuple[tuple[str, str], ...] = ()  # each path parameter's raw text
    query: tuple[tuple[str, str], ...] = ()  # raw name=value pairs
    headers: tuple[tuple[str, str], ...] = ()
    media: str | None = None  # the body's media type; None: no body
    form: tuple[tuple[str, str], ...] = ()  # raw fields (urlencoded) or plain parts (multipart)
    json: Any = None  # the JSON body, where ``media`` is JSON
    part_types: tuple[tuple[str, str], ...] = ()  # multipart: a part's content type, where not text

    @property
    def query_string(self) -> str:
        return "&".join(f"{k}={v}" for k, v in self.query)

    @property
    def form_body(self) -> str:
        return "&".join(f"{k}={v}" for k, v in self.form)


def style_of(binding: HttpBinding, name: str, where: str) -> tuple[str, bool]:
    """A field's (style, explode), OpenAPI's defaults where the document says nothing."""
    for field, style, explode in binding.styles:
        if field == name:
            return style, explode
    style = DEFAULT_STYLE[where]
    return style, style == "form"


def route_path(path: str) -> str:
    """The path a request is sent to: without the ``#fragment`` some documents use to tell
    operations on one path apart (Box's ``/files/{file_id}#add_shared_link``)."""
    return path.partition("#")[0]


OPERATION_HEADER = "x-envfactory-operation"
"""Names the operation a request means where another of its method matches its path too (a
concrete ``/templates/enterprise/schema`` beside ``/templates/{scope}/schema``, or operations told
apart only by a ``#fragment``, which never travels); ``envfactory serve`` honours it."""


def path_pattern(template: str) -> re.Pattern[str]:
    """A path template as a regex over request paths: each ``{name}`` one segment (empty
    included), its groups in the order of ``path_names``."""
    parts = re.split(r"(\{[^{}/]+\})", route_path(template))
    body = "".join("([^/]*)" if p.startswith("{") and p.endswith("}") else re.escape(p) for p in parts)
    return re.compile(body + r"\Z")


def path_names(template: str) -> list[str]:
    return re.findall(r"\{([^{}/]+)\}", route_path(template))


# ----------------------------------------------------------------------------------- encoding


def _keep(text: str, delimiter: str = "") -> str:
    return text


def _escape(text: str, delimiter: str = "") -> str:
    """Percent-encode everything but unreserved characters (and ``.`` too where it delimits).
    A delimiter inside an item is escaped in lower case (``%2c``): the server reads an upper-case
    ``%2C`` in a value without literal commas as a delimiter, the way common clients (which
    encode the whole joined text) write one, so only a lower-case escape stays inside its item."""
    out = quote(text, safe="").replace("%2C", "%2c").replace("%7C", "%7c").replace("%3B", "%3b")
    return out.replace(".", "%2e") if delimiter == "." else out


def encode(op: Operation, input: Any) -> WireRequest:
    """The request ``op(input)`` becomes; raises ``Unsendable`` where no request expresses it."""
    binding = op.http
    assert binding is not None
    if not isinstance(input, Mapping):
        if binding.body != "*" or binding.media != JSON or binding.path_params:
            raise Unsendable("the input is not an object, and no request expresses it")
        return WireRequest(binding.method, route_path(binding.path), media=JSON, json=input)
    placed = {*binding.path_params, *binding.query_params, *binding.header_params}
    if binding.body != "*":
        stray = sorted(set(input) - placed - {binding.body})
        if stray:
            raise Unsendable(f"{stray[0]!r} has no place in the request")
    path = route_path(binding.path)
    texts: list[tuple[str, str]] = []
    for name in binding.path_params:
        if input.get(name) is None:
            raise Unsendable(f"path parameter {name!r} is missing or null")
        text = _path_text(name, input[name], *style_of(binding, name, "path"))
        texts.append((name, text))
        path = path.replace("{" + name + "}", text)
    # a segment "." or ".." would be taken away by URL normalization (RFC 3986 dot segments)
    path = "/".join("%2e" * len(seg) if seg in (".", "..") else seg for seg in path.split("/"))
    query: list[tuple[str, str]] = []
    for name in binding.query_params:
        if name in input:
            query.extend(_pairs(name, input[name], *style_of(binding, name, "query")))
    headers: list[tuple[str, str]] = []
    encoded: list[str] = []
    for name in binding.header_params:
        value = input.get(name)
        if value is None or value in ([], {}):
            continue  # null and empty: no header at all
        style, explode = style_of(binding, name, "header")
        plain = _json_text(value) if style == CONTENT else _flat(value, ",", explode, _keep)
        if _HEADER_TEXT.fullmatch(plain) and same(
            _read_one(name, plain, style, explode, field_type(op, name), _plain, [""]), value
        ):
            headers.append((name, plain))
        else:  # an item holding the delimiter, control characters and the like: percent-encoded
            headers.append(
                (name, _escape(plain) if style == CONTENT else _flat(value, ",", explode, _escape))
            )
            encoded.append(name)
    if encoded:
        headers.append((ENCODED_HEADERS, ",".join(encoded)))
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
            for item in value if isinstance(value, list) else [] if value is None else [value]:
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
    """A scalar's text: JSON's spelling of numbers, booleans and null (as empty), strings as they
    are; an object or array inside a parameter (an array of objects in a query) as its JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        raise Unsendable(f"{value!r} has no text")
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return _json_text(value)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        raise Unsendable(f"{value!r} has no JSON text") from None


def _flat(value: Any, joiner: str, explode: bool, escape: Any) -> str:
    """An array or object as one text: escaped items (``k=v`` when exploded, ``k,v`` when not)
    joined by a literal ``joiner`` (``,`` for non-exploded objects' pairs in label style too)."""
    if isinstance(value, list):
        return joiner.join(escape(_text(v), joiner) for v in value)
    if isinstance(value, dict):
        if explode:
            return joiner.join(f"{escape(k, joiner)}={escape(_text(v), joiner)}" for k, v in value.items())
        inner = "," if joiner == "." else joiner
        return inner.join(f"{escape(k, joiner)}{inner}{escape(_text(v), joiner)}" for k, v in value.items())
    return escape(_text(value), joiner)


def _path_text(name: str, value: Any, style: str, explode: bool) -> str:
    """A path parameter's raw text (``simple``, ``label``, ``matrix``, or ``content``)."""
    if style == CONTENT:
        return _escape(_json_text(value))
    if style == "label":
        return "." + _flat(value, "." if explode else ",", explode, _escape)
    if style == "matrix":
        if isinstance(value, list) and explode:
            return "".join(f";{name}={_escape(_text(v))}" for v in value)
        if isinstance(value, dict) and explode:
            return "".join(f";{_escape(k)}={_escape(_text(v))}" for k, v in value.items())
        return f";{name}=" + _flat(value, ",", False, _escape) if value != "" else f";{name}"
    return _flat(value, ",", explode, _escape)


def _pairs(name: str, value: Any, style: str, explode: bool) -> list[tuple[str, str]]:
    """A query parameter's (or urlencoded form field's) raw name=value pairs; null, an empty array
    and an empty object write none (as common clients do: they arrive as absent)."""
    key = quote(name, safe="[]")
    if style == CONTENT:
        return [(key, _escape(_json_text(value)))]
    if style == "deepObject":
        return _deep(key, value)
    if value is None or value in ([], {}):
        return []
    joiner = _RAW_DELIMITER.get(style, ",")
    if isinstance(value, list):
        if explode:
            return [(key, _escape(_text(v))) for v in value]
        return [(key, joiner.join(_escape(_text(v)) for v in value))]
    if isinstance(value, dict):
        if explode:
            return [(quote(k, safe="[]"), _escape(_text(v))) for k, v in value.items()]
        return [(key, joiner.join(f"{_escape(k)}{joiner}{_escape(_text(v))}" for k, v in value.items()))]
    return [(key, _escape(_text(value)))]


_RAW_DELIMITER = {"spaceDelimited": "%20", "pipeDelimited": "|"}


def _deep(key: str, value: Any) -> list[tuple[str, str]]:
    """``name[key][0]=text``: objects by key, arrays by index, at any depth (as Stripe writes them)."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _deep(f"{key}[{quote(str(k), safe='')}]", v)]
    if isinstance(value, list):
        return [pair for i, v in enumerate(value) for pair in _deep(f"{key}[{i}]", v)]
    return [(key, _escape(_text(value)))]


# ----------------------------------------------------------------------------------- decoding


Unescape = Callable[[str], str]


def _plain(text: str) -> str:
    return text


def raw_pairs(text: str) -> list[tuple[str, str]]:
    """A query string's (or urlencoded body's) pairs: names decoded, values still raw."""
    pairs = []
    for part in text.split("&"):
        if part:
            name, _, value = part.partition("=")
            pairs.append((unquote_plus(name), value))
    return pairs


def decode(
    op: Operation,
    *,
    path: Mapping[str, str],
    query: Sequence[tuple[str, str]],
    headers: Mapping[str, str],
    form: Sequence[tuple[str, str]] | None = None,
    media: str | None = None,
) -> dict[str, Any]:
    """The operation's input fields from a request: raw path parameters by name, the query's
    ``raw_pairs``, headers by lower-case name, and for a ``form`` body its ``raw_pairs`` or for
    a ``multipart`` one its parts as texts; a JSON body is the caller's (it is a value already)."""
    binding = op.http
    assert binding is not None
    value: dict[str, Any] = {}
    for name in binding.path_params:
        if name in path:
            style, explode = style_of(binding, name, "path")
            value[name] = _read_one(name, path[name], style, explode, field_type(op, name), unquote)
    claimed = set(binding.query_params)  # an exploded object's properties are the other names
    for name in binding.query_params:
        found = _read_pairs(name, query, *style_of(binding, name, "query"), field_type(op, name), claimed)
        if found is not _ABSENT:
            value[name] = found
    encoded = set(headers.get(ENCODED_HEADERS, "").split(","))
    for name in binding.header_params:
        text = headers.get(name.lower())
        if text is not None:
            style, explode = style_of(binding, name, "header")
            unescape = unquote if name in encoded else _plain
            value[name] = _read_one(name, text, style, explode, field_type(op, name), unescape, [""])
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
    """A parameter's text as its type's value: an integer, a number, a boolean or null where the
    type admits one and the text spells it, an object or array (an item of an array of objects)
    where it admits one and the text is its JSON; else the text."""
    if text[:1] in ("{", "[") and _shape(t) & {"list", "object"}:
        found = _read_json(text)
        if isinstance(found, dict | list):
            return found
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


_ENCODED_DELIMITER = {",": "%2C", "|": "%7C", ".": "%2E", ";": "%3B"}


def _split(raw: str, delimiter: str, unescape: Unescape) -> list[str]:
    """Raw items between literal delimiters (``%20`` and ``+`` both for a space). Where the
    text has no literal delimiter but an encoded one (``a%2Cb``, as clients that encode the
    whole value write it), the decoded text is split instead, its items escaped again."""
    literal = ("%20", "+") if delimiter == "%20" else (delimiter,)
    pieces = re.split("|".join(re.escape(d) for d in literal), raw)
    encoded = _ENCODED_DELIMITER.get(delimiter)
    if len(pieces) == 1 and unescape is not _plain and encoded and encoded in raw:
        return [quote(item, safe="") for item in unescape(raw).split(delimiter)]
    return pieces


def _read_list(raw: str, delimiter: str, t: Type, unescape: Unescape, *, empty: list[Any]) -> list[Any]:
    if raw == "":
        return empty
    item = _item_type(t)
    return [read_scalar(unescape(x), item) for x in _split(raw, delimiter, unescape)]


def _read_object(items: list[str], t: Type, unescape: Unescape, explode: bool) -> dict[str, Any]:
    """An object from raw items: ``k=v`` each (exploded), else ``k``, ``v`` alternating."""
    if explode:
        pairs = [(k, v) for k, _, v in (item.partition("=") for item in items)]
    elif len(items) % 2:
        pairs = [(k, "") for k in items]  # not key,value pairs: read as keys, judged by the schema
    else:
        pairs = list(zip(items[::2], items[1::2]))
    out = {}
    for k, v in pairs:
        key = unescape(k)
        out[key] = read_scalar(unescape(v), _member(t, key))
    return out


def _read_one(
    name: str,
    raw: str,
    style: str,
    explode: bool,
    t: Type,
    unescape: Unescape,
    empty: list[Any] | None = None,
) -> Any:
    """A path or header parameter from its raw text; an empty text is ``empty`` of an array (an
    empty array in a header writes no header at all, so there it is one empty item)."""
    if style == CONTENT:
        return _read_json(unescape(raw))
    shapes = _shape(t)
    delimiter = ","
    if style == "label" and raw.upper() in ("%2E", "%2E%2E"):
        raw = "." + raw[3:]  # a bare "." segment travels escaped (see ``encode``)
    if style == "label" and raw.startswith("."):
        raw = raw[1:]
        delimiter = "." if explode else ","
    elif style == "matrix" and raw.startswith(";"):
        pieces = raw[1:].split(";")
        if explode and shapes == {"object"}:
            return _read_object(pieces, t, unescape, True)
        if explode and shapes == {"list"}:
            item = _item_type(t)
            return [read_scalar(unescape(p.partition("=")[2]), item) for p in pieces]
        raw = pieces[0].partition("=")[2]
    if shapes == {"list"}:
        return _read_list(raw, delimiter, t, unescape, empty=list(empty or []))
    if shapes == {"object"}:
        items = _split(raw, delimiter if explode else ("," if delimiter == "." else delimiter), unescape)
        return _read_object(items if raw else [], t, unescape, explode)
    return read_scalar(unescape(raw), t)


def _read_pairs(
    name: str, pairs: Sequence[tuple[str, str]], style: str, explode: bool, t: Type, claimed: set[str]
) -> Any:
    """A query parameter (or urlencoded form field) from the request's (name, raw value) pairs;
    ``_ABSENT`` when the request does not carry it."""
    shapes = _shape(t)
    if style == "deepObject" or (style != CONTENT and shapes & {"list", "object"}):
        # name[key]=text (also read where the document says form: clients write it either way)
        nested = [(k[len(name) :], v) for k, v in pairs if k.startswith(name + "[")]
        if nested:
            return _read_tree(_tree(nested), t)
    mine = [v for k, v in pairs if k == name]
    if not mine:
        if shapes == {"object"} and explode and style != CONTENT:
            props = _props(t)
            found = [f"{quote(k, safe='')}={v}" for k, v in pairs if k in props and k not in claimed]
            return _read_object(found, t, unquote_plus, True) if found else _ABSENT
        return _ABSENT
    if style == CONTENT:
        return _read_json(unquote_plus(mine[-1]))
    if style == "deepObject":
        return read_scalar(unquote_plus(mine[-1]), t)
    delimiter = _RAW_DELIMITER.get(style, ",")
    if "list" in shapes and (len(mine) > 1 or "leaf" not in shapes):
        if explode:
            item = _item_type(t)
            return [read_scalar(unquote_plus(v), item) for v in mine]
        # an empty array writes nothing, so an empty text is one empty item
        return _read_list(mine[-1], delimiter, t, unquote_plus, empty=[""])
    if shapes == {"object"}:
        items = _split(mine[-1], delimiter, unquote_plus) if mine[-1] else []
        return _read_object(items, t, unquote_plus, False)
    return read_scalar(unquote_plus(mine[-1]), t)


def _props(t: Type) -> set[str]:
    return {k for o in options(strip_null(t)) if isinstance(o, RecordType) for k in o.names}


def _tree(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """``[a][0]=x`` pairs as nested dicts of raw texts (an empty ``[]`` appends)."""
    root: dict[str, Any] = {}
    for suffix, text in pairs:
        keys = _BRACKETS.findall(suffix)
        if not keys or len(keys) > MAX_DEPTH or "".join(f"[{k}]" for k in keys) != suffix:
            continue  # not a bracket path (another field's name starts like this one), or too deep
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
        return read_scalar(unquote_plus(node), t)
    shapes = _shape(t)
    if "list" in shapes and node and all(k.isdigit() for k in node):
        item = _item_type(t)
        return [_read_tree(node[k], item) for k in sorted(node, key=int)]
    return {k: _read_tree(v, _member(t, k)) for k, v in node.items()}


def _read_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
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
                fields[name] = [read_scalar(x, item) for x in texts]
            elif texts:
                fields[name] = read_scalar(texts[-1], t)
        return fields
    for name in names:
        style, explode = style_of(binding, name, "form")
        found = _read_pairs(name, form, style, explode, _member(body_type, name), set())
        if found is not _ABSENT:
            fields[name] = found
    return fields


def pruned(value: Any) -> Any:
    """``value`` without what a query, header or form cannot write: null, and objects and arrays
    left empty, inside objects at any depth (an array keeps its items)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = pruned(v)
            if not (v is None or v == {} or v == []):
                out[k] = v
        return out
    if isinstance(value, list):
        return [pruned(v) if isinstance(v, dict) else v for v in value]
    return value


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
    "OPERATION_HEADER",
    "Unsendable",
    "WireRequest",
    "decode",
    "encode",
    "field_type",
    "path_names",
    "path_pattern",
    "pruned",
    "raw_pairs",
    "read_scalar",
    "route_path",
    "same",
    "style_of",
]
