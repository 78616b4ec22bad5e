"""A ``qdash serve`` killed mid-job: the next server takes the job over by itself and finishes it.

A real server subprocess on a persisted embedded store starts a bulk job over HTTP (the fake LLM
answers slowly) and is killed with ``kill -9`` while reviews are in flight. A new server on the same
data, with short leases, claims the job once the dead server's lease runs out and runs it to the
end; nobody calls resume. Every selected result ends with exactly one review, those made before the
kill are kept, and no result is sent to the model twice.
"""

from __future__ import annotations

import os
import signal
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from qdash.testing.fake_llm import FakeLLMServer
from tests.served import serve_process

from .conftest import verdict_json
from .killed_lab import lab_env, read_job, seed_killed_lab

BOB = {"Authorization": "Bearer demo-token-bob", "X-Project-Id": "proj-other"}
SHORT_LEASES = {"lease_s": 2.0, "lease_renew_s": 0.5, "resume_interval_s": 0.5}


def _wait_until(check: Any, what: str, timeout_s: float = 120) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _job(port: int, job_id: str) -> dict[str, Any]:
    answer = httpx.get(f"http://127.0.0.1:{port}/copilot/reviews/jobs/{job_id}", headers=BOB, timeout=30)
    assert answer.status_code == 200, answer.text
    job: dict[str, Any] = answer.json()
    return job


def _start_job(port: int) -> str:
    body = {"chip_id": "64Qv3", "task_names": ["CheckT1"]}
    started = httpx.post(f"http://127.0.0.1:{port}/copilot/reviews", json=body, headers=BOB, timeout=30)
    assert started.status_code == 202, started.text
    job_id: str = started.json()["job_id"]
    return job_id


def _finished_by_itself(port: int, job_id: str, pid: int, timeout_s: float) -> None:
    final = _wait_until(
        lambda: (found := _job(port, job_id))["status"] == "completed" and found,
        "the job to finish",
        timeout_s,
    )
    assert final["lease_owner"].split(":")[1] == str(pid)  # taken over by this server
    assert final["resume_count"] == 1 and final["resumed_at"] is not None


def test_a_killed_servers_job_is_finished_by_the_next_server_once(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    seed_killed_lab(data_dir)
    with FakeLLMServer(response_delay_s=0.3) as fake:
        fake.respond_with(lambda _request: verdict_json("PASS"))
        env = lab_env(tmp_path, data_dir, fake, **SHORT_LEASES)
        with serve_process(data_dir, env) as (port, first):
            job_id = _start_job(port)
            _wait_until(lambda: len(fake.requests) >= 6, "reviews in flight")
            assert _job(port, job_id)["lease_owner"].split(":")[1] == str(first.pid)
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=30)
        asked_before = len(fake.requests)
        job, before = read_job(data_dir, job_id)
        assert job["status"] == "running" and 0 < len(before) < job["total"], "the kill must land mid-job"

        with serve_process(data_dir, env) as (port, second):
            _finished_by_itself(port, job_id, second.pid, timeout_s=120)

    job, after = read_job(data_dir, job_id)
    assert sorted(doc["task_id"] for doc in after) == sorted(job["task_ids"])  # each once, none lost
    earlier = {doc["_id"]: doc["created_at"] for doc in before}
    assert {doc["_id"]: doc["created_at"] for doc in after if doc["_id"] in earlier} == earlier  # kept
    assert job["progress"]["done"] == job["total"] and job["progress"]["skipped"] == len(before)
    needed_model = sum(doc["source"] != "guards" for doc in after if doc["_id"] not in earlier)
    assert len(fake.requests) - asked_before == needed_model  # nothing asked twice after the restart


def test_a_server_stopping_cleanly_hands_its_job_over_without_waiting_for_the_lease(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    seed_killed_lab(data_dir)
    with FakeLLMServer(response_delay_s=0.3) as fake:
        fake.respond_with(lambda _request: verdict_json("PASS"))
        long_lease = {"lease_s": 600.0, "lease_renew_s": 200.0, "resume_interval_s": 0.5}
        env = lab_env(tmp_path, data_dir, fake, **long_lease)
        with serve_process(data_dir, env) as (port, first):
            job_id = _start_job(port)
            _wait_until(lambda: len(fake.requests) >= 4, "reviews in flight")
        assert first.returncode == 0  # SIGINT: a clean shutdown
        job, before = read_job(data_dir, job_id)
        assert job["status"] == "running" and len(before) < job["total"]
        assert job["lease_until"].replace(tzinfo=UTC) <= datetime.now(UTC)  # released, not 600 s ahead

        with serve_process(data_dir, env) as (port, second):
            _finished_by_itself(port, job_id, second.pid, timeout_s=120)
    job, after = read_job(data_dir, job_id)
    assert sorted(doc["task_id"] for doc in after) == sorted(job["task_ids"])
