"""Optional dependencies: importing one that is missing is a usage error with the install hint
(exit 2), the same from every command, never an internal error.

Imports nothing from the project but its errors.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from envfactory.contracts.errors import UsageError

HINTS = {"ray": "pip install 'envfactory[ray]'"}


def require(module: str, feature: str) -> ModuleType:
    """``module``, imported; ``UsageError`` naming ``feature`` and the install command if it is
    not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        hint = HINTS.get(module, f"pip install {module}")
        raise UsageError(f"{feature} needs {module}, which is not installed: {hint}") from None


__all__ = ["require"]
