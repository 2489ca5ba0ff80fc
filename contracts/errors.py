"""The exception hierarchy: one root, precise subclasses, every message carrying its location.

Lives in the lowest layer so that every layer above raises the same types; ``envfactory.errors``
re-exports it. Imports nothing from the rest of the package.
"""

from __future__ import annotations

import attrs


@attrs.frozen(slots=True)
class Location:
    """Where something stands in a source file: 1-based line and column (0 when unknown)."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line and self.col:
            return f"{self.file}:{self.line}:{self.col}"
        if self.line:
            return f"{self.file}:{self.line}"
        return self.file

    def shifted(self, line_offset: int, col: int) -> Location:
        """A location inside this one: ``line_offset`` lines down, at column ``col``.

        Used to place an expression's own (line, col) inside the YAML scalar that holds it.
        """
        if line_offset == 0:
            return Location(self.file, self.line, self.col + col)
        return Location(self.file, self.line + line_offset, col + 1)


class EnvfactoryError(Exception):
    """Root of every error envfactory raises on purpose.

    ``str(err)`` is one line: ``file:line:col: message`` where the location is known.
    """

    def __init__(self, message: str, location: Location | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is not None:
            return f"{self.location}: {self.message}"
        return self.message


class InputError(EnvfactoryError):
    """A file that cannot be read as data: bad encoding, bad syntax, too large, too deep, unsafe."""


class ContractError(EnvfactoryError):
    """A contract that cannot be loaded: it breaks the contract schema, a reference, or a type rule."""


class RefError(ContractError):
    """A ``$ref`` that is dangling, cyclic, remote, absolute or points outside the contract's folder."""


class ExpressionError(ContractError):
    """An expression outside the language, or one that does not type-check."""


class TrajectoryError(EnvfactoryError):
    """A trajectory that cannot be read: malformed JSON, wrong shape, hostile values."""

    @classmethod
    def unreadable_file(cls, err: OSError, location: Location) -> TrajectoryError:
        """The error for a file the operating system would not open or read."""
        return cls(f"cannot read file: {err.strerror or err}", location)


class EvaluationError(EnvfactoryError):
    """A clause whose value is undefined in a concrete state: a missing key, null where a value
    is needed, division by zero. Reported as the failure of that clause, never a crash."""

    @classmethod
    def unset(cls, name: str) -> EvaluationError:
        """The error for a read of a state variable the state holds no value for (open world)."""
        return cls(f"state variable {name!r} has no value")


class UsageError(EnvfactoryError):
    """A command-line or API call with arguments that do not fit."""


class SolverError(EnvfactoryError):
    """A construct the Z3 encoder cannot express; the verdict becomes ``unknown`` with this reason."""


__all__ = [
    "ContractError",
    "EnvfactoryError",
    "EvaluationError",
    "ExpressionError",
    "InputError",
    "Location",
    "RefError",
    "SolverError",
    "TrajectoryError",
    "UsageError",
]
