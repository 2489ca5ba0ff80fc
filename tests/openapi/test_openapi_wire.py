"""Parameters by OpenAPI ``style``/``explode`` and bodies as forms and multipart, both ways (issue 16
item 3): ``httpcodec.encode`` writes the specification's own examples, ``serve`` reads back what
the fuzzer's client (and other clients) send, and a drawn input travels client -> serve unchanged
(checked in the session's ``/_trajectory``, which records the input as the server read it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import envfactory
from envfactory.contracts import httpcodec
from envfactory.contracts.errors import ContractError
from envfactory.fuzz.targets import HttpTarget
from envfactory.server import running

DOC = """openapi: 3.0.3
info: {title: wire, version: '1'}
x-envfactory: {infer: false}
paths:
  /things/{ids}/{point}/{tags}/{label}:
    get:
      operationId: styles
      parameters:
        - {name: ids, in: path, required: true, style: label, explode: true,
           schema: {type: array, items: {type: integer}}}
        - {name: point, in: path, required: true, style: matrix, explode: true,
           schema: {type: object, properties: {x: {type: integer}, y: {type: number}}}}
        - {name: tags, in: path, required: true, schema: {type: array, items: {type: string}}}
        - {name: label, in: path, required: true, style: matrix, schema: {type: string}}
        - {name: fields, in: query, explode: false, schema: {type: array, items: {type: string}}}
        - {name: sizes, in: query, style: pipeDelimited, explode: false,
           schema: {type: array, items: {type: integer}}}
        - {name: words, in: query, style: spaceDelimited, explode: false,
           schema: {type: array, items: {type: string}}}
        - {name: filter, in: query, style: deepObject, explode: true,
           schema: {type: object, properties: {min: {type: integer}, on: {type: boolean}}}}
        - {name: color, in: query, schema: {type: object, properties: {R: {type: integer}, G: {type: integer}}}}
        - {name: rgb, in: query, explode: false,
           schema: {type: object, properties: {R: {type: integer}, B: {type: integer}}}}
        - {name: X-Flags, in: header, schema: {type: array, items: {type: boolean}}}
        - {name: X-Tags, in: header, schema: {type: array, items: {type: string}}}
        - {name: q, in: query, content: {application/json: {schema: {type: object}}}}
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: object}}}}
  /forms:
    post:
      operationId: form
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string}
                age: {type: integer}
                metadata: {type: object, additionalProperties: {type: string}}
                items:
                  type: array
                  items: {type: object, properties: {price: {type: string}, quantity: {type: integer}}}
                tags: {type: array, items: {type: string}}
            encoding:
              metadata: {style: deepObject, explode: true}
              items: {style: deepObject, explode: true}
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: object}}}}
  /uploads:
    post:
      operationId: upload
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                file: {type: string, format: binary}
                attributes: {type: object, properties: {name: {type: string}}}
                parts: {type: array, items: {type: integer}}
                note: {type: string}
      responses:
        '201': {description: ok, content: {application/json: {schema: {type: object}}}}
