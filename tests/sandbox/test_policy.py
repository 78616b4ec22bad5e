"""The language policy in-process: import hook, attribute guard, print cap, and a reachability
audit that walks public attributes from every allowed module *through the guard*.

The audit is what catches a new dependency version exposing a module or a file/process/pickle
entry point under a public name; re-run it on every dependency bump.
"""

from __future__ import annotations

import builtins
import codecs
import ctypes
import gc
import importlib
import io
import marshal
import os
import pickle
import shutil
import socket
import subprocess
import sys
import warnings
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest

from qdash.sandbox.policy import (
    ALLOWED_IMPORTS,
    ModuleProxy,
    OutputLimitError,
    PrintBuffer,
    guarded_getattr,
    guarded_import,
    is_denied_name,
    proxy_for,
)

DANGEROUS: dict[int, str] = {
    id(obj): name
    for name, obj in {
        "open": builtins.open,
        "eval": builtins.eval,
        "exec": builtins.exec,
        "compile": builtins.compile,
        "__import__": builtins.__import__,
        "os.system": os.system,
        "os.popen": os.popen,
        "os.fork": os.fork,
        "os.execv": os.execv,
        "os.open": os.open,
        "os.remove": os.remove,
        "os.environ": os.environ,
        "subprocess.Popen": subprocess.Popen,
        "subprocess.run": subprocess.run,
        "pickle.loads": pickle.loads,
        "pickle.load": pickle.load,
        "pickle.Unpickler": pickle.Unpickler,
        "io.open": io.open,
        "io.FileIO": io.FileIO,
        "codecs.open": codecs.open,
        "socket.socket": socket.socket,
        "socket.create_connection": socket.create_connection,
        "ctypes.CDLL": ctypes.CDLL,
        "importlib.import_module": importlib.import_module,
        "shutil.rmtree": shutil.rmtree,
        "marshal.loads": marshal.loads,
        "sys.modules": sys.modules,
        "gc.get_objects": gc.get_objects,
        "np.load": np.load,
        "np.fromfile": np.fromfile,
        "np.memmap": np.memmap,
        "pd.read_pickle": pd.read_pickle,
        "pd.read_csv": pd.read_csv,
        "pd.eval": pd.eval,
    }.items()
}


_LEAVES = (
    int,
    float,
    complex,
    str,
    bytes,
    bool,
    type(None),
    FunctionType,
    BuiltinFunctionType,
    MethodType,
    np.ufunc,
    np.generic,
    np.ndarray,
    pd.DataFrame,
    pd.Series,
)


def _walk(start: Any, depth: int, seen: set[int], found: list[str], path: str) -> None:
    if id(start) in seen or depth < 0:
        return
    seen.add(id(start))
    target = start
    names = dir(start) if not isinstance(start, ModuleProxy) else start.__dir__()
    for name in names:
        if name.startswith("_"):
            continue
        try:
            value = guarded_getattr(target, name)
        except Exception:  # refused, or a property that fails on a class: unreachable either way
            continue
        where = f"{path}.{name}"
        if id(value) in DANGEROUS:
            found.append(f"{where} -> {DANGEROUS[id(value)]}")
        if isinstance(value, ModuleType):
            found.append(f"{where} -> raw module {value.__name__}")
        if not isinstance(value, _LEAVES):
            _walk(value, depth - 1, seen, found, where)


def test_reachability_audit_finds_no_dangerous_callable() -> None:
    found: list[str] = []
    seen: set[int] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the walk touches deprecated aliases on purpose
        for name in sorted(ALLOWED_IMPORTS):
            _walk(proxy_for(importlib.import_module(name)), 5, seen, found, name)
    assert found == []
    assert len(seen) > 3000  # the walk really covered the libraries


def test_import_hook_rules() -> None:
    numpy_proxy = guarded_import("numpy")
    assert isinstance(numpy_proxy, ModuleProxy)
    assert guarded_import("numpy.linalg") is numpy_proxy  # `import a.b` binds `a`
    assert isinstance(guarded_getattr(numpy_proxy, "linalg"), ModuleProxy)
    with pytest.raises(ImportError, match=r"^Import of 'os' is not allowed\. Allowed: collections, "):
        guarded_import("os")
    with pytest.raises(ImportError, match=r"Import of '\.\.x'"):
        guarded_import("x", level=2)
    with pytest.raises(AttributeError, match="'f2py' is not allowed in the sandbox"):
        guarded_import("numpy", fromlist=("f2py",))
    # C-level internal import (empty list fromlist) goes to the real importer
    assert guarded_import("time", None, None, [], 0) is sys.modules["time"]


def test_attribute_guard_rules() -> None:
    json_proxy = guarded_import("json")
    assert guarded_getattr(json_proxy, "dumps")({"a": 1}) == '{"a": 1}'
    with pytest.raises(AttributeError, match="'load' is not allowed"):
        guarded_getattr(json_proxy, "load")
    with pytest.raises(AttributeError, match="'dumps' is not allowed"):
        guarded_getattr(np.arange(2), "dumps")
    with pytest.raises(AttributeError, match="'format' is not allowed"):
        guarded_getattr("{0}", "format")
    with pytest.raises(AttributeError, match="starts with"):
        guarded_getattr(1, "__class__")
    with pytest.raises(AttributeError, match="'os' is not allowed"):
        guarded_getattr(os, "path")  # a raw, non-allowed module refuses every attribute
    assert is_denied_name("to_csv") and is_denied_name("read_json") and is_denied_name("write_image")
    assert not is_denied_name("to_dict") and not is_denied_name("mean")
    proxy = guarded_import("math")
    with pytest.raises(TypeError, match="read-only"):
        proxy.pi = 3  # type: ignore[attr-defined]
    assert repr(proxy) == "<module 'math' (sandboxed)>"


def test_print_buffer_caps() -> None:
    buffer = PrintBuffer(keep_chars=10, hard_limit=100)
    buffer.write("x" * 20)
    assert buffer.text() == "x" * 10 + "\n... (output truncated)"
    with pytest.raises(OutputLimitError):
        buffer.write("y" * 81)


def test_the_tool_schema_names_only_allowed_imports() -> None:
    """The model is told exactly the allow-list: every module named imports, none is missing."""
    import re

    from qdash.copilot.tools.catalog.analysis import AnalysisArgs

    description = AnalysisArgs.model_fields["code"].description or ""
    listed = description.split("Imports: ", 1)[1].split(". ", 1)[0]
    named = set()
    for top, subs in re.findall(r"(\w+)(?:\(([^)]*)\))?", listed):
        named.add(top)
        named.update(f"{top}.{sub}" for sub in subs.split())
    assert named == ALLOWED_IMPORTS
    for name in named:
        guarded_import(name)
    with pytest.raises(ImportError, match="not allowed"):
        guarded_import("scipy")
