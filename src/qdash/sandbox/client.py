"""API-side client: spawns the zygote, sends calls over asyncio streams, applies the backstops.

Why asyncio streams and no threads: the API's event loop must never block on the sandbox; every
wait here is an ``await`` (bounded by ``sandbox.max_concurrency``), and the only process work
(spawning the zygote) goes through ``asyncio.create_subprocess_exec``. The zygote is spawned,
never forked from the API, with an explicit minimal environment, so no secret of the API
process can reach it or its workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import socket
import sys
from dataclasses import dataclass
from typing import Any

from qdash.logging import get_logger
from qdash.sandbox import protocol as p
from qdash.sandbox.lockdown import LockdownConfig, default_read_only_paths
from qdash.settings import SandboxSettings

_log = get_logger("qdash.sandbox")

ZYGOTE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    # pandas imports pyarrow, whose jemalloc would start a background thread: the zygote must
    # stay single-threaded to fork safely.
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
    "ARROW_DEFAULT_MEMORY_POOL": "system",
}
"""The zygote's whole environment: nothing inherited from the API."""

START_TIMEOUT_S = 60.0
BACKSTOP_GRACE_S = 3.0
_PR_SET_DUMPABLE = 4


class SandboxUnavailableError(RuntimeError):
    """The sandbox cannot run code; ``str()`` is ``Sandbox unavailable: <reason>``."""


@dataclass(frozen=True)
class SandboxResult:
    """One call's outcome: exactly what crossed the pipe, parsed as JSON, nothing executed."""

    output: str | None
    chart: Any
    error: str | None
    ms: float
    state: Any = None
    has_state: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """``{output, error, chart}`` (+ ``state`` when the code set it), JSON-ready."""
        out: dict[str, Any] = {"output": self.output, "error": self.error, "chart": self.chart}
        if self.has_state:
            out["state"] = self.state
        return out


def options_from_settings(
    settings: SandboxSettings, plain_exec: bool = False, one_shot_code: str | None = None
) -> p.WorkerOptions:
    """Translate ``sandbox.*`` settings into what the zygote and its workers are told.

    ``one_shot_code``: the pool will run only this code (``qdash sandbox run``). Spares, their
    prefault steps and the heavy warm-up exist to make a long-lived pool's next calls fast; a
    one-shot pool skips them (the heavy warm-up when the code imports none of numpy, pandas and
    plotly) and its one worker locks down exactly as any other.
    """
    one_shot = one_shot_code is not None
    return p.WorkerOptions(
        lockdown=LockdownConfig(
            uid=settings.uid,
            cpu_s=settings.cpu_s,
            memory_mib=settings.memory_mib,
            require=tuple(settings.require),
            seccomp=settings.seccomp,
            fs=settings.fs,
            read_only_paths=default_read_only_paths(),
        ),
        wall_s=settings.wall_s,
        output_chars=settings.output_chars,
        result_bytes=settings.result_bytes,
        spares=0 if one_shot else settings.spares,
        prefault=settings.prefault and not one_shot,
        plain_exec=plain_exec,
        full_warm_up=one_shot_code is None or p.imports_heavy_modules(one_shot_code),
    )


