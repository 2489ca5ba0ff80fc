"""``python -m envfactory.cli``: the same entry point as the ``envfactory`` command."""

from envfactory.cli import main

main()
