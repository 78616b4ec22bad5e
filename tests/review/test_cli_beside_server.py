"""``qdash review`` while ``qdash serve`` holds the embedded store: through the server's review API.

A real server subprocess on a persisted review lab, its model the fake LLM server of this process
(every model review reports 1000 tokens); the CLI runs in subprocesses beside it. Selections are a
few qubits of one task of one execution, so each job takes seconds. ``proj-demo`` has a token budget
of 0 (its model reviews are deferred: ``paused_budget``); ``proj-other`` (bob) has none.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from qdash.commands.review_render import EXIT_INTERRUPTED, EXIT_PAUSED_BUDGET
from qdash.db import close_database, open_database
from qdash.evaluation.fake_llm import FakeLLMServer, Usage, turn
from qdash.review.jobs import FINISHED, JOBS
from tests.served import run_qdash, serve_process

from .conftest import verdict_json
from .killed_lab import lab_database, lab_env, seed_killed_lab

BOB = ("--user", "bob", "--project", "proj-other")
ALICE = ("--user", "alice", "--project", "proj-demo")
BOB_HEADERS = {"Authorization": "Bearer demo-token-bob", "X-Project-Id": "proj-other"}
TOKENS_PER_REVIEW = 1000
USAGE = Usage(input_tokens=TOKENS_PER_REVIEW - 100, output_tokens=100)
NO_BUDGET_FOR_DEMO = {"project_budgets": {"proj-demo": 0}}


def selection(task: str, qubits: int) -> tuple[str, ...]:
    """``qubits`` qubits of ``task`` in the lab's 2026-11-24 daily run (both projects have it)."""
    qids = [arg for qid in range(qubits) for arg in ("--qid", str(qid))]
    return ("--chip", "64Qv3", "--execution", "20261124-001", "--task", task, *qids)


@dataclass
class Beside:
    env: dict[str, str]
    port: int
    fake: FakeLLMServer

    def get(self, path: str, **params: Any) -> Any:
        answer = httpx.get(
            f"http://127.0.0.1:{self.port}{path}", params=params, headers=BOB_HEADERS, timeout=30
        )
        assert answer.status_code == 200, answer.text
        return answer.json()

    def answering(self, delay_s: float = 0.0) -> None:
        self.fake.respond_with(lambda _request: turn(verdict_json("PASS"), usage=USAGE, delay_s=delay_s))


@pytest.fixture(scope="module")
def beside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Beside]:
    root = tmp_path_factory.mktemp("review-beside")
    data_dir = root / "data"
    seed_killed_lab(data_dir)
    with FakeLLMServer() as fake:
        env = lab_env(root, data_dir, fake, **NO_BUDGET_FOR_DEMO)
        with serve_process(data_dir, env) as (port, _server):
            lab = Beside(env, port, fake)
            lab.answering()
            yield lab


def job_id_of(stdout: str) -> str:
    first = stdout.splitlines()[0]
    assert first.startswith("job "), stdout
    return first.split()[1].rstrip(":")


def test_review_run_beside_the_server_completes_and_prints_the_servers_counts(beside: Beside) -> None:
    asked = len(beside.fake.requests)
    result = run_qdash(beside.env, "review", "run", *selection("CheckT1", 4), *BOB)
    assert result.returncode == 0, result.stderr
    assert "held by qdash serve" in result.stderr and f"127.0.0.1:{beside.port}" in result.stderr
    job = beside.get(f"/copilot/reviews/jobs/{job_id_of(result.stdout)}")
    assert job["status"] == "completed" and job["total"] == 4 and job["progress"]["done"] == 4
    assert job["selection"]["execution_id"] == "20261124-001" and job["selection"]["qids"] == list("0123")
    out = result.stdout
    assert out.splitlines()[0] == f"job {job['job_id']}: 4 results, model gpt-5-mini"
    assert "AI review: completed" in out and "4/4" in out  # the progress bar ended full
    counts = ", ".join(f"{key} {value}" for key, value in job["progress"].items())
    model_reviews = len(beside.fake.requests) - asked
    assert f"{counts}; model tokens {TOKENS_PER_REVIEW * model_reviews}" in out
    assert sum(job["decisions"].values()) == 4
    for decision, count in job["decisions"].items():
        assert re.search(rf"\b{decision}\b\W+{count}\b", out), out

    listed = run_qdash(beside.env, "review", "list", "--job", job["job_id"], "--no-latest-only", *BOB)
    assert listed.returncode == 0, listed.stderr
    reviews = beside.get("/copilot/reviews", job_id=job["job_id"], latest_only=False)["reviews"]
    assert len(reviews) == 4 and all(review["task_id"][:8] in listed.stdout for review in reviews)

    by_model = next(review for review in reviews if review["source"] == "model")
    bundle_file = beside.env["QDASH_CONFIG_DIR"] + "/bundle.json"
    exported = run_qdash(beside.env, "review", "export", by_model["review_id"], "--out", bundle_file, *BOB)
    assert exported.returncode == 0, exported.stderr
    bundle = json.loads(Path(bundle_file).read_text(encoding="utf-8"))
    assert (
        bundle["review_id"] == by_model["review_id"] and bundle["verdict"]["decision"] == by_model["decision"]
    )


