"""``qdash demo``: seed the demo lab into the configured database and print what a user needs.

Why a command and not only start-up seeding: ``qdash serve`` seeds an *empty* embedded store by
itself; this command also targets MongoDB (``QDASH_MONGO_URI``), reseeds with ``--reset``, and
builds the lab-scale data set for benchmarks.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from qdash.demo.generator import DemoDataExistsError, seed_demo
from qdash.demo.report import SeedReport
from qdash.demo.spec import DemoSpec
from qdash.tables import FittingTable

demo_app = typer.Typer(
    help="Demo lab data: a deterministic synthetic calibration history.", no_args_is_help=True
)


@demo_app.command("seed")
def seed(
    scale: Annotated[
        str, typer.Option(help="default (fast demo), lab (144 qubits × 365 days) or small")
    ] = "default",
    seed: Annotated[int, typer.Option(help="random seed; the same seed gives the same lab")] = 42,
    days: Annotated[
        int | None, typer.Option(min=1, help="days of history of the longest-running chip")
    ] = None,
    reset: Annotated[
        bool, typer.Option(help="delete the demo collections' documents first (indexes stay)")
    ] = False,
    if_empty: Annotated[
        bool,
        typer.Option(help="seed only an empty database; one with data is left as is (exit 0)"),
    ] = False,
) -> None:
    """Fill the configured database (settings.database) with the demo lab and print tokens."""
    from qdash.db import open_database
    from qdash.db.indexes import ensure_indexes
    from qdash.db.ownership import claim_if_empty
    from qdash.route import local_store
    from qdash.settings import get_settings

    console = Console()
    try:
        spec = DemoSpec.for_scale(scale, seed=seed)
        if days is not None:
            spec = spec.with_days(days)
    except ValueError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    settings = get_settings().database
    why = "seeding rewrites the store (an empty one needs none: `qdash serve` seeds the demo lab itself)"
    with local_store(lambda: open_database(settings), why=why) as db:
        try:
            if not claim_if_empty(db) and reset:
                console.print(
                    "[red]error:[/red] this database holds a lab's data and was not created by the copilot: "
                    "--reset would delete it. Seed the demo into an empty database instead (another "
                    "database.name, or unset QDASH_MONGO_URI for the embedded store)."
                )
                raise typer.Exit(2)
            # Indexed exactly as `qdash serve` leaves it: a store seeded here is queried at once.
            ensure_indexes(db, policy=settings.indexes)
            columns = (
                TextColumn("seeding {task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
            )
            with Progress(*columns, console=console, transient=True) as bar:
                task = bar.add_task(f"{spec.scale} lab (executions)", total=None)
                report = seed_demo(
                    db, spec, lambda done, total: bar.update(task, completed=done, total=total), reset=reset
                )
        except DemoDataExistsError as exc:
            if if_empty and not reset:  # docker compose's one-shot seed service on a later `up`
                console.print(f"nothing seeded: database '{db.name}' already holds data")
                return
            console.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(1) from None
    print_report(console, report)


def print_report(console: Console, report: SeedReport) -> None:
    """Counts per collection, the chips with their special qubits, and the demo users' tokens."""
    counts = FittingTable(
        title=f"Seeded {report.total_documents:,} documents in {report.elapsed_s:.1f} s "
        f"({report.documents_per_second:,.0f}/s), seed {report.seed}, ending {report.end_at}"
    )
    counts.add_column("collection")
    counts.add_column("documents", justify="right")
    for name, count in sorted(report.counts.items()):
        counts.add_row(name, f"{count:,}")
    console.print(counts)
    chips = FittingTable(title="Chips")
    for column in ("project", "chip", "topology", "days", "bad", "T1 degrading", "TLS (dates)"):
        chips.add_column(column)
    for chip in report.chips:
        tls = f"{chip.tls_qubit} ({chip.tls_days[0]}–{chip.tls_days[1]})"
        chips.add_row(
            chip.project_id,
            chip.chip_id,
            chip.topology_id,
            str(chip.days),
            ", ".join(chip.bad_qubits),
            chip.t1_degrading_qubit,
            tls,
        )
    console.print(chips)
    users = FittingTable(title="Demo users (Authorization: Bearer <token>; only the SHA-256 is stored)")
    for column in ("user", "token", "projects", "default project", "disabled"):
        users.add_column(column)
    for user in report.users:
        projects = ", ".join(f"{p} ({role})" for p, role in user.memberships.items())
        users.add_row(user.username, user.token, projects, user.default_project_id or "", str(user.disabled))
    console.print(users)
