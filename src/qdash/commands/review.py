"""``qdash review``: run, resume and list AI reviews from the terminal.

``run`` freezes a selection into a job (printed first, so a crashed run can be resumed with
``qdash review resume JOB``), reviews it with a progress bar and prints a summary table. A selection
that names no execution or time window and holds more results than one job may review (a lab chip's
whole history does) becomes the day up to the chip's newest result, said on stderr: so ``--chip C``
alone works.
``--dry-run`` runs the guards only: no model, nothing written; it lists each result a guard flags.
``export`` writes a review's replay bundle; ``replay`` sends it to another model (or with another
system prompt) and compares. ``undo`` takes a job's verdicts back (``undo.py``).
While a ``qdash serve`` holds the embedded store, ``run``, ``resume``, ``list``, ``export`` and
``undo`` go through its API and print the same (``review_render.py``); ``--dry-run`` and ``watch`` say to
stop the server or use MongoDB. Which way a command goes is ``qdash.route``'s choice, not this module's.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from qdash.commands.review_render import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    announce,
    finish,
    follow,
    progress_bar,
    summary,
)
from qdash.review.store import ReviewStore
from qdash.route import Remote, StoreOpener, local_store, read_only, routed
from qdash.tables import FittingTable, print_records

if TYPE_CHECKING:
    from qdash.remote import Operator

review_app = typer.Typer(help="AI review of task results: guards plus one model verdict per result.")
USER = typer.Option(help="Whose view to use (a user in the database).")
PROJECT = typer.Option(help="Project id (default: the user's default).")
T = TypeVar("T")


def _lab() -> tuple[Any, StoreOpener]:
    """The settings, and how to open their store ready for reviews (indexes; the demo when empty)."""
    from qdash.bootstrap import prepare_database
    from qdash.settings import get_settings

    settings = get_settings()
    return settings, lambda: prepare_database(settings)


def _routed(
    user: str,
    project: str | None,
    remote: Callable[[Operator], T],
    here: Callable[[Any, Any], T],
    *,
    local_only: str | None = None,
) -> T:
    """What a command does through the server holding the store (``remote``, given the operator API)
    or with the store opened here (``here``, given the settings and the database): the route decides."""
    settings, open_lab = _lab()
    return routed(
        open_lab,
        partial(here, settings),
        lambda route: remote(route.operator(user, project)),
        local_only=local_only,
    )


def _scope(db: Any, user: str, project: str | None) -> Any:
    """The CLI user's scope in the store (``qdash ask``'s rules: membership checked)."""
    from qdash.commands.scope import resolve_scope

    return resolve_scope(db, user, project)


def _reviewer(settings: Any, db: Any, model: str | None) -> Any:
    from qdash.copilot.assistant import Assistant, UnknownModelError
    from qdash.review.reviewer import Reviewer

    assistant = Assistant(db, settings)
    try:
        reviewer = Reviewer(assistant, model=model)
    except UnknownModelError as exc:
        raise typer.BadParameter(str(exc)) from None
    return reviewer


@review_app.command()
def run(
    chip: Annotated[str, typer.Option(help="Chip id, e.g. 64Qv3.")],
    *,
    execution: Annotated[str | None, typer.Option(help="Only this execution id.")] = None,
    task: Annotated[list[str] | None, typer.Option(help="Only these task names (repeatable).")] = None,
    qid: Annotated[list[str] | None, typer.Option(help="Only these qubits/couplings (repeatable).")] = None,
    status: Annotated[
        list[str] | None, typer.Option(help="Result statuses (default completed, failed).")
    ] = None,
    since: Annotated[datetime | None, typer.Option(help="Results started at or after (ISO).")] = None,
    until: Annotated[datetime | None, typer.Option(help="Results started at or before (ISO).")] = None,
    model: Annotated[str | None, typer.Option(help="Configured model alias (default review.model).")] = None,
    force: Annotated[bool, typer.Option(help="Review again results already reviewed this way.")] = False,
    dry_run: Annotated[bool, typer.Option(help="Guards only: no model, nothing written.")] = False,
    user: Annotated[str, USER] = "alice",
    project: Annotated[str | None, PROJECT] = None,
) -> None:
    """Review a selection of one chip's results (a job; resumable after a crash)."""
    from pydantic import ValidationError

    from qdash.review.jobs import Selection

    try:
        selection = Selection(
            chip_id=chip,
            execution_id=execution,
            task_names=task or [],
            qids=qid or [],
            since=since,
            until=until,
            **({"statuses": status} if status else {}),
        )
    except ValidationError as exc:
        raise typer.BadParameter(str(exc.errors()[0]["msg"])) from None
    body = {
        **selection.model_dump(mode="json", exclude={"task_ids"}),
        "model": model,
        "force": force,
        "narrow_to_last_day": True,
    }
    code = _routed(
        user,
        project,
        lambda operator: _run_there(operator, body),
        lambda settings, db: _run_here(
            settings, db, selection, model=model, force=force, dry_run=dry_run, user=user, project=project
        ),
        local_only="--dry-run runs the guards in this process (the API has no dry run)" if dry_run else None,
    )
    raise typer.Exit(code)


def _run_there(operator: Operator, body: dict[str, Any]) -> int:
    job = operator.start_review(body)
    _say(job.get("note"))
    return follow(operator, job, Console())


def _say(note: str | None) -> None:
    """The selection's note (``jobs.last_day_when_too_large``), on stderr before the job's first line."""
    if note:
        typer.echo(note, err=True)


def _run_here(
    settings: Any,
    db: Any,
    selection: Any,
    *,
    model: str | None,
    force: bool,
    dry_run: bool,
    user: str,
    project: str | None,
) -> int:
    from qdash.repositories.chips import ChipNotFoundError, require_chip
    from qdash.review.jobs import JobRunner, SelectionTooLargeError, last_day_when_too_large

    console = Console()
    scope = _scope(db, user, project)
    reviewer = _reviewer(settings, db, model)
    runner = JobRunner(reviewer, scope.project_id)
    try:
        require_chip(runner.scope, selection.chip_id)
        limit = settings.review.max_results_per_job
        selection, note = last_day_when_too_large(runner.scope, selection, limit)
        _say(note)
        if dry_run:
            return asyncio.run(_dry_run(runner, selection, console))
        job = runner.create(scope.username, selection, force=force)
        return _interruptible(runner, job, console)
    except (SelectionTooLargeError, ChipNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        return EXIT_FAILED


@review_app.command()
def watch(
    chip: Annotated[str, typer.Option(help="Chip id, e.g. 64Qv3.")],
    *,
    task: Annotated[list[str] | None, typer.Option(help="Only these task names (repeatable).")] = None,
    interval: Annotated[float, typer.Option(min=1, help="Seconds between polls.")] = 60.0,
    lookback_hours: Annotated[float, typer.Option(min=0.01, help="Results started this recently.")] = 24.0,
    once: Annotated[bool, typer.Option(help="Poll once and exit.")] = False,
    model: Annotated[str | None, typer.Option(help="Configured model alias (default review.model).")] = None,
    user: Annotated[str, USER] = "alice",
    project: Annotated[str | None, PROJECT] = None,
) -> None:
    """Review every newly finished result of the chip (of the given tasks) as it arrives."""
    from qdash.review.jobs import JobRunner, Selection
    from qdash.review.watch import watch as poll

    console = Console()

    def report(job: dict[str, Any] | None) -> None:
        if job is None:
            console.print("no new results", style="dim")
        else:
            console.print(
                f"job {job['job_id']}: {job['progress']}, decisions {job['decisions']}", highlight=False
            )

    template = Selection(chip_id=chip, task_names=task or [])
    settings, open_lab = _lab()
    why = "`qdash review watch` polls the store and reviews in this process (the API has no such job)"
    with local_store(open_lab, why=why) as db:
        scope = _scope(db, user, project)
        runner = JobRunner(_reviewer(settings, db, model), scope.project_id)
        run = poll(
            runner,
            scope.username,
            template,
            interval_s=interval,
            lookback=timedelta(hours=lookback_hours),
            on_tick=report,
            on_paused=lambda message: console.print(message, style="yellow", highlight=False),
            ticks=1 if once else None,
        )
        try:
            asyncio.run(_closing(runner, run))
        except KeyboardInterrupt:
            console.print("stopped")


async def _closing(runner: Any, work: Any) -> None:
    try:
        await work
    finally:
        await runner.reviewer.assistant.aclose()


@review_app.command()
def resume(
    job: Annotated[str, typer.Argument(help="Job id printed by `qdash review run`.")],
    *,
    take_over: Annotated[
        bool, typer.Option(help="Take the job's lease even if it has not run out (its process is gone).")
    ] = False,
    user: Annotated[str, USER] = "alice",
    project: Annotated[str | None, PROJECT] = None,
) -> None:
    """Finish a job that was interrupted (its reviews so far are kept, none is done twice)."""

    def remote(operator: Operator) -> int:
        if take_over:  # the server takes a job over by itself once its lease runs out
            typer.echo(
                "(--take-over is the server's to decide: it resumes jobs whose lease ran out)", err=True
            )
        return follow(operator, operator.resume_review(job), Console())

    code = _routed(
        user,
        project,
        remote,
        lambda settings, db: _resume_here(settings, db, job, take_over=take_over, user=user, project=project),
    )
    raise typer.Exit(code)


def _resume_here(settings: Any, db: Any, job: str, *, take_over: bool, user: str, project: str | None) -> int:
    from qdash.repositories.scope import ProjectScope
    from qdash.review.jobs import JobRunner, load_job
    from qdash.review.lease import JobUndoneError, LeaseHeldError
    from qdash.review.store import ReviewNotFoundError

    scope = _scope(db, user, project)
    try:
        found = load_job(ProjectScope(db, scope.project_id), job)
    except ReviewNotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        return EXIT_FAILED
    runner = JobRunner(_reviewer(settings, db, found["model_alias"]), scope.project_id)
    try:
        return _interruptible(runner, found, Console(), take_over=take_over)
    except LeaseHeldError as exc:
        typer.echo(f"error: {exc} (--take-over)", err=True)
        return EXIT_FAILED
    except JobUndoneError as exc:
        typer.echo(f"error: {exc}", err=True)
        return EXIT_FAILED


@review_app.command()
def undo(
    job: Annotated[str, typer.Argument(help="Job id printed by `qdash review run`.")],
    *,
    as_json: Annotated[bool, typer.Option("--json", help="Print the undo's record as JSON.")] = False,
    user: Annotated[str, USER] = "alice",
    project: Annotated[str | None, PROJECT] = None,
) -> None:
    """Take a job's verdicts back: each result gets what it held before the job (editor role).

    Results changed since the job wrote them are left as they are and listed (exit 1)."""
    code = _routed(
        user,
        project,
        lambda operator: _undone(operator.undo_review(job), as_json),
        lambda _settings, db: _undo_here(db, job, user, project, as_json),
    )
    raise typer.Exit(code)


def _undo_here(db: Any, job: str, user: str, project: str | None, as_json: bool) -> int:
    from qdash.review.lease import LeaseHeldError
    from qdash.review.store import ReviewNotFoundError
    from qdash.review.undo import UndoRefusedError, undo_job

    scope = _scope(db, user, project)
    try:
        record = undo_job(db, scope.project_id, job, scope.username)
    except (UndoRefusedError, ReviewNotFoundError, LeaseHeldError) as exc:
        typer.echo(f"error: {exc}", err=True)
        return EXIT_FAILED
    return _undone(record, as_json)


def _undone(record: dict[str, Any], as_json: bool) -> int:
    """What ``undo`` prints (its message, then the results it left alone: task, qid, why) and its
    exit code: 1 when some results were skipped, else 0 (a second undo included: nothing changed)."""
    if as_json:
        typer.echo(json.dumps(record, indent=2, ensure_ascii=False, default=str))
    else:
        console = Console()
        console.print(record["message"], highlight=False, soft_wrap=True)
        if record["skipped"]:
            table = FittingTable("result", "task", "qid", "why it was left")
            for left in record["skipped"]:
                cells = (left["task_id"][:8], left["task_name"], left["qid"], left["reason"])
                table.add_row(*(Text(cell) for cell in cells))
            console.print(table)
    return EXIT_FAILED if record["skipped"] else 0


@review_app.command(name="list")
def list_reviews(
    *,
    chip: Annotated[str | None, typer.Option(help="Chip id.")] = None,
    task: Annotated[str | None, typer.Option(help="Task name.")] = None,
    decision: Annotated[str | None, typer.Option(help="PASS, PASS_WITH_NOTE, REVIEW or FAIL.")] = None,
    label: Annotated[str | None, typer.Option(help="Label, e.g. ANOMALY.")] = None,
    job: Annotated[str | None, typer.Option(help="Only this job's reviews.")] = None,
    latest_only: Annotated[bool, typer.Option(help="Newest review per task and qubit.")] = True,
    limit: Annotated[int, typer.Option(min=1, max=200)] = 50,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the reviews as JSON (with review_id, for export).")
    ] = False,
    user: Annotated[str, USER] = "alice",
    project: Annotated[str | None, PROJECT] = None,
) -> None:
    """List reviews, newest result first (what needs a human: --decision REVIEW / FAIL)."""
    wanted = {"chip_id": chip, "task_name": task, "decision": decision, "label": label, "job_id": job}
    filters = {key: value for key, value in wanted.items() if value}

    from qdash.settings import get_settings

    def here(db: Any) -> list[dict[str, Any]]:
        docs = ReviewStore(db, _scope(db, user, project).project_id).list(
            filters, latest_only=latest_only, limit=limit
        )
        return [{**doc, "reason": str(doc["verdict"].get("reason", ""))} for doc in docs]

    def there(route: Remote) -> list[dict[str, Any]]:
        return route.operator(user, project).reviews(filters, latest_only=latest_only, limit=limit)

    rows: list[dict[str, Any]] = read_only(get_settings(), here, there, [])
    fields = ("task_name", "qid", "decision", "label", "source")
    print_records(
        rows,
        ("result", "task", "qid", "decision", "label", "source", "reason"),
        lambda row: (row["task_id"][:8], *(row[key] or "" for key in fields), row["reason"][:70]),
        as_json=as_json,
        empty="No reviews.",
    )


@review_app.command()
def export(
    review_id: Annotated[
        str, typer.Argument(help="A review id (qdash review list --json, GET /copilot/reviews).")
    ],
    *,
    out: Annotated[Path, typer.Option(help="Bundle file to write.")] = Path("review-bundle.json"),
    user: Annotated[str, USER] = "alice",
    project: Annotated[str | None, PROJECT] = None,
) -> None:
    """Write a review's replay bundle: prompt, images, configuration, model identity, verdict."""
    from qdash.settings import get_settings

    settings = get_settings()
    bundle = read_only(
        settings,
        lambda db: _bundle_here(settings, db, review_id, user, project),
        lambda route: route.operator(user, project).bundle(review_id),
        None,
    )
    if bundle is None:
        typer.echo(f"error: no review {review_id} to export", err=True)
        raise typer.Exit(EXIT_FAILED)
    out.write_text(json.dumps(bundle, ensure_ascii=False, indent=1), encoding="utf-8")
    typer.echo(f"wrote {out} ({len(bundle['images'])} images)")


def _bundle_here(settings: Any, db: Any, review_id: str, user: str, project: str | None) -> dict[str, Any]:
    from qdash.copilot.assistant import Assistant
    from qdash.review.bundle import BundleError, export_bundle
    from qdash.review.store import ReviewNotFoundError

    assistant = Assistant(db, settings)
    try:
        return asyncio.run(export_bundle(assistant, _scope(db, user, project).project_id, review_id))
    except (BundleError, ReviewNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(EXIT_FAILED) from None


@review_app.command()
def replay(
    bundle_file: Annotated[Path, typer.Argument(help="A bundle written by `qdash review export`.")],
    *,
    model: Annotated[str | None, typer.Option(help="Configured model alias (default review.model).")] = None,
    instructions: Annotated[Path | None, typer.Option(help="A system prompt file to use instead.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print both sides as JSON.")] = False,
) -> None:
    """Re-run a bundle with another model or prompt and compare the verdicts (no database needed)."""
    from qdash.copilot.assistant import UnknownModelError
    from qdash.engine.providers.base import ModelError
    from qdash.review.bundle import BundleError, replay_bundle
    from qdash.settings import get_settings

    try:
        bundle = json.loads(bundle_file.read_text(encoding="utf-8"))
        prompt = instructions.read_text(encoding="utf-8") if instructions else None
        sides = asyncio.run(replay_bundle(get_settings(), bundle, model=model, instructions=prompt))
    except (OSError, ValueError, BundleError, UnknownModelError, ModelError) as exc:
        typer.echo(f"error: {getattr(exc, 'detail', None) or exc}", err=True)
        raise typer.Exit(EXIT_FAILED) from None
    if as_json:
        typer.echo(json.dumps(sides, ensure_ascii=False, indent=1))
        return
    table = FittingTable("", "model", "decision", "label", "source", "reason")
    for name, side in sides.items():
        table.add_row(
            name, side["model"], side["decision"], side["label"], side["source"], side["reason"][:80]
        )
    Console().print(table)


async def _run_job(runner: Any, job: dict[str, Any], console: Console, *, take_over: bool = False) -> int:
    tokens = 0
    try:
        with progress_bar(console) as bar:
            task = bar.add_task("reviewing", total=job["total"])

            def step(reviewed: Any, _update: dict[str, Any]) -> None:
                nonlocal tokens
                tokens += reviewed.tokens
                bar.advance(task)

            final = await runner.resume(job["job_id"], step, take_over=take_over)
    finally:
        await runner.reviewer.assistant.aclose()
    return finish(console, final, tokens)


def _interruptible(runner: Any, job: dict[str, Any], console: Console, *, take_over: bool = False) -> int:
    """:func:`_run_job` after the job's first line; Ctrl-C from that line on stops it here (its lease
    released) and says how to finish it. The event loop is made before the line: a Ctrl-C inside
    its construction leaves a half-made loop that prints a traceback at exit."""
    with asyncio.Runner() as loop:
        loop.get_loop()
        try:
            announce(console, job)
            return loop.run(_run_job(runner, job, console, take_over=take_over))
        except KeyboardInterrupt:
            job_id = job["job_id"]
            console.print(
                f"interrupted: job {job_id} stopped; `qdash review resume {job_id}` finishes it",
                highlight=False,
                soft_wrap=True,
            )
            return EXIT_INTERRUPTED


async def _dry_run(runner: Any, selection: Any, console: Console) -> int:
    """The guards on every selected result (no model, nothing written): the flagged ones listed with
    each guard and its reason, then the count per decision."""
    from qdash.review.jobs import select_task_ids

    ids = await asyncio.to_thread(
        select_task_ids, runner.scope, selection, runner.reviewer.settings.review.max_results_per_job
    )
    store = ReviewStore(runner.db, runner.project_id)
    decisions: Counter[str] = Counter()
    flagged = FittingTable("task", "qid", "decision", "guard", "reason")
    with progress_bar(console) as bar:
        task = bar.add_task("guards", total=len(ids))
        for task_id in ids:
            result = await asyncio.to_thread(store.task_result, task_id)
            report = runner.reviewer.policy.guards(result)
            decisions[report.floor or "no guard hit"] += 1
            for hit in report.hits:
                flagged.add_row(
                    str(result.get("name")), str(result.get("qid")), hit.decision, hit.code, hit.reason
                )
            bar.advance(task)
    if flagged.row_count:
        console.print(f"{flagged.row_count} guard hit(s) on {len(ids)} result(s):", highlight=False)
        console.print(flagged)
    summary(console, dict(decisions), {"done": len(ids)}, 0, "dry run (guards only, nothing written)")
    return 0
