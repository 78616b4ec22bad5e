"""``qdash version``: the installed package's version."""

from __future__ import annotations

import typer


def version() -> None:
    """Print the version."""
    from qdash import __version__

    typer.echo(__version__)
