"""What ``qdash review run / resume`` print and the exit code they end with, local or through a server.

Why one module: a job run in this process and one run by a ``qdash serve`` (followed over its SSE
events) must look the same to a user and to a script, so both paths print through these functions.

Exit codes: 0 every selected result reviewed (or skipped: reviewed before); 1 an error, or some
results failed (the model could not be reached; the next run retries them), or the job was
cancelled; 2 bad options; 3 the project's daily token budget ran out (``paused_budget``: the rest
is reviewed after the reset); 130 interrupted with Ctrl-C.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from qdash.review.decision import DECISIONS
from qdash.tables import FittingTable

if TYPE_CHECKING:
    from qdash.remote import Operator

EXIT_FAILED = 1
EXIT_PAUSED_BUDGET = 3
EXIT_INTERRUPTED = 130


def announce(console: Console, job: dict[str, Any]) -> None:
    """The first line of a run: the job id, so a crashed run can be resumed."""
    console.print(f"job {job['job_id']}: {job['total']} results, model {job['model']}", highlight=False)


@contextmanager
def progress_bar(console: Console) -> Iterator[Progress]:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as bar:
        yield bar


def summary(
    console: Console, decisions: dict[str, int], progress: dict[str, int], tokens: int, status: str
) -> None:
    console.print(f"AI review: {status}", highlight=False, soft_wrap=True)
    table = FittingTable("decision", "results")
    for name in [*DECISIONS, *sorted(set(decisions) - set(DECISIONS))]:
        if decisions.get(name):
            table.add_row(name, str(decisions[name]))
    console.print(table)
    counts = ", ".join(f"{key} {value}" for key, value in progress.items())
    console.print(f"{counts}; model tokens {tokens}", highlight=False)


def finish(console: Console, final: dict[str, Any], tokens: int) -> int:
    """Print the summary of a job that ended (its document or its SSE ``done`` frame); the exit code."""
    summary(console, final["decisions"], final["progress"], tokens, final["status"])
    if final.get("budget"):  # paused by the token budget: say until when and what to raise
        console.print(final["budget"]["message"], style="yellow", highlight=False, soft_wrap=True)
    if final["status"] == "paused_budget":
        return EXIT_PAUSED_BUDGET
    return EXIT_FAILED if final["progress"]["failed"] or final["status"] == "cancelled" else 0


def follow(operator: Operator, job: dict[str, Any], console: Console) -> int:
    """A job the server runs: the progress bar from its SSE ``progress`` frames, the summary from its
    ``done`` frame; Ctrl-C asks the server to cancel it. The exit code, as for a local run."""
    from qdash.remote import RemoteError

    job_id = job["job_id"]
    final: dict[str, Any] | None = None
    try:  # from the job's first line on: a Ctrl-C right after it cancels the job too
        announce(console, job)
        with progress_bar(console) as bar:
            task = bar.add_task("reviewing", total=job["total"])
            for event, data in operator.job_events(job_id):
                bar.update(task, completed=data["progress"]["done"])
                if event == "done":
                    final = data
                    break
    except KeyboardInterrupt:
        operator.cancel_review(job_id)
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
    # The model tokens of the job's reviews: what a local run counts as it goes.
    reviews = operator.reviews({"job_id": job_id}, latest_only=False, limit=100_000)
    return finish(console, final, sum(int(review.get("tokens") or 0) for review in reviews))
