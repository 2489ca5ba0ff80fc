"""Published documents that once failed to load, used as they are (see published/README.md):
every published operation is there, and ``check`` exits 0 as a user runs it."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from envfactory.cli import main

PUBLISHED = Path(__file__).resolve().parent / "published"
DOCUMENTS = ("twilio_api_v2010.json", "openai-openapi.yaml", "asana-oas.yaml")
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

pytestmark = pytest.mark.timeout(600)  # a hang guard only


def _published_ids(path: Path) -> set[str]:
    """Every operationId, read with plain json/yaml (independently of envfactory)."""
    text = path.read_text(encoding="utf-8")
    doc: Any = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=yaml.CSafeLoader)
    return {
        op["operationId"]
        for item in doc["paths"].values()
        for method, op in item.items()
        if method in METHODS and isinstance(op, dict) and "operationId" in op
    }


@pytest.mark.parametrize("name", DOCUMENTS)
def test_a_published_document_loads_whole_and_checks_clean(name: str) -> None:
    path = PUBLISHED / name
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as code:
        main(["check", str(path), "--format", "json"])
    assert code.value.code == 0, out.getvalue()[-2000:]
    report = json.loads(out.getvalue())
    assert _published_ids(path) <= {op["name"] for op in report["operations"]}
    assert report["findings"] is not None
