"""Language policy for analysis code: RestrictedPython globals, import allow-list, attribute guard.

Why this layer exists although the OS layer contains the worker: it turns most hostile or
mistaken code into an error the model can act on (``ImportError: Import of 'os' is not
allowed…``) instead of a silent ``PermissionError`` deep in a library. It is *not* the security
boundary; ``lockdown.py`` is. Everything here runs inside the already locked-down worker.

Rules (summary in docs/sandbox.md, Language policy):
- imports: exact names from :data:`ALLOWED_IMPORTS`, ``level == 0``; every module handed to the
  code is a :class:`ModuleProxy` whose attribute access goes through :func:`guarded_getattr`;
  an import with an empty *list* ``fromlist`` is a C-level internal import and goes to the real
  importer (its module returns to the C caller, never to the code);
- attributes: RestrictedPython's ``safer_getattr`` rules, then a name deny-list, then a module
  check on the *value* (an allowed module comes back as a proxy, any other module is refused);
- writes: ``dict``/``list``/ndarray/DataFrame/Series and plotly objects, everything else through
  ``full_write_guard``;
- print: one capped collector shared by every scope.
"""

from __future__ import annotations

import builtins
import importlib
import operator
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from RestrictedPython.Eval import default_guarded_getitem, default_guarded_getiter
from RestrictedPython.Guards import (
    full_write_guard,
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    safe_builtins,
    safer_getattr,
)

BASE_IMPORTS: tuple[str, ...] = (
    "numpy",
    "numpy.linalg",
    "numpy.random",
    "numpy.fft",
    "numpy.polynomial",
    "pandas",
    "plotly",
    "plotly.graph_objects",
    "plotly.subplots",
    "plotly.express",
    "math",
    "statistics",
    "json",
    "datetime",
    "collections",
)
"""The import allow-list (scipy is not installed here and has not been audited, so it is absent)."""

ALLOWED_IMPORTS: frozenset[str] = frozenset(BASE_IMPORTS)


def imports_for_the_model() -> str:
    """The allow-list as the tool schema tells it (``numpy(linalg random …) pandas …``).

    Derived from :data:`BASE_IMPORTS` so the model is never told of a module the policy refuses;
    compact because every tool schema is sent on every model round (prompt token budget).
    """
    submodules: dict[str, list[str]] = {}
    for name in BASE_IMPORTS:
        top, _, sub = name.partition(".")
        submodules.setdefault(top, [])
        if sub:
            submodules[top].append(sub)
    return " ".join(f"{top}({' '.join(subs)})" if subs else top for top, subs in submodules.items())


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


DENIED_NAMES: frozenset[str] = frozenset(
    _words(
        """load loads save savez savez_compressed savetxt loadtxt genfromtxt fromfile tofile fromregex
        memmap open_memmap dump dumps DataSource ctypes ctypeslib f2py testing lib eval query pipe
        show to_image full_figure_for_development set_option set_printoptions seterr system getenv
        environ style plot ExcelFile ExcelWriter HDFStore LowLevelCallable
        option_context options get_option reset_option describe_option printoptions seterrcall
        register_matplotlib_converters hist boxplot show_versions show_config show_runtime"""
    )
)
"""Names refused on any object. The last two lines are ours: pandas options import modules by
name (``plotting.backend``), numpy's error callbacks outlive the statement that set them, and
``hist``/``boxplot``/``show_*`` import matplotlib or optional packages by name."""

ALLOWED_TO: frozenset[str] = frozenset(
    _words(
        """to_dict to_list to_numpy to_string to_datetime to_numeric to_timedelta to_records
        to_frame to_plotly_json to_period to_timestamp to_pydatetime to_series to_flat_index"""
    )
)

JSON_MODULE_NAMES = frozenset({"dumps", "loads"})

EXTRA_BUILTINS = _words(
    "sum min max sorted enumerate zip map filter any all list dict tuple set frozenset reversed next iter"
)

DENIED_BUILTINS = _words(
    "type getattr vars dir globals locals open compile input help breakpoint exit quit exec eval "
    "memoryview bytearray bytes"
)

OUTPUT_HARD_LIMIT = 262_144
"""Printed characters after which the code is stopped with ``Output limit exceeded``."""

TRUNCATION_NOTE = "\n... (output truncated)"


class OutputLimitError(Exception):
    """Raised by the print collector; the worker maps it to ``Output limit exceeded``."""


