"""``qdash db check [--project P] [--create-indexes]``: is this database ready for the copilot?

Read-only unless ``--create-indexes``; it opens the configured database directly (not through the
server's start-up, which would create indexes and copy sessions). Beside a ``qdash serve`` holding
the embedded store it stops and says what to do (``qdash.route``): the server's API has no check.
Exit status: 0 every document usable and no index missing (or no embedded store created yet: it
says so and creates nothing), 1 findings or a database it cannot open, 2 refused or bad input.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from qdash.db.check import DatabaseReport, GuestWriteRefusedError, check_database, create_indexes
from qdash.db.ownership import OWN_COLLECTIONS
from qdash.tables import FittingTable

db_app = typer.Typer(help="Inspect the configured database.", no_args_is_help=True)


@db_app.command("check")
def check(
    project: Annotated[
        str | None, typer.Option("--project", help="Only this project's documents (default: all).")
    ] = None,
    create: Annotated[
        bool,
        typer.Option(
            "--create-indexes",
            help="Create the copilot's missing indexes (on a lab's database: non-unique copilot_… only; "
            "never drops or changes one, never touches documents).",
        ),
    ] = False,
    width: Annotated[int | None, typer.Option(help="Output width (default: the terminal's).")] = None,
) -> None:
    """Per collection: documents the copilot can use, those it cannot (reason and fix), missing indexes."""
    from qdash.db import not_created, open_database
    from qdash.route import local_store
    from qdash.settings import get_settings

    console = Console(width=width, soft_wrap=False)
    full = get_settings()
    settings = full.database
    if (missing := not_created(settings)) is not None and not create:
        console.print(f"nothing to check: {missing}", soft_wrap=True, highlight=False)
        raise typer.Exit(0)
    why = "`qdash db check` reads the store in this process (the server's API has no such check)"
    with local_store(lambda: open_database(settings), why=why) as db:
        if create:
            try:
                built = create_indexes(db, settings.indexes)
            except GuestWriteRefusedError as exc:
                console.print(f"[red]refused:[/red] {exc}")
                raise typer.Exit(2) from None
            console.print(f"created {built} index(es)")
        report = check_database(db, project, settings.indexes, full.lab)
    render(report, console)
    raise typer.Exit(0 if report.clean else 1)


def render(report: DatabaseReport, console: Console) -> None:
    """The summary table, then each finding with its fix, then the missing indexes."""
    scope = f"project {report.project}" if report.project else "all projects"
    console.print(
        f"[bold]database[/bold] {report.database} ({report.mode}) · owner: {report.owner} · "
        f"database.indexes: {report.index_policy} · {scope}"
    )
    table = FittingTable("collection", "documents", "usable", "cannot use", "notes", "missing indexes")
    for c in report.collections:
        notes = sum(f.count for f in c.findings if not f.blocking)
        table.add_row(
            c.name,
            str(c.total),
            str(c.usable),
            f"[red]{c.unusable}[/red]" if c.unusable else "0",
            str(notes),
            f"[yellow]{len(c.missing_indexes)}[/yellow]" if c.missing_indexes else "0",
        )
    console.print(table)
    for c in report.collections:
        for f in c.findings:
            label = "[red]cannot use[/red]" if f.blocking else "note"
            console.print(f"{c.name}: {label} {f.count} — {f.reason}", highlight=False)
            if f.fix:
                console.print(f"    fix: {f.fix}", highlight=False, markup=False)
    missing = [(c.name, s) for c in report.collections for s in c.missing_indexes]
    if missing:
        guest = report.owner == "lab"
        how = "non-unique, named copilot_…" if guest else "as defined"
        console.print(
            f"missing indexes ({len(missing)}): `qdash db check --create-indexes` creates them ({how})",
            highlight=False,
            markup=False,
        )
        for name, state in missing:
            keys = ", ".join(f"{k} {'↓' if d < 0 else '↑'}" for k, d in state.spec.keys)
            unique = " unique" if state.spec.unique and (not guest or name in OWN_COLLECTIONS) else ""
            console.print(f"    {name}: {state.spec.name} ({keys}){unique}", highlight=False, markup=False)
    verdict = (
        "ready"
        if report.clean
        else f"{report.unusable} document(s) unusable, {report.missing_indexes} index(es) missing"
    )
    console.print(f"[bold]{verdict}[/bold]")
