"""One analysis call inside a freshly forked, locked-down worker (never reused).

Why a process per call: nothing the code does (patching ``np.mean``, ``pd.set_option``, a thread,
a leaked object, a segfault) can outlive the call or reach the next one; the zygote kills the
whole process group afterwards.

Pipe protocol with the zygote: the worker writes one status line (JSON + ``\\n``: the active
layers, or the failed step) as soon as it is locked down, an empty line once its trusted prefault
steps are done (or cut short by the request), then reads the request (JSON
``{"code", "data", "state"?}``) until EOF and writes one reply (JSON ``{"output", "chart",
"error", "ms"[, "state"]}``) before exiting.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from typing import Any, NoReturn

from RestrictedPython.compile import compile_restricted

from qdash.sandbox import lockdown
from qdash.sandbox.convert import ConversionError, build_payload
from qdash.sandbox.policy import OutputLimitError, PrintBuffer, build_globals
from qdash.sandbox.protocol import (
    EXIT_LOCKDOWN,
    MEMORY_ERROR,
    OUTPUT_LIMIT,
    RESULT_TOO_LARGE,
    WorkerOptions,
    error_payload,
    error_reply,
)

FILENAME = "<analysis>"
MESSAGE_CHARS = 500


def child_main(
    req_fd: int,
    res_fd: int,
    call_dir: str,
    options: WorkerOptions,
    prepare: Callable[[WorkerOptions, int], None] | None = None,
) -> NoReturn:
    """Entry point after fork: lock down, report, ``prepare`` (trusted), serve one request, exit."""
    code = 0
    try:
        try:
            layers = lockdown.apply(options.lockdown, call_dir)
        except (lockdown.LockdownError, OSError) as exc:
            _write_all(res_fd, json.dumps({"ok": False, "reason": str(exc)}).encode() + b"\n")
            os._exit(EXIT_LOCKDOWN)
        _write_all(res_fd, json.dumps({"ok": True, "layers": layers}).encode() + b"\n")
        if prepare is not None:
            prepare(options, req_fd)
        _write_all(res_fd, b"\n")  # prepared: the zygote prefers spares that sent this
        request = _read_all(req_fd)
        os.close(req_fd)
        _write_all(res_fd, execute(request, options))
        # Close before exiting: the zygote sees EOF now, not after the address-space teardown.
        os.close(res_fd)
    except BaseException:
        code = 1
    os._exit(code)


def execute(request: bytes, options: WorkerOptions) -> bytes:
    """Run one request and return the reply bytes (also used in-process by the policy tests)."""
    started = time.perf_counter()
    try:
        payload = _run(json.loads(request), options)
    except MemoryError:
        payload = error_reply(MEMORY_ERROR)
    payload["ms"] = round((time.perf_counter() - started) * 1000, 2)
    try:
        body = json.dumps(payload, ensure_ascii=False, allow_nan=False).encode()
    except (ValueError, TypeError) as exc:
        body = error_payload(f"Unsupported result type: {exc}")
    except MemoryError:
        body = error_payload(MEMORY_ERROR)
    if len(body) > options.result_bytes:
        body = error_payload(RESULT_TOO_LARGE)
    return body


def _run(request: dict[str, Any], options: WorkerOptions) -> dict[str, Any]:
    code = request.get("code")
    if not isinstance(code, str):
        return error_reply("TypeError: code must be a string")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = compile_restricted(code, FILENAME, "exec")
    except SyntaxError as exc:
        return error_reply(_syntax_message(exc))
    printer = PrintBuffer(options.output_chars)
    extra: dict[str, Any] = {}
    if "state" in request:
        extra["state"] = request["state"]
    glb = build_globals(request.get("data", {}), printer, writable_types(), extra)
    try:
        if options.plain_exec:
            # Test-only (never reachable from settings): plain exec with real builtins, to show
            # what the OS layer contains on its own (tests/sandbox/test_os_layer.py).
            plain_builtins = dict(vars(builtins))
            plain_builtins["print"] = glb["_print_"]()._call_print
            glb = {"data": glb["data"], "__name__": "analysis", "__builtins__": plain_builtins}
            exec(compile(code, FILENAME, "exec"), glb)
        else:
            exec(compiled, glb)
        return build_payload(
            glb.get("result"), "result" in glb, printer.text(), glb.get("state"), "state" in glb
        )
    except OutputLimitError:
        return error_reply(OUTPUT_LIMIT)
    except MemoryError:
        return error_reply(MEMORY_ERROR)
    except ConversionError as exc:
        return error_reply(str(exc))
    except BaseException as exc:
        return error_reply(_runtime_message(exc))


def writable_types() -> tuple[type, ...]:
    """ndarrays, data frames, series and plotly objects: the code may change them in place.

    Taken from the modules already imported, never importing one: the one-shot CLI's zygote skips
    numpy, pandas and plotly for code that imports none of them (``warmup.uses_heavy_modules``),
    so no such object can exist in its worker, and an import after the uid switch would fail.
    """
    found: list[type] = []
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        found.append(numpy.ndarray)
    pandas = sys.modules.get("pandas")
    if pandas is not None:
        found += [pandas.DataFrame, pandas.Series]
    plotly_base = sys.modules.get("plotly.basedatatypes")
    if plotly_base is not None:
        found += [plotly_base.BaseFigure, plotly_base.BasePlotlyType]
    return tuple(found)


def _syntax_message(exc: SyntaxError) -> str:
    details = exc.args[0] if exc.args else str(exc)
    if isinstance(details, (tuple, list)):
        details = "; ".join(str(d) for d in details)
    return f"SyntaxError: {details}"


def _runtime_message(exc: BaseException) -> str:
    message = str(exc)
    if len(message) > MESSAGE_CHARS:
        message = message[:MESSAGE_CHARS] + "…"
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == FILENAME:
            line = lineno
    text = f"{type(exc).__name__}: {message}"
    return f"{text} (line {line})" if line is not None else text


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
