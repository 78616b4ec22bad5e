"""``qdash review`` through the running ``qdash serve`` that holds the embedded store.

Why: the embedded store belongs to one process (``db/lock.py``); instead of asking the user to stop
the server, the CLI starts and resumes jobs with the server's review API (``POST /copilot/reviews``,
``POST …/jobs/{id}/resume``), follows the job's SSE events and prints through ``render`` exactly
what a local run prints. The job runs in the server: Ctrl-C asks the server to cancel it
(``POST …/cancel``), and ``qdash review resume JOB`` continues it later.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from rich.console import Console

from qdash.db.server_record import RunningServer
from qdash.remote import Operator, RemoteError
from qdash.review.render import EXIT_INTERRUPTED, announce, finish, progress_bar

REVIEWS = "/copilot/reviews"
PAGE = 200


class ReviewServer(Operator):
    """The server's review API, as the CLI's user (and project)."""

    def job_events(self, job_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The job's SSE frames: ``progress`` whenever it changes, then one ``done``."""
        return self.events("GET", f"{REVIEWS}/jobs/{job_id}/events")

    def bundle(self, review_id: str) -> dict[str, Any]:
        """``GET /copilot/reviews/{id}/bundle``: the review's replay bundle."""
        bundle: dict[str, Any] = self.request_json("GET", f"{REVIEWS}/{quote(review_id, safe='')}/bundle")
        return bundle

    def reviews(self, filters: dict[str, Any], *, latest_only: bool, limit: int) -> list[dict[str, Any]]:
        """``GET /copilot/reviews``, page after page until ``limit`` reviews (or the last one)."""
        found: list[dict[str, Any]] = []
        while len(found) < limit:
            size = min(PAGE, limit - len(found))
            params = {**filters, "latest_only": latest_only, "limit": size, "offset": len(found)}
            page = self.request_json("GET", REVIEWS, params=params)["reviews"]
            found.extend(page)
            if len(page) < size:
                break
        return found


def say_where(console: Console, server: RunningServer) -> None:
    console.print(
        f"(the embedded store is held by qdash serve, PID {server.pid}: reviewing through {server.url})",
        style="dim",
        highlight=False,
    )


def start(remote: ReviewServer, body: dict[str, Any], console: Console) -> int:
    """Create the job in the server, follow it to its end; the exit code (``render``)."""
    return follow(remote, remote.request_json("POST", REVIEWS, body), console)


def resume(remote: ReviewServer, job_id: str, console: Console) -> int:
    """``POST …/jobs/{id}/resume`` (409 while a live process holds the job), then follow it."""
    return follow(remote, remote.request_json("POST", f"{REVIEWS}/jobs/{job_id}/resume"), console)


def follow(remote: ReviewServer, job: dict[str, Any], console: Console) -> int:
    """The job's progress bar from its SSE ``progress`` frames, the summary from its ``done`` frame."""
    job_id = job["job_id"]
    announce(console, job)
    final: dict[str, Any] | None = None
    try:
        with progress_bar(console) as bar:
            task = bar.add_task("reviewing", total=job["total"])
            for event, data in remote.job_events(job_id):
                bar.update(task, completed=data["progress"]["done"])
                if event == "done":
                    final = data
                    break
    except KeyboardInterrupt:
        remote.request_json("POST", f"{REVIEWS}/jobs/{job_id}/cancel")
        console.print(
            f"interrupted: the server cancels job {job_id} after the reviews in flight; "
            f"`qdash review resume {job_id}` finishes it later",
            highlight=False,
            soft_wrap=True,
        )
        return EXIT_INTERRUPTED
    if final is None:
        raise RemoteError(
            f"the server ended job {job_id}'s event stream early; see `qdash review list --job {job_id}`"
        )
    return finish(console, final, job_tokens(remote, job_id))


def job_tokens(remote: ReviewServer, job_id: str) -> int:
    """The model tokens of the job's reviews (what a local run counts as it goes)."""
    reviews = remote.reviews({"job_id": job_id}, latest_only=False, limit=100_000)
    return sum(int(review.get("tokens") or 0) for review in reviews)
