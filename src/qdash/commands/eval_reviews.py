"""``qdash eval --suite reviews``: seed a demo lab, review its finished results, grade, report.

The options are the chat eval's (``--mode``, ``--model``, ``--only``, ``--concurrency``,
``--max-cost-tokens``, ``--timeout``, ``--record``/``--replay``, ``--out``, ``--seed``, ``--list``)
plus ``--limit``; ``commands/eval.py`` parses them and hands them over here.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from qdash.evaluation.oracle.reviews import ResultTruth
from qdash.evaluation.reviews.grades import OnReview, ReviewResult, ReviewScore
from qdash.evaluation.reviews.lab import DEFAULT_CHIP, ReviewLab, choose, seed_lab
from qdash.evaluation.reviews.report import rich_table, write_reports
from qdash.evaluation.reviews.run import RunOptions
from qdash.settings import Settings


@dataclass
class SuiteArgs:
    mode: Literal["visible", "scripted", "live"]
    only: list[str]
    limit: int | None
    options: RunOptions
    replay: Path | None
    out: Path
    seed: int
    list_results: bool


def _run(
    lab: ReviewLab, chosen: list[ResultTruth], args: SuiteArgs, on_result: OnReview
) -> tuple[list[ReviewResult], dict[str, Any]]:
    from qdash.evaluation.reviews.live import run_live_reviews
    from qdash.evaluation.reviews.modes import run_replay_reviews, run_scripted_reviews
    from qdash.evaluation.reviews.visible import run_visible_reviews

    if args.replay is not None:
        run = asyncio.run(run_replay_reviews(lab, lab.truths(), args.replay, on_result))
        return run.results, {"replayed_from": str(args.replay), "model": run.model}
    if args.mode == "visible":
        return asyncio.run(run_visible_reviews(lab, chosen, on_result)), {}
    if args.mode == "scripted":
        run = asyncio.run(
            run_scripted_reviews(lab, chosen, concurrency=args.options.concurrency, on_result=on_result)
        )
    else:
        run = asyncio.run(run_live_reviews(lab, chosen, args.options, on_result))
    facts = {"model": run.model, "tokens": run.tokens, "skipped (token budget)": run.skipped}
    return run.results, facts


def run_review_suite(console: Console, settings: Settings, args: SuiteArgs) -> None:
    """Seed, choose, review, grade and report (the CLI's whole run)."""
    from qdash.demo import DemoSpec
    from qdash.evaluation.reviews.live import load_manifest

    chip, end = DEFAULT_CHIP, datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    seed, recorded = args.seed, 0
    if args.replay is not None:
        try:
            manifest = load_manifest(args.replay)
        except (FileNotFoundError, ValueError) as exc:
            raise typer.BadParameter(str(exc), param_hint="--replay") from None
        chip, end, seed = manifest.chip, datetime.fromisoformat(manifest.end_at), manifest.seed
        recorded = len(manifest.reviewed)
    with console.status("Seeding the demo lab and computing the ground truth..."):
        lab = seed_lab(settings, DemoSpec.small(seed=seed, end_at=end), chip)
        truths = list(lab.truths().values())
    if args.list_results:
        for truth in truths:
            console.print(
                f"{truth.task_id}  {truth.kind:10} {truth.name:36} {truth.qid:7} {truth.execution_id}"
            )
        return
    try:
        chosen = choose(truths, args.only, args.limit)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--only") from None
    label = "replay" if args.replay is not None else args.mode
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        task = progress.add_task(f"reviews, {label} mode", total=recorded or len(chosen))
        results, facts = _run(lab, chosen, args, lambda _result: progress.advance(task))
    title = f"reviews, {label} mode: {len(results)} results of {chip}, lab seed {seed}"
    console.print(rich_table(ReviewScore.of(results), title))
    meta = {"suite": "reviews", "mode": label, "chip": chip, "seed": seed, "end": end.isoformat()}
    md_path, json_path = write_reports(results, {**meta, "results": len(results), **facts}, args.out)
    console.print(f"reports: {md_path} {json_path}")
