"""What the command line shows a person and tells the shell: exit codes, terminal-safe text and
counted words. It imports nothing of envfactory, so the report writers and the CLI share it
without the report depending on the CLI."""

from __future__ import annotations

import unicodedata

EXIT_OK = 0
EXIT_FINDING = 1
EXIT_USAGE = 2
EXIT_UNDECIDED = 3
EXIT_INTERNAL = 70
"""A bug in envfactory (sysexits' EX_SOFTWARE): never 1, which a CI job would read as a finding."""

_HIDDEN = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))
"""Unicode categories a terminal must not get raw: control characters, format characters (the
bidirectional overrides such as U+202E, zero-width spaces and joiners, U+FEFF), line and
paragraph separators, lone surrogates."""


def safe_text(text: str) -> str:
    """Escape control, bidirectional and invisible format characters (``\\x1b``, ``\\u202e``), so
    that hostile names can neither drive the terminal nor reorder or hide what it shows."""
    if text.isprintable():  # the common case: nothing to escape (tabs make it False)
        return text
    return "".join(_escaped(c) if c != "\t" and unicodedata.category(c) in _HIDDEN else c for c in text)


def _escaped(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 step``, ``2 steps``, ``0 steps``; ``many`` where adding an s is wrong."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"
