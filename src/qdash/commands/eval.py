"""``qdash eval``: grade the copilot on the ground-truth question set (visible, scripted, live).

Every run seeds a fresh in-memory demo lab (the oracle needs the generator's record of its
stories), computes the truth, runs the chosen mode with a progress bar, prints a per-category table
and writes ``report.md`` + ``report.json``. ``live`` asks a configured model (``--model``) through
the full assistant; ``--record DIR`` keeps its responses and ``--replay DIR`` re-runs them offline.
"""

from __future__ import annotations

import asyncio
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column

from qdash.commands.feedback import Viewer
from qdash.evaluation.questions import DraftQuestionError, Question, load_questions, select
from qdash.evaluation.report import rich_table, write_reports
from qdash.evaluation.results import OnResult, QuestionResult
from qdash.settings import Settings, get_settings
from qdash.tables import FittingTable

if TYPE_CHECKING:
    from qdash.commands.eval_reviews import SuiteArgs
    from qdash.evaluation.lab import EvalLab
    from qdash.evaluation.live import LiveOptions

Mode = Literal["visible", "scripted", "live"]
Suite = Literal["questions", "reviews"]


def _run(
    mode: Mode,
    lab: EvalLab,
    *,
    questions: list[Question],
    options: LiveOptions,
    replay: Path | None,
    on_result: OnResult,
) -> tuple[list[QuestionResult], dict[str, Any]]:
    """Results and the run facts the report adds (skipped attempts, tokens)."""
    from qdash.evaluation.live import run_live
    from qdash.evaluation.replay import run_replay  # these two start the fake LLM server (testing)
    from qdash.evaluation.scripted import run_scripted
    from qdash.evaluation.visible import run_visible

    if replay is not None:
        return asyncio.run(run_replay(lab, questions, replay, on_result)), {"replayed_from": str(replay)}
    if mode == "live":
        run = asyncio.run(run_live(lab, questions, lab.settings, options, on_result))
        facts = {
            "model": options.model or lab.settings.copilot.default_model,
            "k": options.k,
            "tokens": run.tokens,
        }
        return run.results, {**facts, "skipped_attempts (token budget)": run.skipped}
    runner = run_visible if mode == "visible" else run_scripted
    return asyncio.run(runner(lab, questions, on_result)), {}


def _check_model(settings: Settings, model: str | None) -> None:
    if model is not None and model not in settings.copilot.models:
        known = ", ".join(sorted(settings.copilot.models))
        raise typer.BadParameter(f"unknown model {model!r}; configured models: {known}", param_hint="--model")


def _drafts_from_feedback(console: Console, directory: Path, viewer: str, project: str | None) -> None:
    """``--from-feedback``: the thumbs-down answers (``qdash feedback list``) as draft cases."""
    from qdash.commands.feedback import fetch
    from qdash.feedback.drafts import write_drafts

    written = write_drafts(fetch(viewer, project, None, None), directory)
    for path in written:
        console.print(f"wrote {path}", soft_wrap=True)
    console.print(f"{len(written)} draft case(s): fill in each TODO (the expected answer) before grading.")


def _reviews(console: Console, k: int, args: SuiteArgs) -> None:
    """The review suite on a scratch data directory (figures of the seeded lab)."""
    from qdash.commands.eval_reviews import run_review_suite

    if k != 1:
        raise typer.BadParameter(
            "--k applies to the question suite; a review is one request", param_hint="--k"
        )
    settings = get_settings()
    _check_model(settings, args.options.model)
    with tempfile.TemporaryDirectory(prefix="qdash-eval-reviews-") as scratch:
        database = settings.database.model_copy(update={"data_dir": Path(scratch)})
        run_review_suite(console, settings.model_copy(update={"database": database}), args)


