"""Public re-export of the exception hierarchy (defined in the contracts layer, the lowest one).

``envfactory.errors`` is where users import the errors from; ``envfactory.contracts.errors``
defines them and keeps the one list of their names (code inside the package imports from there).
"""

from envfactory.contracts import errors as _defined
from envfactory.contracts.errors import *  # noqa: F403 - exactly the names of _defined.__all__

__all__ = _defined.__all__
