"""Structured logging (structlog) with request ids and secret redaction.

Why redaction here and not at call sites: a key that slips into an exception message or a URL is
still masked, whatever code logged it. Why stderr: ``qdash doctor``/``qdash tools`` print their
results on stdout, and a server's logs belong to stderr (docker and systemd collect both). The
commands other than ``serve`` log warnings and errors only unless ``-v`` (``qdash.cli``); the HTTP
clients' one line per request (httpx, httpx2: every model call) is never logged below WARNING.

Request ids travel in structlog's contextvars: ``bind_request(request_id=…)`` at the edge of a request
(the API middleware) and every log line inside that request carries it, including lines logged in
worker threads started with a copied context (FastAPI's threadpool does that).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import structlog

_SECRET_KEYS = re.compile(r"(api[_-]?key|token|secret|password|authorization|cookie)", re.IGNORECASE)
_SECRET_VALUES = [
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)bearer\s+[A-Za-z0-9._\-~+/=]{6,}"),
    re.compile(r"(mongodb(?:\+srv)?://)[^@/\s]+@"),
    # key=value pairs in URLs, query strings and messages: ?api_key=…, &token=…, password=…
    re.compile(r"(?i)\b((?:api[_-]?key|access[_-]?token|token|secret|password)=)[^&\s\"']+"),
]
REDACTED = "***"


def redact_text(text: str) -> str:
    """Mask API keys, bearer tokens, URI credentials and secret query parameters inside free text."""
    text = _SECRET_VALUES[0].sub(REDACTED, text)
    text = _SECRET_VALUES[1].sub("Bearer " + REDACTED, text)
    text = _SECRET_VALUES[2].sub(r"\1" + REDACTED + "@", text)
    return _SECRET_VALUES[3].sub(r"\1" + REDACTED, text)


def _redact_value(key: str, value: Any) -> Any:
    if _SECRET_KEYS.search(key):
        return REDACTED
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redact_value(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value(key, v) for v in value]
    return value


def redact_processor(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: every key and string value passes through the redaction rules."""
    for key in list(event_dict):
        event_dict[key] = _redact_value(key, event_dict[key])
    return event_dict


_command = {"floor": logging.NOTSET}
"""The least severe level logged while a command runs (``command_logging``); NOTSET outside one."""


def configure_logging(level: str = "INFO", json_output: bool = False) -> None:
    """Set up structlog (and the stdlib root logger uvicorn uses) once for the process.

    Idempotent: the CLI and the app factory may both call it. Inside ``command_logging`` nothing
    below the command's level is logged, whatever ``level`` says.
    """
    numeric = max(logging.getLevelName(level), _command["floor"])
    renderer: Any = (
        structlog.processors.JSONRenderer() if json_output else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redact_processor,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )
    root = logging.getLogger()
    root.setLevel(numeric)
    if not any(isinstance(h, _StderrHandler) for h in root.handlers):
        handler = _StderrHandler()
        handler.setFormatter(_RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    for name in _SERVER_LOGGERS:
        # uvicorn's default dictConfig (e.g. an embedding app's own uvicorn.run) gives these loggers
        # handlers of their own that bypass redaction; route them through the root handler instead.
        server_logger = logging.getLogger(name)
        server_logger.handlers.clear()
        server_logger.propagate = True
    # Each request is logged once, by the request-id middleware (``qdash.access``, with the request
    # id). uvicorn writes its own access line whenever this logger has a handler, its own or the
    # root's by propagation, so it gets neither.
    access = logging.getLogger("uvicorn.access")
    access.handlers.clear()
    access.propagate = False
    for name in _REQUEST_LOGGERS:
        logging.getLogger(name).setLevel(max(numeric, logging.WARNING))


@contextmanager
def command_logging(level: str, json_output: bool) -> Iterator[None]:
    """Logging at ``level`` for the whole of a command, also after the command builds the app in its
    own process (``qdash eval`` does), whose factory configures logging from the settings again."""
    configure_logging(level, json_output)
    _command["floor"] = logging.getLevelName(level)
    try:
        yield
    finally:
        _command["floor"] = logging.NOTSET


def command_level(configured: str, verbose: bool) -> str:
    """The log level of a command (not ``serve``): warnings and errors only, as its output is what the
    reader wants; with ``-v`` the configured level, INFO at the least."""
    if verbose:
        return min(configured, "INFO", key=logging.getLevelName)
    return max(configured, "WARNING", key=logging.getLevelName)


_SERVER_LOGGERS = ("uvicorn", "uvicorn.error")
_REQUEST_LOGGERS = ("httpx", "httpx2")
"""They log every HTTP request at INFO (``HTTP Request: POST …/responses "HTTP/1.1 200 OK"``)."""


def _stderr_logger(*_args: Any) -> structlog.PrintLogger:
    """A logger on the *current* ``sys.stderr`` (test capture and reloaders swap it)."""
    return structlog.PrintLogger(sys.stderr)


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """stdlib handler on the current ``sys.stderr``, for the same reason."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        """Ignore the stream ``StreamHandler.__init__`` sets."""


class _RedactingFormatter(logging.Formatter):
    """Library logs (uvicorn, httpx) get the same masking as ours."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_text(super().format(record))


def bind_request(**values: Any) -> Any:
    """Bind values (e.g. ``request_id``) to every log line of the current context; returns tokens
    for ``unbind_request``."""
    return structlog.contextvars.bind_contextvars(**values)


def unbind_request(tokens: Any) -> None:
    structlog.contextvars.reset_contextvars(**tokens)


def get_logger(name: str) -> Any:
    """A structlog logger bound to ``name`` (request ids come from contextvars)."""
    return structlog.get_logger(logger_name=name)