def denied(name: str) -> AttributeError:
    """The one error text for a refused attribute or module: it names the thing, never the rule."""
    return AttributeError(f"'{name}' is not allowed in the sandbox")


def is_denied_name(name: str) -> bool:
    """Whether ``name`` is refused on any object, whatever the object is."""
    if name in DENIED_NAMES or name.startswith(("read_", "write_")):
        return True
    return name.startswith("to_") and name not in ALLOWED_TO


class ModuleProxy:
    """Stands in for an allowed module; every attribute read goes through the guard.

    It keeps no reference to the module in an attribute (a library doing ``getattr(proxy, s)``
    with a code-chosen string must not find one): the real module lives in ``_REAL`` keyed by
    the proxy's id, and proxies are cached for the worker's life so ids are never reused. It
    has no ``__name__`` either, so ``from m import x``'s fallback to ``sys.modules`` finds
    nothing.
    """

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return guarded_getattr(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"cannot assign '{name}': modules are read-only in the sandbox")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"cannot delete '{name}': modules are read-only in the sandbox")

    def __repr__(self) -> str:
        return f"<module '{_REAL[id(self)].__name__}' (sandboxed)>"

    def __dir__(self) -> list[str]:
        real = _REAL[id(self)]
        return sorted(n for n in dir(real) if not n.startswith("_") and not is_denied_name(n))


_REAL: dict[int, ModuleType] = {}
_PROXIES: dict[str, ModuleProxy] = {}


def proxy_for(module: ModuleType) -> ModuleProxy:
    """The (cached) proxy of an allowed module; any other module raises the guard's error."""
    name = module.__name__
    if name not in ALLOWED_IMPORTS:
        raise denied(name.rsplit(".", 1)[-1])
    proxy = _PROXIES.get(name)
    if proxy is None:
        proxy = ModuleProxy()
        _REAL[id(proxy)] = module
        _PROXIES[name] = proxy
    return proxy


def guarded_getattr(obj: Any, name: str, default: Any = None) -> Any:
    """``_getattr_``: safer_getattr rules, the deny-list, then the module check on the value."""
    if type(name) is not str:
        raise TypeError("attribute names must be str")
    target: Any = obj
    if type(obj) is ModuleProxy:
        target = _REAL[id(obj)]
        if target.__name__ == "json" and name in JSON_MODULE_NAMES:
            return _check_value(safer_getattr(target, name))  # type: ignore[no-untyped-call]
    elif isinstance(obj, ModuleType) and obj.__name__ not in ALLOWED_IMPORTS:
        # A raw module that slipped out of a library call: refuse it outright.
        raise denied(obj.__name__.rsplit(".", 1)[-1])
    if is_denied_name(name):
        raise denied(name)
    try:
        value = safer_getattr(target, name, _MISSING)  # type: ignore[no-untyped-call]
    except NotImplementedError as exc:
        raise AttributeError(f"'{name}' is not allowed in the sandbox ({exc})") from None
    if value is _MISSING:
        raise AttributeError(f"{_describe(obj)} has no attribute '{name}'")
    return _check_value(value)


_MISSING = object()


def _describe(obj: Any) -> str:
    if type(obj) is ModuleProxy:
        return f"module '{_REAL[id(obj)].__name__}'"
    return f"'{type(obj).__name__}' object"


def _check_value(value: Any) -> Any:
    """Modules never reach the code raw: allowed ones as proxies, others refused."""
    if isinstance(value, ModuleType):
        return proxy_for(value)
    return value


def _allowed_list() -> str:
    return ", ".join(sorted(ALLOWED_IMPORTS))


def guarded_import(
    name: str,
    globals: dict[str, Any] | None = None,
    locals: dict[str, Any] | None = None,
    fromlist: Any = None,
    level: int = 0,
) -> Any:
    """``__import__`` for analysis code: the rules above."""
    if isinstance(fromlist, list) and not fromlist and level == 0:
        # PyImport_Import from C (e.g. datetime.strftime importing time): the result goes back
        # to the C caller, which re-reads sys.modules; code cannot pass a list here because an
        # import statement passes None or a tuple and `__import__` cannot be named.
        return builtins.__import__(name, globals, locals, fromlist, level)
    if level != 0 or name not in ALLOWED_IMPORTS:
        shown = ("." * level) + name
        raise ImportError(f"Import of '{shown}' is not allowed. Allowed: {_allowed_list()}")
    module = importlib.import_module(name)
    if fromlist:
        proxy = proxy_for(module)
        for item in fromlist:
            # Check here so IMPORT_FROM's own getattr only ever sees allowed names.
            guarded_getattr(proxy, str(item))
        return proxy
    return proxy_for(importlib.import_module(name.partition(".")[0]))


