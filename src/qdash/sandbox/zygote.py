"""The zygote: a clean, pre-imported parent that forks one locked-down worker per call.

Why a separate process: the API must never run user code nor hold a copy of it in its address
space; a zygote spawned with a scrubbed environment holds no secret to leak, and forking it is
far cheaper than starting Python per call. Why a selector loop: one single-threaded process
supervises several workers at once (it must be single-threaded to fork safely), never uses a
signal handler, and keeps fork, reaping and directory clean-up off the critical path.

Run as ``python -I -m qdash.sandbox.zygote OPTIONS_JSON SOCKET_FD`` (see ``client.py``).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import selectors
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field

from qdash.sandbox import protocol as p
from qdash.sandbox import worker
from qdash.sandbox.warmup import prefault, warm_up

READ_CHUNK = 1 << 16
FRAMING_SLACK = 64 * 1024
STATUS_LINE_MAX = 4096
REAP_POLL_S = 0.005


@dataclass
class Worker:
    """The zygote's view of one forked worker."""

    pid: int
    req_fd: int
    res_fd: int
    call_dir: str
    status: dict[str, object] | None = None
    prepared: bool = False
    buf: bytearray = field(default_factory=bytearray)
    call_id: int | None = None
    deadline: float = 0.0
    pending: memoryview | None = None
    done: bool = False


