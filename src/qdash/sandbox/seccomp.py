"""A small seccomp-BPF filter, assembled by hand and loaded with ``prctl`` (no libseccomp needed).

Why hand-written: the filter is 30-odd instructions, and building it here keeps the worker free
of an extra dependency whose import could fail after the privilege drop. It refuses (EPERM) the
syscalls that start programs, open sockets (including path-named Unix sockets, which a network
namespace does not isolate), create processes, trace or read other processes, and change
namespaces or mounts. ``clone`` is allowed only with ``CLONE_THREAD`` (``RLIMIT_NPROC`` 0 still
refuses threads); ``clone3`` answers ENOSYS so libc falls back to ``clone``, whose flags a filter
can read. Only x86_64 is described; elsewhere :func:`install` reports the layer as unavailable.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

# BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_SECCOMP_RET_KILL_PROCESS = 0x80000000
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000
_CLONE_THREAD = 0x00010000
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

# seccomp_data offsets
_OFF_NR = 0
_OFF_ARCH = 4
_OFF_ARG0_LO = 16

X86_64_DENIED: dict[str, int] = {
    "socket": 41,
    "socketpair": 53,
    "fork": 57,
    "vfork": 58,
    "execve": 59,
    "ptrace": 101,
    "chroot": 161,
    "pivot_root": 155,
    "mount": 165,
    "umount2": 166,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "finit_module": 313,
    "init_module": 175,
    "bpf": 321,
    "execveat": 322,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "pidfd_getfd": 438,
}
_X86_64_CLONE = 56
_X86_64_CLONE3 = 435


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def build_x86_64_program() -> list[bytes]:
    """The filter as a list of ``sock_filter`` records (exposed for the tests)."""
    eperm = _SECCOMP_RET_ERRNO | errno.EPERM
    prog = [
        _insn(_LD_W_ABS, 0, 0, _OFF_ARCH),
        _insn(_JEQ_K, 1, 0, _AUDIT_ARCH_X86_64),
        _insn(_RET_K, 0, 0, _SECCOMP_RET_KILL_PROCESS),
        _insn(_LD_W_ABS, 0, 0, _OFF_NR),
        # x32 ABI numbers alias the x86_64 ones with a high bit: refuse them all.
        _insn(_JGE_K, 0, 1, _X32_SYSCALL_BIT),
        _insn(_RET_K, 0, 0, eperm),
    ]
    for number in X86_64_DENIED.values():
        prog.append(_insn(_JEQ_K, 0, 1, number))
        prog.append(_insn(_RET_K, 0, 0, eperm))
    prog.append(_insn(_JEQ_K, 0, 1, _X86_64_CLONE3))
    prog.append(_insn(_RET_K, 0, 0, _SECCOMP_RET_ERRNO | errno.ENOSYS))
    prog.append(_insn(_JEQ_K, 1, 0, _X86_64_CLONE))
    prog.append(_insn(_RET_K, 0, 0, _SECCOMP_RET_ALLOW))
    # clone: allowed only for threads
    prog.append(_insn(_LD_W_ABS, 0, 0, _OFF_ARG0_LO))
    prog.append(_insn(_JSET_K, 1, 0, _CLONE_THREAD))
    prog.append(_insn(_RET_K, 0, 0, eperm))
    prog.append(_insn(_RET_K, 0, 0, _SECCOMP_RET_ALLOW))
    return prog


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def supported() -> bool:
    """Whether this machine's architecture has a filter description here."""
    return platform.machine() == "x86_64"


def install(libc: ctypes.CDLL) -> None:
    """Load the filter into the calling process (needs ``PR_SET_NO_NEW_PRIVS`` or root)."""
    if not supported():
        raise OSError(f"no seccomp filter for architecture {platform.machine()}")
    prog = build_x86_64_program()
    raw = ctypes.create_string_buffer(b"".join(prog))
    fprog = _SockFprog(len(prog), ctypes.cast(raw, ctypes.c_void_p))
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp filter refused: {errno.errorcode.get(err, err)}")