_WRITABLE_EXACT = (dict, list)
ANALYSIS_MODULE = "analysis"
"""``__name__`` of the code's globals, hence ``__module__`` of every class it defines."""


def make_write_guard(writable: tuple[type, ...]) -> Callable[[Any], Any]:
    """``_write_``: containers and data frames are writable, everything else is wrapped."""

    def guard(obj: Any) -> Any:
        if type(obj) in _WRITABLE_EXACT:
            return obj
        if not isinstance(obj, type) and (
            isinstance(obj, writable) or type(obj).__module__ == ANALYSIS_MODULE
        ):
            # Instances of classes the code defined itself are its own to change.
            return obj
        return full_write_guard(obj)

    return guard


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "&=": operator.iand,
    "|=": operator.ior,
    "^=": operator.ixor,
    "@=": operator.imatmul,
}


def inplacevar(op: str, target: Any, value: Any) -> Any:
    """``_inplacevar_``: the augmented assignments over ``operator.i*``."""
    func = _INPLACE.get(op)
    if func is None:
        raise SyntaxError(f"in-place operator {op} is not supported")
    return func(target, value)


def apply_call(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``_apply_``: calls with ``*args``/``**kwargs`` (the arguments are plain values)."""
    return func(*args, **kwargs)


class PrintBuffer:
    """All printed text of one run, capped."""

    def __init__(self, keep_chars: int, hard_limit: int = OUTPUT_HARD_LIMIT) -> None:
        self.keep_chars = keep_chars
        self.hard_limit = max(hard_limit, keep_chars)
        self.parts: list[str] = []
        self.size = 0

    def write(self, text: str) -> None:
        self.size += len(text)
        if self.size > self.hard_limit:
            raise OutputLimitError("Output limit exceeded")
        self.parts.append(text)

    def text(self) -> str:
        joined = "".join(self.parts)
        if len(joined) > self.keep_chars:
            return joined[: self.keep_chars] + TRUNCATION_NOTE
        return joined


def make_print_factory(buffer: PrintBuffer) -> Callable[..., Any]:
    """``_print_``: RestrictedPython builds one collector per scope; all of them share ``buffer``."""

    class Collector:
        def __init__(self, _getattr_: Any = None) -> None:
            self.buffer = buffer

        def write(self, text: str) -> None:
            self.buffer.write(str(text))

        def __call__(self) -> str:
            return self.buffer.text()

        def _call_print(self, *objects: Any, **kwargs: Any) -> None:
            sep = kwargs.get("sep")
            end = kwargs.get("end")
            sep = " " if sep is None else str(sep)
            end = "\n" if end is None else str(end)
            self.buffer.write(sep.join(str(o) for o in objects) + end)

    return Collector


def _denied_builtin(name: str) -> Callable[..., Any]:
    def stub(*_args: Any, **_kwargs: Any) -> Any:
        raise NameError(f"Call to '{name}' is not allowed")

    stub.__name__ = name
    return stub


def build_builtins() -> dict[str, Any]:
    """``safe_builtins`` plus the iteration helpers, the import hook and the named stubs."""
    result = {k: v for k, v in safe_builtins.items() if k != "_getattr_"}
    for name in EXTRA_BUILTINS:
        result[name] = getattr(builtins, name)
    for name in DENIED_BUILTINS:
        result[name] = _denied_builtin(name)
    result["__import__"] = guarded_import
    return result


def build_globals(
    data: Any,
    printer: PrintBuffer,
    writable: tuple[type, ...],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The globals one restricted run executes in."""
    glb: dict[str, Any] = {
        "__builtins__": build_builtins(),
        "__name__": ANALYSIS_MODULE,
        "_getattr_": guarded_getattr,
        "_getitem_": default_guarded_getitem,
        "_getiter_": default_guarded_getiter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_inplacevar_": inplacevar,
        "_apply_": apply_call,
        "__metaclass__": type,
        "_write_": make_write_guard(writable),
        "_print_": make_print_factory(printer),
        "data": data,
    }
    if extra:
        glb.update(extra)
    return glb


def preimport(names: Iterable[str] = BASE_IMPORTS) -> list[str]:
    """Import every allowed module now (zygote start), returning those that are missing."""
    missing = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing
