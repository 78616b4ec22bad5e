"""``qdash review run --chip C --dry-run`` (the README's example) on a chip with more results than one
job may review: it takes the day up to the chip's newest result, says so, lists every guard hit
(task, qid, decision, guard, reason) in a table that fits 80 columns when piped, writes nothing."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from qdash.db import close_database, open_database
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.review import REVIEWS, ReviewPolicy
from qdash.settings import load_settings

from .killed_lab import lab_database, lab_env, seed_killed_lab


def test_dry_run_of_a_whole_chip_lists_the_guard_hits_of_its_last_day(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    seed_killed_lab(data_dir)
    db = open_database(lab_database(data_dir))
    try:
        results = list(db["task_result_history"].find({"project_id": "proj-demo", "chip_id": "64Qv3"}))
    finally:
        close_database(db)
    finished = [doc for doc in results if doc["status"] in ("completed", "failed")]
    since = max(doc["start_at"] for doc in finished) - timedelta(days=1)
    last_day = [doc for doc in finished if doc["start_at"] >= since]
    assert len(last_day) < len(finished)
    policy = ReviewPolicy.from_settings(load_settings())
    expected = [(doc["name"], doc["qid"], hit.code) for doc in last_day for hit in policy.guards(doc).hits]
    assert expected, "the lab's last day must have guard hits"

    with FakeLLMServer() as fake:
        env = {**lab_env(tmp_path, data_dir, fake, max_results_per_job=len(last_day)), "COLUMNS": "80"}
        run = [sys.executable, "-m", "qdash.cli", "review", "run", "--chip", "64Qv3", "--dry-run"]
        done = subprocess.run(
            run, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
        )
        assert not fake.requests
    assert done.returncode == 0, done.stderr
    assert f"has more than {len(last_day)} results to review" in done.stderr
    assert "taking the day up to its newest result, --since" in done.stderr
    out = done.stdout
    assert f"{len(expected)} guard hit(s) on {len(last_day)} result(s):" in out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    header = next(line for line in out.splitlines() if line.startswith("task "))
    assert header.split() == ["task", "qid", "decision", "guard", "reason"]
    decisions = {"PASS_WITH_NOTE", "REVIEW", "FAIL"}
    rows = [line.split() for line in out.splitlines() if line[:1].strip()]  # not a wrapped line
    rows = [row for row in rows if len(row) > 3 and row[2] in decisions]
    listed = sorted((qid, guard, task) for task, qid, _decision, guard, *_reason in rows)
    assert [(qid, guard) for qid, guard, _task in listed] == sorted(
        (qid, guard) for _name, qid, guard in expected
    )
    names = {name for name, _qid, _guard in expected}
    assert all(
        any(name.startswith(task) for name in names) for _qid, _guard, task in listed
    )  # long ones fold
    assert "dry run (guards only, nothing written)" in out
    db = open_database(lab_database(data_dir))
    try:
        assert db[REVIEWS].count_documents({}) == 0
    finally:
        close_database(db)
