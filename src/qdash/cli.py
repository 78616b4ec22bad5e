"""The ``qdash`` command. Each group lives beside the code it drives; this file only assembles them."""

from __future__ import annotations

import typer

app = typer.Typer(help="QDash Copilot: chat with your calibration data.", no_args_is_help=True)


@app.command()
def version() -> None:
    """Print the version."""
    from qdash import __version__

    typer.echo(__version__)


if __name__ == "__main__":
    app()
