"""Client lifecycle: fail closed, zygote restarts, module-level start/stop, run_sync misuse."""

from __future__ import annotations

import asyncio

import pytest

from qdash.sandbox import (
    SandboxPool,
    SandboxUnavailableError,
    get_sandbox,
    start_sandbox,
    stop_sandbox,
)
from qdash.sandbox.protocol import imports_heavy_modules
from qdash.settings import SandboxSettings


async def test_missing_required_layer_fails_closed() -> None:
    pool = SandboxPool(SandboxSettings(fs="none", require=["privdrop", "net", "fs"]))
    expected = r"^Sandbox unavailable: fs \(off: sandbox.fs is none\)"
    with pytest.raises(SandboxUnavailableError, match=expected):
        await pool.start()
    try:
        reply = await pool.run("result = {'output': 'ran'}")
        assert reply.output is None
        assert reply.error == "Sandbox unavailable: fs (off: sandbox.fs is none)"
    finally:
        await pool.stop()


async def test_zygote_is_replaced_every_restart_every_calls() -> None:
    pool = SandboxPool(SandboxSettings(restart_every=3, spares=1))
    await pool.start()
    try:
        first = pool.zygote_pid
        outputs = [(await pool.run(f"print({i})")).output for i in range(3)]
        assert outputs == ["0\n", "1\n", "2\n"]
        # The replacement starts in the background and is adopted by the first call after it is
        # ready; calls keep being answered by the old zygote meanwhile.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while pool.zygote_pid == first and loop.time() < deadline:
            assert (await pool.run("print('still')")).output == "still\n"
            await asyncio.sleep(0.3)
        assert pool.zygote_pid != first
        assert (await pool.run("print('new')")).output == "new\n"
    finally:
        await pool.stop()


async def test_module_lifecycle_and_run_sync_on_loop_refused() -> None:
    await stop_sandbox()  # an earlier test's real assistant may have started the process-wide pool
    with pytest.raises(SandboxUnavailableError, match="has not been started"):
        get_sandbox()
    pool = await start_sandbox(SandboxSettings(spares=1))
    try:
        assert get_sandbox() is pool
        assert (await pool.run("print(1 + 1)")).output == "2\n"
        with pytest.raises(RuntimeError, match="run_sync called on the event loop"):
            pool.run_sync("print(1)")
        reply = await asyncio.to_thread(pool.run_sync, "print(data['x'])", {"x": 5})
        assert reply.output == "5\n"
    finally:
        await stop_sandbox()
    with pytest.raises(SandboxUnavailableError):
        get_sandbox()


async def test_unserialisable_data_is_a_clear_error() -> None:
    pool = SandboxPool(SandboxSettings(spares=0))
    await pool.start()
    try:
        reply = await pool.run("print(1)", {"x": object()})
        assert reply.error is not None and reply.error.startswith("TypeError: data must be JSON-serialisable")
    finally:
        await pool.stop()


async def test_dead_zygote_is_respawned() -> None:
    import os
    import signal

    pool = SandboxPool(SandboxSettings(spares=1))
    await pool.start()
    try:
        first = pool.zygote_pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        await asyncio.sleep(0.5)
        reply = await pool.run("print('back')")
        assert reply.output == "back\n", reply.error
        assert pool.zygote_pid != first
    finally:
        await pool.stop()


async def test_concurrent_first_calls_share_one_zygote() -> None:
    settings = SandboxSettings(spares=1)
    try:
        pools = await asyncio.gather(*(start_sandbox(settings) for _ in range(3)))
        assert pools[0] is pools[1] is pools[2]
        replies = await asyncio.gather(*(p.run("print('x')") for p in pools))
        assert [r.output for r in replies] == ["x\n"] * 3
        assert pools[0]._conn is not None and pools[0]._conn.calls == 3
    finally:
        await stop_sandbox()


@pytest.mark.parametrize(
    ("code", "heavy"),
    [
        ("result = 1 + 1", False),
        ("import math, statistics\nfrom json import dumps", False),
        ("def f():\n    import numpy.linalg\n    return 1", True),
        ("from plotly.subplots import make_subplots", True),
        ("import math, pandas as pd", True),
        ("result = (", True),  # unparsable: the safe side
    ],
)
def test_imports_heavy_modules(code: str, heavy: bool) -> None:
    assert imports_heavy_modules(code) is heavy


async def test_one_shot_pool_locks_down_like_the_server_pool() -> None:
    """Same layers, limits and refusals; only spares, prefault and the heavy warm-up differ."""
    settings = SandboxSettings(spares=1)
    server = SandboxPool(settings)
    one_shot = SandboxPool(settings, one_shot_code="import os")
    assert one_shot.options.lockdown == server.options.lockdown
    options = one_shot.options
    assert (options.spares, options.prefault, options.full_warm_up) == (0, False, False)
    assert server.options.full_warm_up
    await one_shot.start()
    await server.start()
    try:
        assert one_shot.layers == server.layers
        for pool in (one_shot, server):
            reply = await pool.run("import os")
            assert reply.error is not None
            assert reply.error.startswith("ImportError: Import of 'os' is not allowed")
    finally:
        await one_shot.stop()
        await server.stop()
