"""The zygote's spares: prefaulted while the pool is idle, plain while calls run."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest

from qdash.sandbox import protocol as p
from qdash.sandbox.zygote import Worker, Zygote


@pytest.fixture
def zygote(monkeypatch: pytest.MonkeyPatch) -> Iterator[Zygote]:
    left, right = socket.socketpair()
    z = Zygote(left, p.WorkerOptions(spares=2, prefault=True))
    forks: list[bool] = []

    def fork_worker(warm: bool = False) -> Worker:  # records the decision instead of forking
        forks.append(warm)
        return Worker(pid=-1, req_fd=-1, res_fd=-1, call_dir="")

    monkeypatch.setattr(z, "fork_worker", fork_worker)
    z.forks = forks  # type: ignore[attr-defined]
    yield z
    os.rmdir(z.base_dir)
    left.close()
    right.close()


def test_an_idle_pool_prefaults_its_spares(zygote: Zygote) -> None:
    zygote.top_up()
    assert zygote.forks == [True, True]  # type: ignore[attr-defined]


def test_a_busy_pool_skips_the_prefault_steps(zygote: Zygote) -> None:
    zygote.running[1] = Worker(pid=-1, req_fd=-1, res_fd=-1, call_dir="")
    zygote.top_up()
    assert zygote.forks == [False, False]  # type: ignore[attr-defined]


def test_prefault_off_means_never(zygote: Zygote) -> None:
    zygote.options = p.WorkerOptions(spares=1, prefault=False)
    zygote.top_up()
    assert zygote.forks == [False]  # type: ignore[attr-defined]
