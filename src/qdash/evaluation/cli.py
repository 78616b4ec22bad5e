"""``qdash eval``: grade the copilot on the ground-truth question set (visible, scripted, live).

Every run seeds a fresh in-memory demo lab (the oracle needs the generator's record of its
stories), computes the truth, runs the chosen mode with a progress bar, prints a per-category table
and writes ``report.md`` + ``report.json``.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from qdash.evaluation.lab import EvalLab
from qdash.evaluation.questions import Question, load_questions, select
from qdash.evaluation.report import rich_table, write_reports
from qdash.evaluation.results import OnResult, QuestionResult
from qdash.settings import get_settings

Mode = Literal["visible", "scripted"]


def _run(mode: Mode, lab: EvalLab, questions: list[Question], on_result: OnResult) -> list[QuestionResult]:
    from qdash.evaluation.scripted import run_scripted
    from qdash.evaluation.visible import run_visible

    runner = run_visible if mode == "visible" else run_scripted
    return asyncio.run(runner(lab, questions, on_result))


def eval_command(
    mode: Annotated[
        Mode, typer.Option(help="visible: ideal plans, no model; scripted: full assistant.")
    ] = "visible",
    only: Annotated[list[str] | None, typer.Option(help="Question id or category (repeatable).")] = None,
    out: Annotated[Path, typer.Option(help="Directory for report.md and report.json.")] = Path("eval-report"),
    seed: Annotated[int, typer.Option(help="Seed of the demo lab the questions are asked about.")] = 7,
    list_questions: Annotated[bool, typer.Option("--list", help="List the questions and exit.")] = False,
) -> None:
    """Grade answers against ground truth computed from the demo lab's raw documents."""
    console = Console()
    questions = load_questions()
    if list_questions:
        for question in questions:
            console.print(f"{question.id:32} {question.category:22} {question.mode:8} {question.text}")
        return
    try:
        chosen = select(questions, only or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--only") from None
    end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    from qdash.demo import DemoSpec

    with console.status("Seeding the demo lab and computing the ground truth..."):
        lab = EvalLab.seed(get_settings(), DemoSpec.small(seed=seed, end_at=end))
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        task = progress.add_task(f"{mode} mode", total=len(chosen))
        results = _run(mode, lab, chosen, lambda result: progress.advance(task))
    console.print(rich_table(results, f"{mode} mode: {len(chosen)} questions, lab seed {seed}"))
    meta = {"mode": mode, "questions": len(chosen), "seed": seed, "end": end.isoformat()}
    md_path, json_path = write_reports(results, meta, out)
    console.print(f"reports: {md_path} {json_path}")