def test_errors_beside_the_server_show_its_detail(beside: Beside) -> None:
    result = run_qdash(beside.env, "review", "run", "--chip", "99Qx", *BOB)
    assert result.returncode == 1
    assert "error: Chip not found in project proj-other: 99Qx (its chips: 64Qv3)" in result.stderr
    missing = run_qdash(beside.env, "review", "resume", "no-such-job", *BOB)
    assert missing.returncode == 1
    assert "error: Review job not found in project proj-other: no-such-job" in missing.stderr
    for refused in (
        run_qdash(beside.env, "review", "run", "--chip", "64Qv3", "--dry-run", *BOB),
        run_qdash(beside.env, "review", "watch", "--chip", "64Qv3", "--once", *BOB),
    ):
        assert refused.returncode == 1 and "held by qdash serve" in refused.stderr
        assert "stop that server" in refused.stderr and "point both at MongoDB" in refused.stderr
        assert "Traceback" not in refused.stderr + result.stderr + missing.stderr


def test_a_budget_paused_job_beside_the_server_exits_3(beside: Beside) -> None:
    result = run_qdash(beside.env, "review", "run", *selection("CheckT1", 4), *ALICE)
    assert result.returncode == EXIT_PAUSED_BUDGET, result.stdout + result.stderr
    assert "AI review: paused_budget" in result.stdout and "review.project_budgets.proj-demo" in result.stdout


SLOW_REVIEW_S = 2.0
"""Each review's model answer takes this long, so Ctrl-C lands while reviews are in flight. At 0.5 s a
busy machine (load 8) let all eight finish before the test sent SIGINT: exit 0, not 130."""


def interrupted_run(
    env: dict[str, str], fake: FakeLLMServer, *args: str, wait_for_model: bool = True
) -> tuple[str, str]:
    """``qdash review run ARGS`` sent SIGINT once the model has its first request (or right after the
    job's first line): (job id, stdout)."""
    asked = len(fake.requests)
    run = [sys.executable, "-m", "qdash.cli", "review", "run", *args]
    # Ctrl-C as in a terminal: a test run started in the background of a non-interactive shell has
    # SIGINT ignored, which the command would inherit (never interrupted: exit 0, not 130). A signal
    # caught here is at its default in the child.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(run, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        assert proc.stdout is not None
        job_id = job_id_of(proc.stdout.readline())
        deadline = time.monotonic() + 60
        while wait_for_model and len(fake.requests) == asked and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err, err
    return job_id, " ".join(out.split())


@pytest.mark.parametrize(
    ("task", "wait_for_model"),
    [("CheckT2Echo", True), ("CheckRamsey", False)],
    ids=["reviewing", "right-after-the-job-line"],
)
def test_ctrl_c_cancels_the_job_in_the_server_and_resume_finishes_it(
    beside: Beside, task: str, wait_for_model: bool
) -> None:
    """Ctrl-C from the job's first line on cancels it. Right after that line it once escaped the
    command (exit 130, no message, the job left running): the line was printed before the handler."""
    beside.answering(delay_s=SLOW_REVIEW_S)
    job_id, out = interrupted_run(
        beside.env, beside.fake, *selection(task, 8), "--force", *BOB, wait_for_model=wait_for_model
    )  # --force: results an earlier test reviewed are reviewed again, none is skipped
    assert f"interrupted: the server cancels job {job_id} after the reviews in flight" in out, out
    deadline = time.monotonic() + 60
    while (job := beside.get(f"/copilot/reviews/jobs/{job_id}"))["status"] != "cancelled":
        assert time.monotonic() < deadline, f"the server did not cancel the job: {job}"
        time.sleep(0.2)
    assert job["progress"]["done"] < job["total"] == 8

    beside.answering()
    resumed = run_qdash(beside.env, "review", "resume", job_id, *BOB)
    assert resumed.returncode == 0, resumed.stderr
    assert "AI review: completed" in resumed.stdout
    job = beside.get(f"/copilot/reviews/jobs/{job_id}")
    assert job["status"] == "completed" and job["progress"]["done"] == 8 and job["resume_count"] == 1


def test_resume_of_a_job_the_server_is_running_shows_the_lease_holder(beside: Beside) -> None:
    # 16 reviews of 6 s, 2 at a time: the job runs ~48 s, longer than a CLI start on a loaded machine
    # (26 s measured at load 12; with 1 s reviews the job had completed before the resume request).
    beside.answering(delay_s=6.0)
    body = {"chip_id": "64Qv3", "execution_id": "20261124-001", "task_names": ["CheckRamsey"]}
    url = f"http://127.0.0.1:{beside.port}/copilot/reviews"
    started = httpx.post(url, json={**body, "qids": [str(q) for q in range(16)]}, headers=BOB_HEADERS)
    assert started.status_code == 202, started.text
    job_id = started.json()["job_id"]
    try:
        refused = run_qdash(beside.env, "review", "resume", job_id, "--take-over", *BOB)
        assert refused.returncode == 1
        assert "is running in" in refused.stderr and "--take-over is the server's to decide" in refused.stderr
    finally:
        httpx.post(f"{url}/jobs/{job_id}/cancel", headers=BOB_HEADERS, timeout=30)
        beside.answering()


@pytest.fixture(scope="module")
def alone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], FakeLLMServer]]:
    """The same lab and settings without a server: the CLI opens the store itself."""
    root = tmp_path_factory.mktemp("review-alone")
    seed_killed_lab(root / "data")
    with FakeLLMServer() as fake:
        yield lab_env(root, root / "data", fake, **NO_BUDGET_FOR_DEMO), fake


def test_a_budget_paused_job_exits_3_without_a_server(alone: tuple[dict[str, str], FakeLLMServer]) -> None:
    env, fake = alone
    result = run_qdash(env, "review", "run", *selection("CheckT1", 2), *ALICE)
    assert result.returncode == EXIT_PAUSED_BUDGET, result.stdout + result.stderr
    assert "held by qdash serve" not in result.stderr and "AI review: paused_budget" in result.stdout
    assert not fake.requests  # the budget is 0: no model request


@pytest.mark.parametrize(
    ("task", "wait_for_model"),
    [("CheckT2Echo", True), ("CheckRamsey", False)],
    ids=["reviewing", "right-after-the-job-line"],
)
def test_ctrl_c_stops_a_local_run_and_resume_finishes_it(
    alone: tuple[dict[str, str], FakeLLMServer], task: str, wait_for_model: bool
) -> None:
    env, fake = alone
    fake.respond_with(lambda _request: turn(verdict_json("PASS"), usage=USAGE, delay_s=SLOW_REVIEW_S))
    job_id, out = interrupted_run(
        env, fake, *selection(task, 8), "--force", *BOB, wait_for_model=wait_for_model
    )
    assert f"interrupted: job {job_id} stopped; `qdash review resume {job_id}` finishes it" in out, out
    fake.respond_with(lambda _request: turn(verdict_json("PASS"), usage=USAGE))
    resumed = run_qdash(env, "review", "resume", job_id, *BOB)  # the lease was released: no --take-over
    assert resumed.returncode == 0, resumed.stderr
    assert "AI review: completed" in resumed.stdout and "done 8" in resumed.stdout


def test_a_whole_chip_run_reviews_the_same_last_day_with_or_without_a_server(tmp_path: Path) -> None:
    """``review run --chip C`` with more results than one job may review takes the day up to the
    chip's newest result, said on stderr, whichever way the command goes: the same selection, the
    same total, the same note, in this process and through the server."""
    data_dir = tmp_path / "data"
    seed_killed_lab(data_dir)
    db = open_database(lab_database(data_dir))
    try:
        qids = ["0", "1", "2", "3"]
        query = {"project_id": "proj-demo", "chip_id": "64Qv3", "name": "CheckT2Echo", "qid": {"$in": qids}}
        finished = [doc for doc in db["task_result_history"].find(query) if doc["status"] in FINISHED]
    finally:
        close_database(db)
    since = max(doc["start_at"] for doc in finished) - timedelta(days=1)
    last_day = [doc for doc in finished if doc["start_at"] >= since]
    assert 0 < len(last_day) < len(finished)
    command = (
        "review",
        "run",
        "--chip",
        "64Qv3",
        "--task",
        "CheckT2Echo",
        *(f"--qid={q}" for q in qids),
        *ALICE,
    )
    with FakeLLMServer() as fake:
        fake.respond_with(lambda _request: turn(verdict_json("PASS"), usage=USAGE))
        env = lab_env(tmp_path, data_dir, fake, max_results_per_job=len(last_day))
        here = run_qdash(env, *command)
        assert here.returncode == 0, here.stderr
        db = open_database(lab_database(data_dir))
        try:
            (local_job,) = db[JOBS].find({"project_id": "proj-demo"})
        finally:
            close_database(db)
        with serve_process(data_dir, env) as (port, _server):
            there = run_qdash(env, *command)
            assert there.returncode == 0, there.stderr
            answer = httpx.get(
                f"http://127.0.0.1:{port}/copilot/reviews/jobs/{job_id_of(there.stdout)}",
                headers={"Authorization": "Bearer demo-token-alice", "X-Project-Id": "proj-demo"},
                timeout=30,
            )
    remote_job = answer.json()
    assert remote_job["total"] == local_job["total"] == len(last_day)
    selected = ("chip_id", "execution_id", "task_names", "qids", "statuses", "until")
    assert {key: remote_job["selection"][key] for key in selected} == {
        key: local_job["selection"][key] for key in selected
    }
    assert datetime.fromisoformat(remote_job["selection"]["since"]).replace(tzinfo=None) == since.replace(
        tzinfo=None
    )
    note = f"taking the day up to its newest result, --since {since:%Y-%m-%dT%H:%M:%S}"
    assert note in " ".join(here.stderr.split()) and note in " ".join(there.stderr.split())