"""


@pytest.fixture(scope="module")
def contract(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("wire") / "wire.yaml"
    path.write_text(DOC)
    return envfactory.load(path)


@pytest.fixture(scope="module")
def served(contract: Any) -> Any:
    with running(contract) as url:
        yield url


def _last_input(client: httpx.Client, session: str) -> Any:
    line = client.get("/_trajectory", headers={"x-envfactory-session": session}).text
    return json.loads(line)["steps"][-1]["input"]


def test_bindings_carry_media_types_and_styles(contract: Any) -> None:
    styles = contract.operations["styles"].http
    assert httpcodec.style_of(styles, "ids", "path") == ("label", True)
    assert httpcodec.style_of(styles, "tags", "path") == ("simple", False)  # OpenAPI's defaults
    assert httpcodec.style_of(styles, "color", "query") == ("form", True)
    assert httpcodec.style_of(styles, "q", "query") == (httpcodec.CONTENT, False)
    form = contract.operations["form"].http
    assert form.media == httpcodec.FORM and httpcodec.style_of(form, "metadata", "form") == (
        "deepObject",
        True,
    )
    assert contract.operations["upload"].http.media == httpcodec.MULTIPART


def test_encode_writes_the_specifications_examples(contract: Any) -> None:
    """The style table of OpenAPI 3.0.3 (section "Style Examples"), with its blue/black/brown
    array and its R/G/B object."""
    wire = httpcodec.encode(
        contract.operations["styles"],
        {
            "ids": [3, 4, 5],
            "point": {"x": 1, "y": 2.5},
            "tags": ["blue", "black", "brown"],
            "label": "blue",
            "fields": ["blue", "black", "brown"],
            "sizes": [1, 2],
            "words": ["blue", "black"],
            "filter": {"min": 3, "on": True},
            "color": {"R": 100, "G": 200},
            "rgb": {"R": 100, "B": 150},
            "X-Flags": [True, False],
            "q": {"a": [1]},
        },
    )
    assert wire.path == "/things/.3.4.5/;x=1;y=2.5/blue,black,brown/;label=blue"
    assert wire.query == (
        ("fields", "blue,black,brown"),
        ("sizes", "1|2"),
        ("words", "blue%20black"),
        ("filter[min]", "3"),
        ("filter[on]", "true"),
        ("R", "100"),
        ("G", "200"),
        ("rgb", "R,100,B,150"),
        ("q", "%7B%22a%22%3A%5B1%5D%7D"),
    )
    assert wire.headers == (("X-Flags", "true,false"),)
    form = httpcodec.encode(
        contract.operations["form"],
        {
            "name": "ann",
            "metadata": {"plan": "gold"},
            "items": [{"price": "p1", "quantity": 2}],
            "tags": ["a", "b"],
        },
    )
    assert form.media == httpcodec.FORM
    assert form.form == (
        ("name", "ann"),
        ("metadata[plan]", "gold"),
        ("items[0][price]", "p1"),
        ("items[0][quantity]", "2"),
        ("tags", "a"),
        ("tags", "b"),
    )


def test_serve_reads_what_clients_write(served: str) -> None:
    """Raw requests as other clients write them: a comma escaped or not, repeated parameters,
    ``name[]`` arrays, a form body (Stripe's creates), multipart parts (a file among them)."""
    with httpx.Client(timeout=300, base_url=served) as client:
        s = {"x-envfactory-session": "raw"}
        url = "/things/.1.2/;x=-4;y=0.5/a,b/;label=z?fields=a%2Cb&sizes=1|2&words=x%20y&filter[min]=3&R=9&rgb=R,1,B,2"
        answer = client.get(url, headers={**s, "X-Flags": "true,false"})
        assert answer.status_code == 200, answer.text
        assert _last_input(client, "raw") == {
            "ids": [1, 2],
            "point": {"x": -4, "y": 0.5},
            "tags": ["a", "b"],
            "label": "z",
            "fields": ["a", "b"],
            "sizes": [1, 2],
            "words": ["x", "y"],
            "filter": {"min": 3},
            "color": {"R": 9},
            "rgb": {"R": 1, "B": 2},
            "X-Flags": [True, False],
        }
        answer = client.post(
            "/forms",
            content="name=ann+lee&age=7&metadata[plan]=gold&items[][price]=p1&tags=a&tags=b",
            headers={**s, "content-type": "application/x-www-form-urlencoded"},
        )
        assert answer.status_code == 200, answer.text
        assert _last_input(client, "raw") == {
            "name": "ann lee",
            "age": 7,
            "metadata": {"plan": "gold"},
            "items": [{"price": "p1"}],
            "tags": ["a", "b"],
        }
        answer = client.post(
            "/uploads",
            files=[
                ("file", ("a.txt", b"hello", "text/plain")),
                ("parts", (None, "1")),
                ("parts", (None, "2")),
            ],
            data={"attributes": '{"name": "a.txt"}'},
            headers=s,
        )
        assert answer.status_code == 201, answer.text
        assert _last_input(client, "raw") == {
            "file": "hello",
            "attributes": {"name": "a.txt"},
            "parts": [1, 2],
        }
        # a form body that is not a form (bad bytes) and a multipart body without its boundary
        bad = client.post("/forms", content=b"\xff\xfe", headers={"content-type": httpcodec.FORM})
        assert bad.status_code == 400
        torn = client.post(
            "/uploads",
            content=b"--x\r\nnonsense",
            headers={"content-type": "multipart/form-data"},
        )
        assert torn.status_code == 400


TOKENS = st.text(alphabet="abcdefgh-_~09", min_size=1, max_size=6)
# every delimiter of every style, and escapes, inside items: they travel escaped
NASTY = st.text(alphabet="ab,;.=|%&+[]#/?\\ é\t", min_size=1, max_size=6) | st.text(min_size=1, max_size=4)
INTS = st.integers(-(2**70), 2**70)


@st.composite
def style_inputs(draw: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "ids": draw(st.lists(INTS, max_size=3)),
        "point": draw(st.fixed_dictionaries({}, optional={"x": INTS, "y": st.floats(-1e6, 1e6)})),
        "tags": draw(st.lists(NASTY, max_size=3)),
        "label": draw(NASTY | st.just("")),
    }
    optional = {
        "fields": st.lists(NASTY | st.just(""), min_size=1, max_size=3),
        "words": st.lists(TOKENS, min_size=1, max_size=3),
        "X-Tags": st.lists(NASTY | st.just(""), min_size=1, max_size=3),
        "sizes": st.lists(INTS, min_size=1, max_size=3),
        "filter": st.fixed_dictionaries({"min": INTS}, optional={"on": st.booleans()}),
        "color": st.fixed_dictionaries({"R": INTS}, optional={"G": INTS}),
        "X-Flags": st.lists(st.booleans(), min_size=1, max_size=3),
        "q": st.dictionaries(NASTY, st.integers() | st.text(max_size=5), max_size=2),
    }
    for name, strategy in optional.items():
        if draw(st.booleans()):
            value[name] = draw(strategy)
    return value


@st.composite
def form_inputs(draw: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"name": draw(st.text(max_size=8))}  # any text: the form escapes it
    if draw(st.booleans()):
        value["age"] = draw(INTS)
    if draw(st.booleans()):
        value["metadata"] = draw(st.dictionaries(TOKENS, NASTY, min_size=1, max_size=3))
    if draw(st.booleans()):
        item = st.fixed_dictionaries({"price": st.text(max_size=4)}, optional={"quantity": INTS})
        value["items"] = draw(st.lists(item, min_size=1, max_size=3))
    return value


@st.composite
def upload_inputs(draw: Any) -> dict[str, Any]:
    optional = {
        "file": st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=10),
        "attributes": st.fixed_dictionaries({"name": st.text(max_size=5)}),
        "parts": st.lists(INTS, min_size=2, max_size=3),
        "note": TOKENS,
    }
    return {name: draw(s) for name, s in optional.items() if draw(st.booleans())}


@pytest.mark.timeout(600)
@settings(
    max_examples=60, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(
    call=st.one_of(
        st.tuples(st.just("styles"), style_inputs()),
        st.tuples(st.just("form"), form_inputs()),
        st.tuples(st.just("upload"), upload_inputs()),
    )
)
def test_a_drawn_input_travels_from_the_client_to_serve_unchanged(
    contract: Any, served: str, call: tuple[str, dict[str, Any]]
) -> None:
    tool, value = call
    target = HttpTarget(served, contract, timeout=300)
    try:
        answer = target.call(tool, value)
        assert answer.accepted, answer.error
        with httpx.Client(timeout=300, base_url=served) as client:
            assert httpcodec.same(_last_input(client, "default"), value)
    finally:
        target.close()


def test_what_no_request_expresses_is_not_sent(contract: Any, served: str) -> None:
    target = HttpTarget(served, contract, timeout=300)
    base = {"ids": [1], "point": {"x": 1}, "tags": ["a"], "label": "z"}
    try:
        # a space inside a spaceDelimited item is its delimiter, whatever the escape
        assert target.call("styles", {**base, "words": ["a b"]}).status == 422
        assert target.call("styles", {**base, "tags": ["a,b", "c"]}).accepted  # "," travels as %2c
        assert target.call("styles", {**base, "label": 5}).status == 422  # would arrive as "5"
        assert target.call("styles", {**base, "ids": ["7"]}).status == 422  # would arrive as 7
        assert target.call("styles", {**base, "filter": {"min": {"deep": 1}}}).status == 422
        assert target.call("form", ["name"]).status == 422  # a form is a set of fields
        assert target.call("styles", base).accepted
    finally:
        target.close()


def test_a_style_the_place_does_not_allow_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        DOC.replace("in: path, required: true, style: label", "in: path, required: true, style: deepObject")
    )
    with pytest.raises(ContractError) as err:
        envfactory.load(path)
    assert "style 'deepObject'" in str(err.value) and err.value.location is not None
    assert err.value.location.line == 9


