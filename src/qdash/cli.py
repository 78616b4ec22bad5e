"""The ``qdash`` command. Each group lives in ``qdash.commands``; this file only assembles them.

Every command starts from validated settings: a configuration error prints its message (which names
the key and the fix) and exits with status 2, a database that cannot be opened exits with 1 — never
a traceback. A new command is a module in ``qdash.commands`` and one ``_LAZY`` line here.

A command's module is imported only when that command runs: the assistant, the openai SDK, the
tokenizer and the evaluation take seconds to import, and ``qdash --help`` or ``qdash sandbox run``
need none of them (``bench/cli_start.py``). So this file imports nothing heavy at module level.
"""

from __future__ import annotations

import gc
import importlib
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

EXIT_CONFIG = 2
EXIT_FAILED = 1

_LAZY: dict[str, tuple[str, str, str]] = {
    # command: (module, attribute: a Typer group or a command function, the line `qdash --help` shows)
    "ask": (
        "qdash.commands.ask",
        "ask",
        "Ask one question about the lab from the terminal (live progress, markdown answer).",
    ),
    "eval": (
        "qdash.commands.eval",
        "eval_command",
        "Grade answers (or AI reviews) against ground truth computed from the demo lab's raw documents.",
    ),
    "init": (
        "qdash.commands.init",
        "init",
        "Write an editable copilot.local.yaml with every key commented out (and its current value).",
    ),
    "sandbox": ("qdash.commands.sandbox", "app", "Run analysis code in the sandbox."),
    "tools": (
        "qdash.commands.tools",
        "tools_app",
        "List the calibration tools or call one as the model would.",
    ),
    "demo": (
        "qdash.commands.demo",
        "demo_app",
        "Demo lab data: a deterministic synthetic calibration history.",
    ),
    "review": (
        "qdash.commands.review",
        "review_app",
        "AI review of task results: guards plus one model verdict per result.",
    ),
    "db": ("qdash.commands.db", "db_app", "Inspect the configured database."),
    "feedback": ("qdash.commands.feedback", "feedback_app", "Answers rated thumbs-down in the dashboard."),
    "actions": (
        "qdash.commands.actions",
        "actions_app",
        "Lab actions the copilot proposed and a person approved (the audit).",
    ),
    "version": ("qdash.commands.version", "version", "Print the version."),
    "serve": ("qdash.commands.serve", "serve", "Run the API server (uvicorn) on the configured database."),
    "doctor": (
        "qdash.commands.doctor",
        "doctor",
        "Check configuration, database and model servers; exit 1 when a required check fails (FAIL).",
    ),
}


class _Commands(TyperGroup):
    """Loads a command's module when the command runs; ``--help`` lists them from ``_LAZY`` alone.

    It also turns the errors users cause (configuration, unreachable database) into a message and
    an exit code.
    """

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*_LAZY, *(name for name in super().list_commands(ctx) if name not in _LAZY)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands or cmd_name not in _LAZY:
            return super().get_command(ctx, cmd_name)
        if self._listing:  # the help line only: importing every command would cost seconds
            return TyperCommand(cmd_name, help=_LAZY[cmd_name][2])
        self.commands[cmd_name] = self._load(cmd_name)
        return self.commands[cmd_name]

    def _load(self, name: str) -> Any:
        """The click command of a ``_LAZY`` entry, built as ``add_typer``/``command`` on this app build
        it (so it inherits the app's markup mode)."""
        module, attribute, _ = _LAZY[name]
        target = getattr(importlib.import_module(module), attribute)
        holder = typer.Typer(rich_markup_mode=self.rich_markup_mode, add_completion=False)
        if isinstance(target, typer.Typer):
            holder.add_typer(target, name=name)
        else:
            holder.command(name=name)(target)
        return typer.main.get_group(holder).commands[name]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def invoke(self, ctx: Any) -> Any:  # typer vendors click privately; the type is its Context
        try:
            return super().invoke(ctx)
        except typer.Exit:
            raise
        except Exception as exc:
            # Imported here, not at the top: they load pydantic and the database drivers.
            from qdash.db import DatabaseUnavailableError
            from qdash.settings import ConfigError

            if isinstance(exc, ConfigError):
                typer.echo(str(exc), err=True)
                raise typer.Exit(EXIT_CONFIG) from None
            if isinstance(exc, DatabaseUnavailableError):
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(EXIT_FAILED) from None
            raise


app = typer.Typer(
    cls=_Commands,
    help="QDash Copilot: chat with your calibration data.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    # Plain click errors: Rich would box and wrap a message at the terminal's width, splitting a path
    # or a model name a user copies (and a test reads) across lines.
    rich_markup_mode=None,
)


@app.callback()
def _validate_config(
    ctx: typer.Context,
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Log INFO lines too (on stderr); `serve` always logs at logging.level."
    ),
) -> None:
    """Load the configuration before any command, so a bad key stops here with exit status 2.

    Logging is set up here too: log lines go to stderr, so a command's stdout stays its output. A
    command other than ``serve`` logs warnings and errors only unless ``-v``: INFO lines (the store
    opened, the lab seeded) in front of a table or an answer are noise to its reader.
    ``init`` is exempt: it is how a missing or broken configuration directory gets its file.
    """
    if ctx.invoked_subcommand == "init":
        return
    from qdash.logging import command_level, command_logging, configure_logging
    from qdash.settings import get_settings

    settings = get_settings()
    level, json_output = settings.logging.level, settings.logging.json_output
    if ctx.invoked_subcommand == "serve":
        configure_logging(level, json_output)
    else:
        ctx.with_resource(command_logging(command_level(level, verbose), json_output))


def main() -> None:
    """The ``qdash`` console script: the app, then an exit that skips the garbage collector.

    Once a command is done the process only exits, yet the interpreter's shutdown runs full garbage
    collections over every object the imports made (typer, pydantic, structlog with rich): a quarter
    of ``qdash sandbox run``'s CPU (``bench/cli_start.py``). Frozen objects are left to the operating
    system; files, the logging handlers and atexit hooks still close and flush as before. Tests call
    ``app`` in-process and keep their collector.
    """
    try:
        app()
    finally:
        gc.freeze()


if __name__ == "__main__":
    main()
