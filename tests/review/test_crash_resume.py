"""Crash safety: ``kill -9`` a ``qdash review run`` mid-job, resume it: no review lost, none duplicated.

The CLI runs in a subprocess on a persisted embedded store; the model is the fake LLM server in this
process, answering slowly so the kill lands while reviews are in flight. The killed run's lease has
not run out when it is resumed at once, so the operator takes it over (``--take-over``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from qdash.evaluation.fake_llm import FakeLLMServer

from .conftest import verdict_json
from .killed_lab import lab_env, read_job, seed_killed_lab


def _qdash(*args: str) -> list[str]:
    return [sys.executable, "-m", "qdash.cli", *args]


def test_kill_9_during_a_bulk_job_then_resume(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    seed_killed_lab(data_dir)
    with FakeLLMServer(response_delay_s=0.2) as fake:
        fake.respond_with(lambda _request: verdict_json("PASS"))
        env = lab_env(tmp_path, data_dir, fake)
        scope = ("--user", "bob", "--project", "proj-other")
        # 24 of the chip's 64 CheckT1 results: enough for the kill to land mid-job, few to resume
        qubits = [arg for qid in range(24) for arg in ("--qid", str(qid))]
        run = _qdash("review", "run", "--chip", "64Qv3", "--task", "CheckT1", *qubits, *scope)
        proc = subprocess.Popen(
            run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True, cwd=tmp_path
        )
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("job "), first + proc.stderr.read() if proc.stderr else first
        job_id = first.split()[1].rstrip(":")
        deadline = time.monotonic() + 120
        while len(fake.requests) < 10 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        asked_before = len(fake.requests)

        job, before = read_job(data_dir, job_id)
        assert job["status"] == "running"
        assert 0 < len(before) < job["total"], "the kill must land mid-job"

        refused = subprocess.run(_qdash("review", "resume", job_id, *scope), env=env, cwd=tmp_path,
                                 capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        assert (
            refused.returncode == 1 and "is running in" in refused.stderr and "--take-over" in refused.stderr
        )
        resumed = subprocess.run(_qdash("review", "resume", job_id, "--take-over", *scope), env=env,
                                 cwd=tmp_path, capture_output=True, text=True, timeout=300,
                                 check=False)  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
        assert "AI review: completed" in resumed.stdout

    job, after = read_job(data_dir, job_id)
    task_ids = [doc["task_id"] for doc in after]
    assert sorted(task_ids) == sorted(job["task_ids"])  # every result reviewed, each exactly once
    assert job["status"] == "completed"
    assert job["progress"] == {
        "done": job["total"], "reviewed": job["total"] - len(before), "skipped": len(before), "failed": 0,
        "deferred": 0,
    }  # fmt: skip
    earlier = {doc["task_id"] for doc in before}
    assert {doc["_id"]: doc["created_at"] for doc in after if doc["task_id"] in earlier} == {
        doc["_id"]: doc["created_at"] for doc in before
    }  # the reviews made before the kill were kept, not redone
    needed_model = sum(doc["source"] != "guards" for doc in after if doc["task_id"] not in earlier)
    assert len(fake.requests) - asked_before == needed_model  # nothing asked twice after the resume

    only_fails = _qdash("review", "list", "--job", job_id, "--decision", "FAIL", "--no-latest-only", *scope)
    listed = subprocess.run(only_fails, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            check=False)  # fmt: skip
    fails = [doc for doc in after if doc["decision"] == "FAIL"]
    assert listed.returncode == 0, listed.stderr
    assert all(doc["task_id"][:8] in listed.stdout for doc in fails) and "PASS " not in listed.stdout
    as_json = subprocess.run([*only_fails, "--json"], env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=300, check=False)  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr
    assert {row["review_id"] for row in json.loads(as_json.stdout)} == {doc["_id"] for doc in fails}
    dry_run = _qdash("review", "run", "--chip", "64Qv3", "--dry-run", *scope)
    dry = subprocess.run(dry_run, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         check=False)  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert "dry run (guards only, nothing written)" in dry.stdout and "no guard hit" in dry.stdout
    assert len(read_job(data_dir, job_id)[1]) == len(after)