FRAGMENTS = """openapi: 3.0.3
info: {title: box-like, version: '1'}
x-envfactory: {infer: false}
paths:
  /files/{id}:
    put:
      operationId: update
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      requestBody: {content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}}
      responses: {'200': {description: ok, content: {application/json: {schema: {type: object}}}}}
  /files/{id}#share:
    put:
      operationId: share
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      requestBody: {content: {application/json: {schema: {type: object, properties: {link: {type: object}}}}}}
      responses: {'201': {description: ok, content: {application/json: {schema: {type: object}}}}}
  /files/special:
    put:
      operationId: special
      responses: {'202': {description: ok, content: {application/json: {schema: {type: object}}}}}
"""


def test_each_call_reaches_its_own_operation(tmp_path: Path) -> None:
    """Box writes ``/files/{file_id}#add_shared_link`` beside ``/files/{file_id}`` (the fragment
    never travels), and ``/metadata_templates/enterprise/...`` beside
    ``/metadata_templates/{scope}/...`` (the concrete path answers first): where another
    operation matches the path, the client names the one it means and serve honours it; a client
    that does not gets the concrete path's, or the one without a fragment."""
    path = tmp_path / "fragments.yaml"
    path.write_text(FRAGMENTS)
    contract = envfactory.load(path)
    with running(contract) as url:
        target = HttpTarget(url, contract, timeout=300)
        try:
            assert target.call("share", {"id": "f1", "link": {"access": "open"}}).status == 201
            assert target.call("update", {"id": "f1", "name": "a"}).status == 200
            # the concrete /files/special answers first, unless the client names the template's
            assert target.call("update", {"id": "special"}).status == 200
            assert target.call("special", {}).status == 202
        finally:
            target.close()
        assert httpx.put(url + "/files/f2", json={"name": "b"}, timeout=300).status_code == 200
        assert httpx.put(url + "/files/special", timeout=300).status_code == 202
        steps = json.loads(httpx.get(url + "/_trajectory", timeout=300).text)["steps"]
    assert [s["tool"] for s in steps] == ["share", "update", "update", "special", "update", "special"]
    assert steps[2]["input"] == {"id": "special"}


def test_the_fuzzer_never_sends_what_no_request_expresses(contract: Any, served: str) -> None:
    """An input the wire cannot carry is neither sent nor judged: fuzzing ``words`` (items that
    may hold spaces, their own delimiter) finds nothing and every call sent arrives intact."""
    from envfactory.fuzz.runner import fuzz

    target = HttpTarget(served, contract, timeout=300)
    base = {"ids": [1], "point": {}, "tags": ["a"], "label": ""}
    assert target.expressible("styles", base)
    assert not target.expressible("styles", {**base, "words": ["a b"]})
    assert not target.expressible("styles", {**base, "label": 5})
    try:
        summary = fuzz(contract, target, seed=0, max_examples=40)
    finally:
        target.close()
    assert summary.calls > 0 and [str(f.message) for f in summary.findings] == []


def test_hostile_forms_get_a_clear_answer(served: str) -> None:
    """Deep brackets, deep JSON items and JSON past Python's recursion: 4xx or read as text,
    never a 500."""
    with httpx.Client(timeout=300, base_url=served) as client:
        deep = "metadata" + "[a]" * 70 + "=x"
        answer = client.post("/forms", content=f"name=a&{deep}", headers={"content-type": httpcodec.FORM})
        assert answer.status_code == 200  # the over-deep field is not read; the rest is
        nested = "[" * 100 + "]" * 100
        answer = client.get(f"/things/.1/;x=1/a/;label=z?q={nested}")
        assert answer.status_code == 400 and "deeper" in answer.text
        answer = client.get("/things/.1/;x=1/a/;label=z?q=" + "[" * 5000)
        assert answer.status_code == 422  # not JSON: the text, which the schema refuses