class Zygote:
    """Owns the API socket, the spares and the running workers."""

    def __init__(self, sock: socket.socket, options: p.WorkerOptions) -> None:
        self.sock = sock
        self.options = options
        self.sel = selectors.DefaultSelector()
        self.inbuf = bytearray()
        self.outbuf = bytearray()
        self.spares: deque[Worker] = deque()
        self.running: dict[int, Worker] = {}
        self.dying: list[Worker] = []
        self.base_dir = tempfile.mkdtemp(prefix="qdash-sandbox-")
        os.chmod(self.base_dir, 0o711)
        self.unavailable: str | None = None
        self.alive = True

    # -- workers ---------------------------------------------------------------------------
    def fork_worker(self, warm: bool = False) -> Worker:
        """A new worker; ``warm``: it runs the trusted prefault steps while it waits for a request."""
        call_dir = tempfile.mkdtemp(dir=self.base_dir)
        if os.geteuid() == 0:
            os.chown(call_dir, self.options.lockdown.uid, self.options.lockdown.uid)
        os.chmod(call_dir, 0o700)
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: never returns
            try:
                _close_other_fds({req_r, res_w})
                null = os.open(os.devnull, os.O_RDWR)
                for target in (0, 1, 2):
                    os.dup2(null, target)
                os.close(null)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
            except BaseException:
                os._exit(1)
            worker.child_main(req_r, res_w, call_dir, self.options, prefault if warm else None)
        os.close(req_r)
        os.close(res_w)
        os.set_blocking(req_w, False)
        os.set_blocking(res_r, False)
        entry = Worker(pid, req_w, res_r, call_dir)
        self.sel.register(res_r, selectors.EVENT_READ, ("res", entry))
        return entry

    def top_up(self) -> None:
        """Refill the spares. They prefault only while no call runs: the steps take a spare's
        copy-on-write faults off an idle pool's next call (warm p50 24 → 16 ms, ``bench/sandbox.py``),
        but under load they are extra CPU competing with the calls (~18 ms per spare; machine CPU
        per call 40 → 22 ms in 100 back-to-back calls), and a busy pool's next spare is taken
        before it would finish them anyway."""
        warm = self.options.prefault and not self.running
        while self.unavailable is None and len(self.spares) < self.options.spares:
            self.spares.append(self.fork_worker(warm))

    def wait_first_status(self, timeout: float) -> dict[str, object]:
        """Start-up probe: fork one spare and wait for its lockdown report."""
        entry = self.fork_worker()
        self.spares.append(entry)
        deadline = time.monotonic() + timeout
        while entry.status is None and not entry.done and time.monotonic() < deadline:
            for key, _ in self.sel.select(max(0.0, deadline - time.monotonic())):
                self._on_result_readable(key.data[1])
        if entry.status is None:
            return {"ok": False, "reason": "worker did not report its lockdown in time"}
        return entry.status

    def start_call(self, call_id: int, payload: bytes) -> None:
        if self.unavailable is not None:
            self.send(p.KIND_ERROR, call_id, p.error_payload(p.UNAVAILABLE + self.unavailable))
            return
        # Oldest first among: prefaulted spares, then locked-down ones, then any.
        prepared = [w for w in self.spares if w.prepared]
        ready = prepared or [w for w in self.spares if w.status is not None] or list(self.spares)
        entry = ready[0] if ready else None
        if entry is None:
            entry = self.fork_worker()
        else:
            self.spares.remove(entry)
        entry.call_id = call_id
        entry.deadline = time.monotonic() + self.options.wall_s
        entry.pending = memoryview(payload)
        self.running[call_id] = entry
        self.sel.register(entry.req_fd, selectors.EVENT_WRITE, ("req", entry))
        self._on_request_writable(entry)

    def _on_request_writable(self, entry: Worker) -> None:
        assert entry.pending is not None
        try:
            while entry.pending:
                written = os.write(entry.req_fd, entry.pending)
                entry.pending = entry.pending[written:]
        except BlockingIOError:
            return
        except OSError:
            pass  # the worker died; its result pipe reports it
        self.sel.unregister(entry.req_fd)
        os.close(entry.req_fd)
        entry.req_fd = -1
        entry.pending = None

    def _on_result_readable(self, entry: Worker) -> None:
        try:
            chunk = os.read(entry.res_fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            entry.buf += chunk
            if entry.status is None:
                self._parse_status(entry)
            if entry.status is not None and not entry.prepared and entry.buf[:1] == b"\n":
                entry.prepared = True  # the empty line that ends the prefault steps
                del entry.buf[:1]
            if len(entry.buf) > self.options.result_bytes + FRAMING_SLACK:
                self.finish(entry, p.error_payload(p.RESULT_TOO_LARGE))
            return
        self.finish(entry, None)

    def _parse_status(self, entry: Worker) -> None:
        newline = entry.buf.find(b"\n")
        if newline < 0:
            if len(entry.buf) > STATUS_LINE_MAX:
                entry.status = {"ok": False, "reason": "malformed lockdown report"}
            return
        try:
            entry.status = json.loads(bytes(entry.buf[:newline]))
        except ValueError:
            entry.status = {"ok": False, "reason": "malformed lockdown report"}
        del entry.buf[: newline + 1]
        if entry.status is not None and not entry.status.get("ok"):
            self.unavailable = str(entry.status.get("reason"))

    def finish(self, entry: Worker, error: bytes | None) -> None:
        """Reply for this worker's call (if any) first, then kill; reaping happens in the loop."""
        if entry.done:
            return
        entry.done = True
        if entry.call_id is not None:
            self.running.pop(entry.call_id, None)
            if error is None:
                if entry.status is not None and not entry.status.get("ok"):
                    error = p.error_payload(p.UNAVAILABLE + str(entry.status.get("reason")))
                elif entry.buf:
                    self.send(p.KIND_ANSWER, entry.call_id, bytes(entry.buf))
                else:
                    # No reply: the worker died. It closed its pipe by exiting, so this is quick.
                    _, status = os.waitpid(entry.pid, 0)
                    entry.pid = -1
                    error = p.error_payload(self._death_text(status))
            if error is not None:
                self.send(p.KIND_ERROR, entry.call_id, error)
        elif entry in self.spares:
            self.spares.remove(entry)
        if entry.pid > 0:
            _kill_group(entry.pid)
        self._release_fds(entry)
        self.dying.append(entry)
        self.reap()
        self.top_up()

    def reap(self) -> None:
        """Collect killed workers without blocking and remove their directories."""
        for entry in list(self.dying):
            if entry.pid > 0:
                pid, _ = os.waitpid(entry.pid, os.WNOHANG)
                if pid == 0:
                    continue
            self.dying.remove(entry)
            shutil.rmtree(entry.call_dir, ignore_errors=True)

    def _death_text(self, status: int) -> str:
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig == signal.SIGXCPU:
                return p.timeout_text(self.options.wall_s)
            return f"{p.CRASHED} ({signal.Signals(sig).name})"
        return f"{p.CRASHED} (exit {os.WEXITSTATUS(status)})"

    def _release_fds(self, entry: Worker) -> None:
        for fd in (entry.req_fd, entry.res_fd):
            if fd >= 0:
                with contextlib.suppress(KeyError):
                    self.sel.unregister(fd)
                os.close(fd)
        entry.req_fd = entry.res_fd = -1

    # -- API socket ------------------------------------------------------------------------
    def send(self, kind: int, call_id: int, payload: bytes) -> None:
        self.outbuf += p.encode(kind, call_id, payload)
        self._flush()

    def _flush(self) -> None:
        try:
            while self.outbuf:
                sent = self.sock.send(self.outbuf)
                del self.outbuf[:sent]
        except BlockingIOError:
            pass
        except OSError:
            self.alive = False
            return
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.outbuf else 0)
        self.sel.modify(self.sock, events, ("api", None))

    def _on_api_readable(self) -> None:
        try:
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.alive = False
            return
        self.inbuf += chunk
        while len(self.inbuf) >= 4:
            length = int.from_bytes(self.inbuf[:4], "big")
            if length > p.MAX_FRAME:
                self.alive = False  # protocol error: the API restarts us
                return
            if len(self.inbuf) < 4 + length:
                return
            _, kind, call_id = p.HEADER.unpack_from(self.inbuf)
            payload = bytes(self.inbuf[p.HEADER.size : 4 + length])
            del self.inbuf[: 4 + length]
            if kind == p.KIND_RUN:
                self.start_call(call_id, payload)
            elif kind == p.KIND_CANCEL and call_id in self.running:
                self.finish(self.running[call_id], p.error_payload(p.CANCELLED))

    # -- loop ------------------------------------------------------------------------------
    def serve(self) -> None:
        self.sock.setblocking(False)
        self.sel.register(self.sock, selectors.EVENT_READ, ("api", None))
        self.top_up()
        while self.alive:
            timeout = REAP_POLL_S if self.dying else None
            if self.running:
                nearest = min(w.deadline for w in self.running.values())
                remaining = max(0.0, nearest - time.monotonic())
                timeout = remaining if timeout is None else min(timeout, remaining)
            for key, events in self.sel.select(timeout):
                role, entry = key.data
                if role == "api":
                    if events & selectors.EVENT_WRITE:
                        self._flush()
                    if events & selectors.EVENT_READ:
                        self._on_api_readable()
                elif entry.done:
                    continue
                elif role == "req":
                    self._on_request_writable(entry)
                else:
                    self._on_result_readable(entry)
            self.reap()
            now = time.monotonic()
            for entry in [w for w in self.running.values() if w.deadline <= now]:
                self.finish(entry, p.error_payload(p.timeout_text(self.options.wall_s)))
        self.shutdown()

    def shutdown(self) -> None:
        for entry in list(self.running.values()) + list(self.spares):
            self.finish(entry, p.error_payload(p.UNAVAILABLE + "sandbox is shutting down"))
        deadline = time.monotonic() + 5.0
        while self.dying and time.monotonic() < deadline:
            self.reap()
            time.sleep(REAP_POLL_S)
        shutil.rmtree(self.base_dir, ignore_errors=True)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _close_other_fds(keep: set[int]) -> None:
    low = 3
    for fd in sorted(keep):
        if fd > low:
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)


def _thread_count() -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 1


def main(argv: list[str]) -> int:
    options = p.WorkerOptions.from_json(argv[1])
    sock = socket.socket(fileno=int(argv[2]))
    started = time.monotonic()
    warm_up(options)
    gc.collect()
    gc.freeze()
    zygote = Zygote(sock, options)
    threads = _thread_count()
    status = (
        zygote.wait_first_status(timeout=10.0)
        if threads == 1
        else {"ok": False, "reason": f"zygote has {threads} threads; refusing to fork"}
    )
    if not status.get("ok"):
        zygote.unavailable = str(status.get("reason"))
    hello = {
        "ready": bool(status.get("ok")),
        "layers": status.get("layers", {}),
        "reason": status.get("reason"),
        "warmup_ms": round((time.monotonic() - started) * 1000, 1),
        "pid": os.getpid(),
    }
    sock.sendall(p.encode(p.KIND_HELLO, 0, json.dumps(hello).encode()))
    zygote.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
