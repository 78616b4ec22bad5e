"""The OS layer alone (language policy switched off by the test-only plain-exec switch).

Proves that what a policy hole would let through is still contained:
no secret in the environment, no host file read or written, no network, no fork or thread,
memory capped. The switch is a constructor argument of the pool, not a setting.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from qdash.sandbox import SandboxPool, landlock
from qdash.sandbox.client import ZYGOTE_ENV

from .conftest import start_pool

SECRET = "sk-os-layer-canary-0123456789abcdef"
HAS_LANDLOCK = landlock.abi_version(ctypes.CDLL(None, use_errno=True)) > 0
needs_landlock = pytest.mark.skipif(not HAS_LANDLOCK, reason="this kernel has no Landlock (fs layer off)")


@pytest.fixture(scope="module")
def raw_pool() -> Iterator[SandboxPool]:
    os.environ["QDASH_TEST_OS_SECRET"] = SECRET
    runner, pool = start_pool(plain_exec=True)
    yield pool
    runner.call(pool.stop())
    runner.close()


def run(pool: SandboxPool, code: str) -> str:
    reply = pool.run_sync(code)
    text = reply.output if reply.error is None else reply.error
    assert text is not None
    assert SECRET not in text
    return text


def test_layers_reported_active(raw_pool: SandboxPool) -> None:
    for layer in ("privdrop", "net", "rlimits", "seccomp", *(("fs",) if HAS_LANDLOCK else ())):
        assert raw_pool.layers[layer].startswith("on"), raw_pool.layers


def test_environment_is_scrubbed(raw_pool: SandboxPool) -> None:
    out = run(raw_pool, "import os, json\nresult = {'output': json.dumps(sorted(os.environ))}")
    assert set(json.loads(out)) <= set(ZYGOTE_ENV) | {"HOME", "TMPDIR", "LC_CTYPE"}


def test_parent_environ_unreadable(raw_pool: SandboxPool) -> None:
    for pid in (os.getpid(), raw_pool.zygote_pid):
        out = run(raw_pool, f"print(open('/proc/{pid}/environ').read())")
        assert out.startswith("PermissionError"), out


@needs_landlock
def test_host_files_unreadable(raw_pool: SandboxPool) -> None:
    out = run(raw_pool, "print(open('/etc/passwd').read())")
    assert out.startswith("PermissionError"), out
    source = Path(__file__).resolve()
    assert run(raw_pool, f"print(open({str(source)!r}).read())").startswith("PermissionError")


def test_writes_refused(raw_pool: SandboxPool, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    os.chmod(tmp_path, 0o777)  # even a world-writable directory
    assert run(raw_pool, f"open({str(tmp_path / 'new')!r}, 'w').write('x')").startswith("PermissionError")
    assert run(raw_pool, f"import os\nos.remove({str(victim)!r})").startswith("PermissionError")
    own = run(raw_pool, "f = open('mine', 'w')\nf.write('x' * 10)\nf.close()")
    assert own.startswith("OSError: [Errno 27] File too large"), own
    assert victim.read_text() == "keep" and not (tmp_path / "new").exists()


def test_no_network_to_host_loopback() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    port = server.getsockname()[1]
    runner, pool = start_pool(plain_exec=True, seccomp=False)
    try:
        code = f"import socket\ns = socket.socket()\ns.settimeout(1)\ns.connect(('127.0.0.1', {port}))"
        out = run(pool, code)
        assert out.startswith(("OSError", "ConnectionRefusedError", "PermissionError")), out
    finally:
        runner.call(pool.stop())
        runner.close()
    with pytest.raises(BlockingIOError):
        server.accept()
    server.close()


def test_sockets_refused_by_seccomp(raw_pool: SandboxPool) -> None:
    out = run(raw_pool, "import socket\ns = socket.socket(socket.AF_UNIX)")
    assert out.startswith("PermissionError"), out


def test_fork_subprocess_threads_refused(raw_pool: SandboxPool) -> None:
    assert run(raw_pool, "import os\nos.fork()").startswith(("PermissionError", "BlockingIOError"))
    out = run(raw_pool, "import subprocess\nsubprocess.run(['/bin/true'])")
    assert out.startswith(("PermissionError", "BlockingIOError", "OSError")), out
    out = run(raw_pool, "import threading\nt = threading.Thread(target=print)\nt.start()")
    assert out.startswith("RuntimeError: can't start new thread"), out


def test_memory_capped(raw_pool: SandboxPool) -> None:
    assert run(raw_pool, "x = bytearray(2 * 1024 ** 3)") == "Memory limit exceeded"


def test_cannot_regain_root(raw_pool: SandboxPool) -> None:
    out = run(raw_pool, "import os\nos.setuid(0)")
    assert out.startswith("PermissionError"), out
    assert run(raw_pool, "import os\nprint(os.getuid())") == "65534\n"


@needs_landlock
async def test_one_shot_pool_has_the_same_os_layer(raw_pool: SandboxPool) -> None:
    """``qdash sandbox run``'s pool (one worker, no heavy warm-up) contains the code alike."""
    code = "import os\nprint(sorted(os.environ), open('/etc/passwd').read())"
    pool = SandboxPool(raw_pool.settings, one_shot_code=code, _plain_exec_for_tests=True)
    await pool.start()
    try:
        assert pool.layers == raw_pool.layers
        reply = await pool.run(code)
    finally:
        await pool.stop()
    assert reply.error is not None
    assert reply.error.startswith("PermissionError"), reply.error
