"""Landlock file-system (and TCP, signal) restriction through raw syscalls.

Why: rlimits, the uid switch and seccomp stop writes, but only a file-system layer stops a
worker from *reading* world-readable host files (``/etc/passwd``, the service's source and
config). Landlock is unprivileged and per process; after :func:`restrict` the worker can read
the interpreter and library trees and its own call directory, nothing else. On kernels with
ABI ≥ 4 it also refuses every TCP bind/connect, and with ABI ≥ 6 it scopes signals and abstract
Unix sockets to the worker's own domain. The syscall numbers (444–446) are the same on every
Linux architecture.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_WRITE_FILE = 1 << 1
_EXECUTE = 1 << 0
_ABI1_ALL = (1 << 13) - 1
_REFER = 1 << 13
_TRUNCATE = 1 << 14
_IOCTL_DEV = 1 << 15
_NET_BIND_TCP = 1
_NET_CONNECT_TCP = 2
_SCOPE_ABSTRACT_UNIX_SOCKET = 1
_SCOPE_SIGNAL = 2

READ_ONLY = _READ_FILE | _READ_DIR


def abi_version(libc: ctypes.CDLL) -> int:
    """The kernel's Landlock ABI, or 0 when Landlock is missing or disabled."""
    libc.syscall.restype = ctypes.c_long
    version = int(libc.syscall(_SYS_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION))
    return max(version, 0)


def handled_fs(abi: int) -> int:
    """Every file-system right this ABI knows, so anything not granted is refused."""
    rights = _ABI1_ALL
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def restrict(
    libc: ctypes.CDLL,
    read_only: Iterable[str],
    read_write: Iterable[str],
) -> int:
    """Confine the calling process; returns the ABI used. Needs ``PR_SET_NO_NEW_PRIVS``."""
    abi = abi_version(libc)
    if abi < 1:
        raise OSError("Landlock is not available in this kernel")
    fs_rights = handled_fs(abi)
    if abi >= 6:
        attr = struct.pack(
            "QQQ",
            fs_rights,
            _NET_BIND_TCP | _NET_CONNECT_TCP,
            _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL,
        )
    elif abi >= 4:
        attr = struct.pack("QQ", fs_rights, _NET_BIND_TCP | _NET_CONNECT_TCP)
    else:
        attr = struct.pack("Q", fs_rights)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = int(libc.syscall(_SYS_CREATE_RULESET, buf, len(attr), 0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path in read_only:
            _add_path(libc, ruleset, path, READ_ONLY)
        for path in read_write:
            _add_path(libc, ruleset, path, fs_rights & ~_EXECUTE)
        if int(libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


def _add_path(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that does not exist needs no rule
    try:
        if not os.path.isdir(path):
            rights &= _READ_FILE | _WRITE_FILE | _TRUNCATE | _EXECUTE | _IOCTL_DEV
        attr = struct.pack("=Qi", rights, fd)
        buf = ctypes.create_string_buffer(attr, len(attr))
        if int(libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, buf, 0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)