class _ZygoteConnection:
    """One running zygote and the calls in flight on it."""

    def __init__(
        self,
        proc: asyncio.subprocess.Process,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        hello: dict[str, Any],
    ) -> None:
        self.proc = proc
        self.reader = reader
        self.writer = writer
        self.hello = hello
        self.pending: dict[int, asyncio.Future[tuple[int, bytes]]] = {}
        self.calls = 0
        self.closed = False
        self.retiring = False
        self.task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def spawn(cls, options: p.WorkerOptions) -> _ZygoteConnection:
        parent, child = socket.socketpair()
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                "-m",
                "qdash.sandbox.zygote",
                options.to_json(),
                str(child.fileno()),
                pass_fds=(child.fileno(),),
                env=dict(ZYGOTE_ENV),
                cwd="/",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            child.close()
        reader, writer = await asyncio.open_unix_connection(sock=parent, limit=p.MAX_FRAME)
        try:
            kind, _, payload = await asyncio.wait_for(_read_frame(reader), START_TIMEOUT_S)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError) as exc:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            writer.close()
            raise SandboxUnavailableError(
                f"{p.UNAVAILABLE}the zygote did not start ({type(exc).__name__})"
            ) from None
        hello = json.loads(payload) if kind == p.KIND_HELLO else {"ready": False, "reason": "bad hello"}
        return cls(proc, reader, writer, hello)

    async def _read_loop(self) -> None:
        try:
            while True:
                kind, call_id, payload = await _read_frame(self.reader)
                future = self.pending.pop(call_id, None)
                if future is not None and not future.done():
                    future.set_result((kind, payload))
                if self.retiring and not self.pending:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            self.closed = True
            crash = p.error_payload(f"{p.CRASHED} (the sandbox process exited)")
            for future in self.pending.values():
                if not future.done():
                    future.set_result((p.KIND_ERROR, crash))
            self.pending.clear()
            await self._terminate()

    async def call(self, call_id: int, request: bytes) -> tuple[int, bytes]:
        future: asyncio.Future[tuple[int, bytes]] = asyncio.get_running_loop().create_future()
        self.pending[call_id] = future
        self.calls += 1
        self.writer.write(p.encode(p.KIND_RUN, call_id, request))
        await self.writer.drain()
        return await future

    def cancel(self, call_id: int) -> None:
        self.pending.pop(call_id, None)
        if not self.closed:
            with contextlib.suppress(Exception):
                self.writer.write(p.encode(p.KIND_CANCEL, call_id))

    def retire(self) -> None:
        """Stop after the calls in flight have been answered."""
        self.retiring = True
        if not self.pending:
            self.task.cancel()

    async def _terminate(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 5.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def _read_frame(reader: asyncio.StreamReader) -> tuple[int, int, bytes]:
    head = await reader.readexactly(p.HEADER.size)
    length, kind, call_id = p.HEADER.unpack(head)
    payload = await reader.readexactly(length - (p.HEADER.size - 4))
    return kind, call_id, payload


class SandboxPool:
    """The public entry point: ``await pool.run(code, data)`` → :class:`SandboxResult`."""

    def __init__(
        self,
        settings: SandboxSettings,
        *,
        one_shot_code: str | None = None,
        _plain_exec_for_tests: bool = False,
    ) -> None:
        """``one_shot_code``: a pool that will run only this code (see :func:`options_from_settings`)."""
        self.settings = settings
        self.options = options_from_settings(settings, _plain_exec_for_tests, one_shot_code)
        self._conn: _ZygoteConnection | None = None
        self._next: asyncio.Task[_ZygoteConnection] | None = None
        self._lock = asyncio.Lock()
        self._sem = asyncio.Semaphore(settings.max_concurrency)
        self._ids = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self.unavailable_reason: str | None = None
        self.layers: dict[str, str] = {}

    @property
    def available(self) -> bool:
        return self._conn is not None and self.unavailable_reason is None

    @property
    def zygote_pid(self) -> int | None:
        return self._conn.proc.pid if self._conn else None

    async def start(self) -> None:
        """Spawn the zygote; raise :class:`SandboxUnavailableError` if workers cannot lock down."""
        self._loop = asyncio.get_running_loop()
        _make_self_undumpable()
        async with self._lock:  # a call racing the start waits here instead of spawning its own
            if self._conn is None:
                await self._replace_connection()
        assert self._conn is not None
        hello = self._conn.hello
        if self.unavailable_reason is not None:
            _log.warning("sandbox unavailable", reason=self.unavailable_reason, layers=self.layers)
            raise SandboxUnavailableError(p.UNAVAILABLE + self.unavailable_reason)
        _log.info(
            "sandbox started",
            layers=self.layers,
            zygote_pid=hello.get("pid"),
            warmup_ms=hello.get("warmup_ms"),
            spares=self.settings.spares,
        )

    async def stop(self) -> None:
        """Close the zygote (it kills its workers and removes its directories)."""
        if self._next is not None:
            self._next.cancel()
            with contextlib.suppress(BaseException):
                (await self._next).retire()
            self._next = None
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def _replace_connection(self) -> None:
        conn = await _ZygoteConnection.spawn(self.options)
        self._adopt(conn)

    def _adopt(self, conn: _ZygoteConnection) -> None:
        old, self._conn = self._conn, conn
        self.layers = dict(conn.hello.get("layers") or {})
        self.unavailable_reason = None if conn.hello.get("ready") else str(conn.hello.get("reason"))
        if old is not None:
            old.retire()

    async def _connection(self) -> _ZygoteConnection:
        async with self._lock:
            if self._next is not None and self._next.done():
                task, self._next = self._next, None
                with contextlib.suppress(Exception):
                    self._adopt(task.result())
            if self._conn is None or self._conn.closed:
                await self._replace_connection()
            assert self._conn is not None
            if self._conn.calls + 1 >= self.settings.restart_every and self._next is None:
                self._next = asyncio.get_running_loop().create_task(_ZygoteConnection.spawn(self.options))
            return self._conn

    async def run(
        self, code: str, data: dict[str, Any] | None = None, *, state: Any = None, send_state: bool = False
    ) -> SandboxResult:
        """Run ``code`` with ``data`` (a private copy reaches the worker); never raises for code."""
        request: dict[str, Any] = {"code": code, "data": data if data is not None else {}}
        if send_state:
            request["state"] = state
        try:
            body = json.dumps(request, ensure_ascii=False).encode()
        except (TypeError, ValueError) as exc:
            return _error(f"TypeError: data must be JSON-serialisable ({exc})")
        if len(body) > self.settings.input_bytes:
            return _error(
                f"Input too large: code and data are {len(body)} bytes, above sandbox.input_bytes "
                f"({self.settings.input_bytes}); pass fewer rows or keys"
            )
        async with self._sem:
            try:
                conn = await self._connection()
            except SandboxUnavailableError as exc:
                return _error(str(exc))
            if self.unavailable_reason is not None:
                return _error(p.UNAVAILABLE + self.unavailable_reason)
            self._ids += 1
            call_id = self._ids
            try:
                _kind, payload = await asyncio.wait_for(
                    conn.call(call_id, body), self.settings.wall_s + BACKSTOP_GRACE_S
                )
            except TimeoutError:
                # Backstop: the zygote itself did not answer; replace it.
                conn.retire()
                await conn.close()
                return _error(p.timeout_text(self.settings.wall_s))
            except asyncio.CancelledError:
                conn.cancel(call_id)
                raise
        return _parse(payload)

    def run_sync(
        self, code: str, data: dict[str, Any] | None = None, *, state: Any = None, send_state: bool = False
    ) -> SandboxResult:
        """Blocking variant for tool-executor threads; must not be called on the pool's loop."""
        loop = self._loop
        if loop is None:
            raise SandboxUnavailableError(p.UNAVAILABLE + "the sandbox has not been started")
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise RuntimeError("run_sync called on the event loop; use `await pool.run(...)`")
        future = asyncio.run_coroutine_threadsafe(
            self.run(code, data, state=state, send_state=send_state), loop
        )
        return future.result(timeout=self.settings.wall_s + BACKSTOP_GRACE_S + START_TIMEOUT_S)


def _error(text: str) -> SandboxResult:
    return SandboxResult(output=None, chart=None, error=text, ms=0.0)


def _parse(payload: bytes) -> SandboxResult:
    try:
        raw = json.loads(payload)
    except ValueError:
        return _error(f"{p.CRASHED} (unreadable reply)")
    if not isinstance(raw, dict):
        return _error(f"{p.CRASHED} (unreadable reply)")
    output = raw.get("output")
    error = raw.get("error")
    return SandboxResult(
        output=output if isinstance(output, str) else None,
        chart=raw.get("chart"),
        error=error if isinstance(error, str) else None,
        ms=float(raw.get("ms") or 0.0),
        state=raw.get("state"),
        has_state="state" in raw,
    )


def _make_self_undumpable() -> None:
    """``PR_SET_DUMPABLE 0`` on the API process: its ``/proc/<pid>/environ`` closes to same-uid readers."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