def test_undo_beside_the_server_takes_a_job_back_once_for_editors(beside: Beside) -> None:
    beside.answering()
    ran = run_qdash(beside.env, "review", "run", *selection("ReadoutClassification", 2), *BOB)
    assert ran.returncode == 0, ran.stderr
    job_id = job_id_of(ran.stdout)
    refused = run_qdash(beside.env, "review", "undo", job_id, "--user", "carol", "--project", "proj-other")
    assert refused.returncode == 1
    assert (
        "error: Undoing a review job needs the editor role or above; carol is viewer in project proj-other."
        in refused.stderr
    )
    assert len(beside.get("/copilot/reviews", job_id=job_id, latest_only=False)["reviews"]) == 2

    undone = run_qdash(beside.env, "review", "undo", job_id, *BOB)
    assert undone.returncode == 0, undone.stderr
    assert "held by qdash serve" in undone.stderr
    assert (
        undone.stdout.strip()
        == f"review job {job_id} undone: 2 result(s) restored to what they held before it"
    )
    assert beside.get("/copilot/reviews", job_id=job_id, latest_only=False)["reviews"] == []
    assert beside.get(f"/copilot/reviews/jobs/{job_id}")["undo"]["by"] == "bob"

    again = run_qdash(beside.env, "review", "undo", job_id, "--json", *BOB)
    assert again.returncode == 0, again.stderr
    record = json.loads(again.stdout)
    assert (record["changed"], record["restored"], record["skipped"]) == (False, [], [])
    assert record["message"].startswith(f"review job {job_id} was already undone by bob at ")
    resumed = run_qdash(beside.env, "review", "resume", job_id, *BOB)
    assert resumed.returncode == 1 and f"error: review job {job_id} was undone by bob at " in resumed.stderr


def test_undo_without_a_server_leaves_a_result_changed_since_and_exits_1(
    alone: tuple[dict[str, str], FakeLLMServer],
) -> None:
    env, fake = alone
    fake.respond_with(lambda _request: turn(verdict_json("PASS"), usage=USAGE))
    ran = run_qdash(env, "review", "run", *selection("ReadoutClassification", 2), *BOB)
    assert ran.returncode == 0, ran.stderr
    job_id = job_id_of(ran.stdout)
    db = open_database(lab_database(Path(env["QDASH_CONFIG_DIR"]).parent / "data"))
    try:
        query = {"project_id": "proj-other", "execution_id": "20261124-001", "name": "ReadoutClassification"}
        edited = db["task_result_history"].find_one({**query, "qid": "1"})
        assert edited is not None and edited["ai_review"]["review_run_id"] == job_id
        by_hand = {"content": "looked at it myself", "updated_by": "bob", "updated_at": None}
        db["task_result_history"].update_one({"_id": edited["_id"]}, {"$set": {"ai_review_note": by_hand}})
    finally:
        close_database(db)

    undone = run_qdash(env, "review", "undo", job_id, *BOB)
    assert undone.returncode == 1, undone.stdout + undone.stderr
    assert "held by qdash serve" not in undone.stderr
    out = undone.stdout
    assert (
        f"review job {job_id} undone: 1 result(s) restored to what they held before it, 1 skipped "
        "(changed since the job wrote them; left as they are)" in out
    )
    [row] = [line for line in out.splitlines() if line.startswith(edited["task_id"][:8])]
    assert row.split()[1:3] == ["ReadoutClassification", "1"]
    assert "changed since the job wrote it, not by a review job" in row
    again = run_qdash(env, "review", "undo", job_id, *BOB)
    assert again.returncode == 0 and "was already undone by bob" in again.stdout
