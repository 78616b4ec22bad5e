"""AI review throughput and guard accuracy (issue 14).

What runs: the real ``Reviewer`` and ``JobRunner`` on a demo lab in the in-memory embedded store;
the model is the fake LLM server (real openai SDK on loopback) answering every request after
``--delay`` seconds (default 1 s, a realistic multimodal-model latency).

Printed (every ratio against numbers measured in this run):
- reviews per minute for one 64-qubit daily 1Q execution of the demo (every finished result of it)
  at the configured ``review.concurrency`` (or ``--concurrency``), beside the serial baseline
  (concurrency 1 on the first ``--baseline`` results) and the ideal ``concurrency × 60 / delay``;
- model requests (guard FAILs ask none) and tokens per review (input + output as the fake reports);
- the same execution under a daily token budget of ``--budget-reviews`` mean reviews: how many model
  reviews the ledger let through at that concurrency, how many it deferred, and the tokens used as a
  fraction of the budget (≤ 1 unless real requests exceeded their reservations);
- guard-only accuracy on the demo's known-bad results (the evaluation oracle's truth,
  ``qdash.evaluation.oracle.reviews``: failed fits, the TLS dip, the bad qubits' results), over every
  finished result of the chip: precision and recall of "FAIL or REVIEW" per kind, and false alarms on
  the results the generator made healthy.

    python bench/reviews.py [--days 8] [--delay 1.0] [--concurrency N] [--baseline 8] [--budget-reviews 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# tests.support (the test doubles the wheel does not ship) is importable from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qdash.copilot.assistant import Assistant
from qdash.db import open_database
from qdash.db.indexes import ensure_indexes
from qdash.demo import ChipPlan, DemoSpec, seed_demo
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.evaluation.oracle.reviews import known_bad
from qdash.evaluation.reviews.grades import grade
from qdash.evaluation.reviews.lab import ReviewLab
from qdash.repositories.scope import ProjectScope
from qdash.repositories.task_results import TASK_RESULTS
from qdash.review import REVIEWS, ReviewPolicy
from qdash.review.budget import BUDGETS
from qdash.review.jobs import JobRunner, Selection
from qdash.review.reviewer import Reviewer
from qdash.settings import DatabaseSettings, Settings, load_settings
from tests.support.settings import fake_model, settings_on_fake

PROJECT, CHIP, USER = "proj-demo", "64Qv3", "alice"
KEY_ENV = "QDASH_BENCH_FAKE_KEY"
VERDICT = json.dumps(
    {
        "decision": "PASS",
        "label": "CORRECT",
        "accepted_parameters": [],
        "questioned_parameters": [],
        "reason": "The fit follows the data; values within the usual range.",
        "closest_knowledge_case": "none",
        "suggested_labels": [],
        "recommended_action": "Use the values.",
        "note": "",
    }
)


def _settings(fake: FakeLLMServer, data_dir: Path, concurrency: int | None, **budget: Any) -> Settings:
    review = {"concurrency": concurrency, **budget} if concurrency else budget
    return settings_on_fake(
        data_dir,
        {"fake": fake_model(fake.openai_base_url, key_env=KEY_ENV)},
        analysis={"multimodal": False},
        review=review,
    )


def _daily_execution(db: Any) -> str:
    doc = db["execution_history"].find_one(
        {
            "project_id": PROJECT,
            "chip_id": CHIP,
            "name": "1Q-Calibration",
            "tags": {"$nin": ["full", "weekly"]},
        },
        sort=[("start_at", -1)],
    )
    return str(doc["execution_id"])


async def _job(
    settings: Settings, db: Any, selection: Selection, limit: int | None = None
) -> tuple[float, dict[str, Any]]:
    assistant = Assistant(db, settings)
    try:
        runner = JobRunner(Reviewer(assistant), PROJECT)
        job = runner.create(USER, selection, force=True)
        if limit is not None:
            db["copilot_review_job"].update_one(
                {"_id": job["job_id"]}, {"$set": {"task_ids": job["task_ids"][:limit]}}
            )
        started = time.perf_counter()
        final = await runner.run(job["job_id"])
        return time.perf_counter() - started, final
    finally:
        await assistant.aclose()


def _throughput(args: argparse.Namespace, db: Any, data_dir: Path) -> None:
    os.environ[KEY_ENV] = "sk-bench"
    with FakeLLMServer(response_delay_s=args.delay) as fake:
        fake.respond_with(lambda _request: VERDICT)
        settings = _settings(fake, data_dir, args.concurrency)
        selection = Selection(chip_id=CHIP, execution_id=_daily_execution(db))
        serial = _settings(fake, data_dir, 1)
        base_s, base = asyncio.run(_job(serial, db, selection, args.baseline))
        requests_before = len(fake.requests)
        wall_s, final = asyncio.run(_job(settings, db, selection))
        requests = len(fake.requests) - requests_before
    done = final["progress"]["done"]
    concurrency = settings.review.concurrency
    rate = done / wall_s * 60
    base_rate = base["progress"]["done"] / base_s * 60
    ideal = concurrency * 60 / args.delay
    reviews = list(
        db[REVIEWS].find({"project_id": PROJECT, "job_id": final["job_id"]}, {"usage": 1, "source": 1})
    )
    asked = [r for r in reviews if r.get("usage")]
    tokens = [
        int(r["usage"].get("input_tokens") or 0) + int(r["usage"].get("output_tokens") or 0) for r in asked
    ]
    print(
        f"daily 1Q execution {selection.execution_id}: {done} finished results, model delay {args.delay:g} s"
    )
    print(f"serial baseline (concurrency 1, {base['progress']['done']} results): {base_rate:.1f} reviews/min")
    print(
        f"concurrency {concurrency}: {rate:.1f} reviews/min in {wall_s:.1f} s "
        f"({rate / base_rate:.2f}x the serial baseline; ideal {ideal:.0f}/min, {rate / ideal:.2f} of it)"
    )
    print(
        f"model requests {requests} (guard FAILs ask none: {done - requests}); decisions {final['decisions']}"
    )
    if tokens:
        mean = sum(tokens) / len(tokens)
        print(f"tokens per model review: mean {mean:.0f}, max {max(tokens)}")
        _budgeted(args, db, data_dir, selection, round(mean * args.budget_reviews))


def _budgeted(args: argparse.Namespace, db: Any, data_dir: Path, selection: Selection, budget: int) -> None:
    """The same execution again (forced) under a daily token budget of ``budget`` tokens, on a fresh
    ledger (the unbudgeted run's usage was recorded on today's)."""
    db[BUDGETS].delete_many({"project_id": PROJECT})
    with FakeLLMServer(response_delay_s=args.delay) as fake:
        fake.respond_with(lambda _request: VERDICT)
        settings = _settings(fake, data_dir, args.concurrency, daily_token_budget=budget)
        _, final = asyncio.run(_job(settings, db, selection))
        requests = len(fake.requests)
    ledger = db[BUDGETS].find_one({"project_id": PROJECT}) or {}
    used, progress = int(ledger.get("used") or 0), final["progress"]
    print(
        f"budget {budget} tokens (~{args.budget_reviews} mean reviews), concurrency "
        f"{settings.review.concurrency}: {requests} model reviews, {progress['deferred']} deferred, "
        f"status {final['status']}; used {used} ({used / budget:.3f} of the budget)"
    )


def _accuracy(db: Any, report: Any) -> None:
    settings = load_settings(database={"mongo_uri": None})
    policy = ReviewPolicy.from_settings(settings)
    scope = ProjectScope(db, PROJECT)
    truth = known_bad(ReviewLab(db, report, settings, PROJECT, USER, CHIP).truths())
    runs = scope.iter_find(TASK_RESULTS, {"chip_id": CHIP, "status": {"$in": ["completed", "failed"]}})
    flagged: dict[str, bool] = {str(run["task_id"]): policy.guards(run).floor is not None for run in runs}
    grades = grade(flagged, truth)
    known = sum(total for _, total in grades.recall_by_kind.values())
    print(f"guard-only accuracy on {len(flagged)} finished results of {CHIP} ({known} known bad):")
    print(f"  FAIL/REVIEW precision {grades.precision:.3f}, recall {grades.recall:.3f}")
    for kind, (caught, total) in grades.recall_by_kind.items():
        print(f"  {kind}: recall {caught / total:.3f} ({caught}/{total})")
    alarms, healthy = grades.false_alarms, grades.healthy
    print(f"  false alarms on healthy results: {alarms}/{healthy} ({alarms / healthy:.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--days", type=int, default=8, help="history of the 64-qubit chip (accuracy set)")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds the fake model takes per request")
    parser.add_argument("--concurrency", type=int, default=None, help="default: review.concurrency")
    parser.add_argument("--baseline", type=int, default=8, help="results reviewed serially for the baseline")
    parser.add_argument(
        "--budget-reviews", type=int, default=40, help="daily token budget, in mean model reviews"
    )
    args = parser.parse_args()
    spec = DemoSpec(
        end_at=datetime.now(UTC).replace(minute=0, second=0, microsecond=0),
        chips=(ChipPlan(PROJECT, CHIP, "square-lattice-mux-64", USER, args.days, 45),),
        ai_reviews=False,
    )
    db = open_database(
        DatabaseSettings(name="bench_reviews", embedded_persist=False, embedded_warn_documents=10**9)
    )
    report = seed_demo(db, spec)
    ensure_indexes(db)
    _accuracy(db, report)
    with tempfile.TemporaryDirectory() as data_dir:
        _throughput(args, db, Path(data_dir))


if __name__ == "__main__":
    main()
