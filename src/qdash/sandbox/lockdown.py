"""The worker's lockdown, run right after fork and before the request is read.

Why each step: ``setsid`` gives one process group to kill; a network namespace leaves no route
anywhere; an empty per-call directory is the only writable place; rlimits turn memory bombs into
``MemoryError``, stop file writes (``RLIMIT_FSIZE`` 0) and forks (``RLIMIT_NPROC`` 0 once the uid
is not root); the uid switch makes file permissions and process limits apply at all; no-new-privs
and not-dumpable close privilege gain and ``/proc`` peeking; seccomp and Landlock refuse what the
others cannot name (Unix sockets, reads of world-readable files).

Fail closed: :func:`apply` raises :class:`LockdownError` naming the step when a layer listed in
``require`` is not active; the worker then exits without reading any request.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sysconfig
from dataclasses import dataclass, field

from qdash.sandbox import landlock, seccomp

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38

LAYER_NAMES = ("privdrop", "net", "rlimits", "seccomp", "fs")


class LockdownError(Exception):
    """A required layer could not be put in place; the message names it and why."""


@dataclass(frozen=True)
class LockdownConfig:
    """What the worker needs to lock itself down; built from ``SandboxSettings`` in the zygote."""

    uid: int = 65534
    cpu_s: int = 5
    memory_mib: int = 1024
    require: tuple[str, ...] = ("privdrop", "net")
    seccomp: bool = True
    fs: str = "landlock"
    read_only_paths: tuple[str, ...] = field(default_factory=tuple)


def default_read_only_paths() -> tuple[str, ...]:
    """Trees a worker may read: the interpreter, its libraries and time-zone data."""
    paths = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update({"/usr/share/zoneinfo", "/usr/lib", "/lib", "/usr/lib64", "/lib64"})
    return tuple(sorted(paths))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _vsz_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as handle:
        pages = int(handle.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


def apply(config: LockdownConfig, call_dir: str) -> dict[str, str]:
    """Lock the calling (freshly forked) process down; returns ``{layer: "on" | "off: why"}``."""
    libc = _libc()
    layers: dict[str, str] = {}
    os.setsid()
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    was_root = os.geteuid() == 0

    layers["net"] = _unshare_net(libc, was_root)
    os.chdir(call_dir)
    os.environ["HOME"] = call_dir
    os.environ["TMPDIR"] = call_dir
    vsz = _vsz_bytes()
    try:
        resource.setrlimit(resource.RLIMIT_AS, (vsz + config.memory_mib * 2**20,) * 2)
        resource.setrlimit(resource.RLIMIT_CPU, (config.cpu_s, config.cpu_s + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (OSError, ValueError) as exc:
        raise LockdownError(f"rlimits: {exc}") from None
    layers["rlimits"] = "on"

    layers["privdrop"] = _drop_privileges(config.uid, was_root)
    if layers["privdrop"] == "on":
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 or libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise LockdownError(f"prctl: errno {ctypes.get_errno()}")

    layers["fs"] = _filesystem(libc, config, call_dir)
    layers["seccomp"] = _seccomp(libc, config)
    if layers["net"] != "on" and layers["seccomp"] == "on":
        layers["net"] = "on (seccomp refuses socket)"
    for name in config.require:
        state = layers.get(name, "off: unknown layer")
        if not state.startswith("on"):
            raise LockdownError(f"{name} ({state})")
    return layers


def _unshare_net(libc: ctypes.CDLL, was_root: bool) -> str:
    flags = CLONE_NEWNET if was_root else CLONE_NEWUSER | CLONE_NEWNET
    if libc.unshare(flags) == 0:
        return "on"
    return f"off: unshare failed ({os.strerror(ctypes.get_errno())})"


def _drop_privileges(uid: int, was_root: bool) -> str:
    if not was_root:
        return "off: the service does not run as root, so the worker cannot switch uid"
    if uid == 0:
        return "off: sandbox.uid is 0"
    try:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    except OSError as exc:
        return f"off: {exc}"
    if os.getuid() == 0 or os.geteuid() == 0:
        return "off: still root after setuid"
    try:
        os.setuid(0)
    except PermissionError:
        return "on"
    return "off: setuid(0) succeeded after the drop"


def _filesystem(libc: ctypes.CDLL, config: LockdownConfig, call_dir: str) -> str:
    if config.fs != "landlock":
        return "off: sandbox.fs is none"
    try:
        abi = landlock.restrict(libc, config.read_only_paths or default_read_only_paths(), [call_dir])
    except OSError as exc:
        return f"off: {exc}"
    return f"on (landlock ABI {abi})"


def _seccomp(libc: ctypes.CDLL, config: LockdownConfig) -> str:
    if not config.seccomp:
        return "off: sandbox.seccomp is false"
    try:
        seccomp.install(libc)
    except OSError as exc:
        return f"off: {exc}"
    return "on"