def eval_command(  # noqa: PLR0917 - typer maps each parameter to one option
    suite: Annotated[
        Suite, typer.Option(help="questions: chat answers; reviews: AI reviews of task results.")
    ] = "questions",
    mode: Annotated[
        Mode, typer.Option(help="visible: ideal plans, no model; scripted: full assistant; live: your model.")
    ] = "visible",
    model: Annotated[str | None, typer.Option(help="live: configured model alias (default model).")] = None,
    k: Annotated[int, typer.Option("--k", min=1, max=20, help="live: attempts per question.")] = 1,
    only: Annotated[list[str] | None, typer.Option(help="Question id or category (repeatable).")] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=32, help="live: questions in parallel.")] = 2,
    max_cost_tokens: Annotated[
        int | None, typer.Option(min=1, help="live: stop starting attempts after this many tokens.")
    ] = None,
    timeout: Annotated[float, typer.Option(min=1, help="live: seconds per attempt.")] = 180.0,
    record: Annotated[Path | None, typer.Option(help="live: save the model's responses here.")] = None,
    replay: Annotated[Path | None, typer.Option(help="Re-run a --record directory offline.")] = None,
    out: Annotated[Path, typer.Option(help="Directory for report.md and report.json.")] = Path("eval-report"),
    seed: Annotated[int, typer.Option(help="Seed of the demo lab the questions are asked about.")] = 7,
    list_questions: Annotated[
        bool,
        typer.Option("--list", help="List the questions (reviews: the results and their truth) and exit."),
    ] = False,
    limit: Annotated[
        int | None, typer.Option(min=1, help="reviews: review this many results, every kind represented.")
    ] = None,
    from_feedback: Annotated[
        Path | None,
        typer.Option(help="Write a draft case per thumbs-down answer here (expected answer: TODO) and exit."),
    ] = None,
    project: Annotated[
        str | None, typer.Option(help="--from-feedback: project (default: the --as user's).")
    ] = None,
    viewer: Viewer = "alice",
) -> None:
    """Grade answers (or AI reviews) against ground truth computed from the demo lab's raw documents."""
    console = Console()
    if from_feedback is not None:
        _drafts_from_feedback(console, from_feedback, viewer, project)
        return
    if suite == "reviews":
        from qdash.commands.eval_reviews import SuiteArgs
        from qdash.evaluation.reviews.run import RunOptions

        run_options = RunOptions(model, concurrency, max_cost_tokens, timeout, record)
        _reviews(
            console, k, SuiteArgs(mode, only or [], limit, run_options, replay, out, seed, list_questions)
        )
        return
    try:
        questions = load_questions()
    except DraftQuestionError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if list_questions:
        # An id is what --only takes, so it and the category never fold (the question text does).
        listing = FittingTable(
            Column("id", no_wrap=True), Column("category", no_wrap=True), "mode", "question"
        )
        for question in questions:
            listing.add_row(question.id, question.category, question.mode, question.text)
        console.print(listing)
        return
    try:
        chosen = select(questions, only or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--only") from None
    if replay is not None and not replay.is_dir():
        raise typer.BadParameter(f"{replay} is not a directory of recordings", param_hint="--replay")
    settings = get_settings()
    _check_model(settings, model)
    scratch = tempfile.TemporaryDirectory(prefix="qdash-eval-")  # figures and uploads of the demo lab
    database = settings.database.model_copy(update={"data_dir": Path(scratch.name)})
    settings = settings.model_copy(update={"database": database})
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    from qdash.demo import DemoSpec
    from qdash.evaluation.lab import EvalLab  # the tools, the demo generator, the database: seconds

    with console.status("Seeding the demo lab and computing the ground truth..."):
        lab = EvalLab.seed(settings, DemoSpec.small(seed=seed, end_at=end))
    from qdash.evaluation.live import LiveOptions

    options = LiveOptions(model, concurrency, max_cost_tokens, timeout, record, k=k)
    label = "replay" if replay is not None else mode
    attempts = len(chosen) * (k if mode == "live" and replay is None else 1)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        task = progress.add_task(f"{label} mode", total=attempts)
        results, facts = _run(
            mode,
            lab,
            questions=chosen,
            options=options,
            replay=replay,
            on_result=lambda result: progress.advance(task),
        )
    console.print(rich_table(results, f"{label} mode: {len(chosen)} questions, lab seed {seed}"))
    meta = {"mode": label, "questions": len(chosen), "seed": seed, "end": end.isoformat(), **facts}
    md_path, json_path = write_reports(results, meta, out)
    scratch.cleanup()
    console.print(f"reports: {md_path} {json_path}")
