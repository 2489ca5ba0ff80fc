"""``$ref`` resolution: a schema with references becomes one self-contained schema.

``bundle`` follows every ``$ref`` of a schema — into the contract document (``#/schemas/Pet``,
``#/components/schemas/Pet``) and into files beside it (``common.yaml#/Pet``) — and copies each
target once under ``$defs`` of the result, rewriting the reference to point there. The result
needs no resolver: the compiled validator, the type checker and the Z3 encoder all read it as is.

Never the network, never an absolute path, never a file outside the contract's folder; a chain
of references that only refer to each other (``A -> B -> A``) is an error naming the cycle.
Recursive schemas through properties stay legal (they are ordinary recursive ``$defs``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from envfactory.contracts.errors import InputError, Location, RefError

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_DEFS = 5_000
MAX_NODES = 500_000
# one document's shared $defs: bounded by the document's size, not by how often schemas are used
MAX_SHARED_DEFS = 100_000
MAX_SHARED_NODES = 20_000_000
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_NAME_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
"""Keywords whose value is a map of names to schemas, not a schema: a ``$ref`` there replaces the map."""


def bundle(
    schema: Any,
    *,
    document: Any | None = None,
    document_path: str | Path | None = None,
    root_dir: str | Path | None = None,
) -> dict[str, Any]:
    """A copy of ``schema`` with every ``$ref`` resolved into its own ``$defs``.

    ``document`` is what ``#`` means (the contract document; ``schema`` itself when omitted or
    when the pointer does not resolve there); ``document_path`` locates files referenced
    relatively; ``root_dir`` (default: the document's folder) bounds where they may be.
    """
    if is_bundled(schema):
        return dict(schema)  # already bundled against its document: nothing to copy
    path = Path(document_path) if document_path is not None else None
    root = Path(root_dir) if root_dir is not None else (path.parent if path is not None else Path.cwd())
    return _Bundler(schema, document, path, root).run()


class SharedDefs(dict[str, Any]):
    """The ``$defs`` of every schema of one document: each target copied once, shared by all.

    A schema whose ``$defs`` is a ``SharedDefs`` is already bundled; ``bundle`` hands it back
    as it is instead of copying the (large) closure once per use.
    """

    __slots__ = ("group",)
    group: Any
    """The validators compiled with these definitions (``_validate``), set on first use."""

    def __deepcopy__(self, memo: dict[int, Any]) -> SharedDefs:
        return self  # shared on purpose: copying a schema never copies the document's defs


class DocumentBundler:
    """Bundles many schemas of one document into one shared ``$defs`` (references resolved once).

    ``bundle(schema)`` returns a copy of ``schema``'s own nodes, with every ``$ref`` rewritten to
    ``#/$defs/NAME`` and ``$defs`` set to the document's ``SharedDefs``. A target is copied (and
    passed through ``transform``, e.g. OpenAPI's dialect) the first time any schema refers to it,
    never again: loading stays proportional to the document, not to how often schemas are used.
    """

    def __init__(
        self,
        document: Any,
        document_path: str | Path | None,
        transform: Callable[[Any], Any] | None = None,
        root_dir: str | Path | None = None,
        inspect: Callable[[Any], None] | None = None,
        revise: Callable[[Any, dict[str, Any]], None] | None = None,
    ) -> None:
        path = Path(document_path) if document_path is not None else None
        root = Path(root_dir) if root_dir is not None else (path.parent if path is not None else Path.cwd())
        self._bundler = _Bundler(document, document, path, root, shared=True)
        self._bundler.transform = transform
        self._bundler.inspect = inspect  # sees every node as written (with its location) once
        self._bundler.revise = revise  # may change a node's copy, once its children are copied

    @property
    def defs(self) -> SharedDefs:
        defs = self._bundler.defs
        assert isinstance(defs, SharedDefs)
        return defs

    def bundle(self, schema: Any, file: str | None = None, document: Any | None = None) -> dict[str, Any]:
        """``schema`` with its references pointing into the shared ``$defs`` (added when used)."""
        b = self._bundler
        top = b.copy(schema, file or b.file, document if document is not None else b.document, b.document, ())
        if not isinstance(top, dict):
            top = {}
        if b.transform is not None:
            top = b.transform(top)
        top["$defs"] = b.defs
        return top

    def node(self, schema: Any, file: str | None = None, document: Any | None = None) -> Any:
        """``schema``'s own nodes with references into the shared ``$defs`` (without ``$defs``)."""
        top = self.bundle(schema, file, document)
        top.pop("$defs", None)
        return top

    def follow(
        self, node: Any, loc: Location, file: str | None = None, document: Any | None = None
    ) -> tuple[Any, Location, str, Any]:
        """Follow a chain of ``$ref``s of a non-schema object (path item, parameter, response...).

        Returns the target, its location, the file it is in and that file's document, so that
        references inside the target resolve against where it was written.
        """
        return self._bundler.follow(node, loc, file, document)

    def file_of(self, file: str) -> Any:
        return self._bundler.document_of(file)

    def origin(self, name: str) -> Any:
        """The node as written (with its location) that shared definition ``name`` was copied from."""
        b = self._bundler
        for (file, fragment), given in b.names.items():
            if given == name:
                try:
                    return _pointer(b.document_of(file), fragment)
                except KeyError:
                    return None
        return None


def is_bundled(schema: Any) -> bool:
    """True for a schema made by ``DocumentBundler`` (its ``$defs`` is the shared one)."""
    return isinstance(schema, Mapping) and isinstance(schema.get("$defs"), SharedDefs)


def resolve_local(bundled: Mapping[str, Any], ref: str) -> Any:
    """The target of a local ``#/...`` pointer inside a bundled schema (``{}`` when missing)."""
    if not ref.startswith("#"):
        return {}
    try:
        return _pointer(bundled, ref[1:])
    except KeyError:
        return {}


def _pointer(doc: Any, pointer: str) -> Any:
    """Follow an RFC 6901 JSON pointer (percent-decoded); ``KeyError`` when it leads nowhere."""
    pointer = unquote(pointer)
    if pointer in ("", "/"):
        return doc
    if not pointer.startswith("/"):
        raise KeyError(pointer)
    current = doc
    for raw in pointer[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(current, Mapping):
            if part not in current:
                raise KeyError(part)
            current = current[part]
        elif isinstance(current, list):
            if not part.isdigit() or int(part) >= len(current):
                raise KeyError(part)
            current = current[int(part)]
        else:
            raise KeyError(part)
    return current


class _Bundler:
    def __init__(
        self, schema: Any, document: Any | None, path: Path | None, root: Path, shared: bool = False
    ) -> None:
        self.schema = schema
        self.document = document if document is not None else schema
        self.path = path
        self.root = root.resolve()
        self.file = str(path) if path is not None else "<schema>"
        self.defs: dict[str, Any] = SharedDefs() if shared else {}
        self.transform: Callable[[Any], Any] | None = None
        self.inspect: Callable[[Any], None] | None = None
        self.revise: Callable[[Any, dict[str, Any]], None] | None = None
        self.names: dict[tuple[str, str], str] = {}
        self.files: dict[Path, Any] = {}
        self.nodes = 0

    def run(self) -> dict[str, Any]:
        own_defs = self.schema.get("$defs") if isinstance(self.schema, Mapping) else None
        result = self.copy(self.schema, self.file, self.document, self.schema, ())
        if not isinstance(result, dict):
            result = {}
        if self.defs:
            merged = dict(result.get("$defs") or {}) if isinstance(own_defs, Mapping) else {}
            merged.update(self.defs)
            result["$defs"] = merged
        return result

    def where(self, node: Any) -> Location:
        loc = getattr(node, "loc", None)
        return loc if isinstance(loc, Location) else Location(self.file)

    def copy(self, node: Any, file: str, document: Any, schema_root: Any, chain: tuple[str, ...]) -> Any:
        self.nodes += 1
        if self.nodes > (MAX_SHARED_NODES if isinstance(self.defs, SharedDefs) else MAX_NODES):
            raise RefError(f"schema expands to more than {MAX_NODES} nodes", self.where(node))
        if isinstance(node, Mapping):
            if "$ref" in node and not isinstance(node["$ref"], str):
                raise RefError("$ref must be a string", self.where(node))
            if self.inspect is not None:
                self.inspect(node)
            out: dict[str, Any] = {}
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str):
                    out[key] = self.ref(value, node, file, document, schema_root, chain)
                elif (
                    key in _SCHEMA_MAPS and isinstance(value, Mapping) and isinstance(value.get("$ref"), str)
                ):
                    # a JSON Reference standing for a whole map of schemas (`properties: {$ref: f.yml#/x}`,
                    # as DigitalOcean writes it): bundlers replace it by its target, and so do we
                    target, _loc, tfile, tdoc = self.follow(value, self.where(value), file, document)
                    merged = {**(target if isinstance(target, Mapping) else {}), **value}
                    merged.pop("$ref")
                    out[str(key)] = {k: self.copy(v, tfile, tdoc, schema_root, ()) for k, v in merged.items()}
                else:
                    out[str(key)] = self.copy(value, file, document, schema_root, ())
            if self.revise is not None:
                self.revise(node, out)
            return out
        if isinstance(node, list):
            return [self.copy(item, file, document, schema_root, ()) for item in node]
        return node

    def ref(
        self, ref: str, node: Any, file: str, document: Any, schema_root: Any, chain: tuple[str, ...]
    ) -> str:
        where = self.where(node)
        target_file, _, fragment = ref.partition("#")
        if _SCHEME.match(target_file):
            raise RefError(f"$ref {ref!r}: references over the network are not followed", where)
        if target_file:
            document, file = self.load_file(target_file, file, where, ref)
            schema_root = document
        key = (file, fragment)
        if key in self.names and self.names[key] in chain:
            cycle = " -> ".join([*chain, self.names[key]])
            raise RefError(f"$ref cycle: {cycle}", where)
        if key in self.names:
            return f"#/$defs/{self.names[key]}"
        target, found_in = self.lookup(fragment, document, schema_root, ref, where)
        name = self.name_for(fragment or Path(file).stem)
        self.names[key] = name
        if len(self.defs) >= (MAX_SHARED_DEFS if isinstance(self.defs, SharedDefs) else MAX_DEFS):
            raise RefError(f"more than {MAX_DEFS} distinct $ref targets", where)
        self.defs[name] = {}
        if isinstance(target, Mapping) and set(target) == {"$ref"} and isinstance(target["$ref"], str):
            # a pure alias: follow it now so that alias-only cycles are caught and named
            inner = self.ref(target["$ref"], target, file, found_in, schema_root, (*chain, name))
            self.defs[name] = {"$ref": inner}
        else:
            copied = self.copy(target, file, found_in, schema_root, ())
            self.defs[name] = self.transform(copied) if self.transform is not None else copied
        return f"#/$defs/{name}"

    def lookup(
        self, fragment: str, document: Any, schema_root: Any, ref: str, where: Location
    ) -> tuple[Any, Any]:
        for candidate in (document, schema_root):
            try:
                return _pointer(candidate, fragment), candidate
            except KeyError:
                continue
        raise RefError(f"$ref {ref!r} points to nothing in the document", where)

    def load_file(self, target: str, file: str, where: Location, ref: str) -> tuple[Any, str]:
        from envfactory.contracts import _source

        if target.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", target) or target.startswith("\\"):
            raise RefError(
                f"$ref {ref!r}: absolute paths are not followed; use a path relative to the contract", where
            )
        base = Path(file).parent if file not in ("<schema>", "<string>") else self.root
        candidate = (base / unquote(target)).resolve()
        try:
            candidate.relative_to(self.root)
        except ValueError:
            raise RefError(f"$ref {ref!r} leaves the contract's folder {self.root}", where) from None
        if candidate not in self.files:
            if not candidate.is_file():
                raise RefError(f"$ref {ref!r}: no such file {candidate.name}", where)
            try:
                self.files[candidate] = _source.load_document(candidate)
            except InputError as err:
                raise RefError(f"$ref {ref!r}: {err.message}", err.location or where) from None
        return self.files[candidate], str(candidate)

    def document_of(self, file: str) -> Any:
        if file == self.file:
            return self.document
        return self.files.get(Path(file), self.document)

    def follow(
        self, node: Any, loc: Location, file: str | None, document: Any | None
    ) -> tuple[Any, Location, str, Any]:
        """Follow ``$ref`` chains of non-schema objects, into the document and files beside it."""
        file = file or self.file
        document = document if document is not None else self.document
        seen: set[tuple[str, str]] = set()
        while isinstance(node, Mapping) and "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str):
                raise RefError("$ref must be a string", loc)
            target_file, _, fragment = ref.partition("#")
            if _SCHEME.match(target_file):
                raise RefError(f"$ref {ref!r}: references over the network are not followed", loc)
            if target_file:
                document, file = self.load_file(target_file, file, loc, ref)
            if (file, fragment) in seen:
                raise RefError(f"$ref cycle through {ref!r}", loc)
            seen.add((file, fragment))
            try:
                node = _pointer(document, fragment)
            except KeyError:
                raise RefError(f"$ref {ref!r} points to nothing in {Path(file).name}", loc) from None
            found = getattr(node, "loc", None)
            loc = found if isinstance(found, Location) else Location(file)
        return node, loc, file, document

    def name_for(self, fragment: str) -> str:
        base = fragment.rstrip("/").rsplit("/", 1)[-1] or "root"
        base = _NAME_SAFE.sub("_", unquote(base).replace("~1", "_").replace("~0", "_")) or "def"
        name = base
        counter = 2
        while name in self.defs:
            name = f"{base}_{counter}"
            counter += 1
        return name
