"""Structured logging (structlog) with request ids and secret redaction.

Why redaction here and not at call sites: a key that slips into an exception message or a URL is
still masked, whatever code logged it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import MutableMapping
from typing import Any

import structlog

_SECRET_KEYS = re.compile(r"(api[_-]?key|token|secret|password|authorization|cookie)", re.IGNORECASE)
_SECRET_VALUES = [
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)bearer\s+[A-Za-z0-9._\-]{6,}"),
    re.compile(r"(mongodb(?:\+srv)?://)[^@/\s]+@"),
]
REDACTED = "***"


def redact_text(text: str) -> str:
    """Mask API keys, bearer tokens and URI credentials inside free text."""
    text = _SECRET_VALUES[0].sub(REDACTED, text)
    text = _SECRET_VALUES[1].sub("Bearer " + REDACTED, text)
    return _SECRET_VALUES[2].sub(r"\1" + REDACTED + "@", text)


def _redact_value(key: str, value: Any) -> Any:
    if _SECRET_KEYS.search(key):
        return REDACTED
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redact_value(str(k), v) for k, v in value.items()}
    return value


def redact_processor(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: every key and string value passes through the redaction rules."""
    for key in list(event_dict):
        event_dict[key] = _redact_value(key, event_dict[key])
    return event_dict


def configure_logging(level: str = "INFO", json_output: bool = False) -> None:
    """Set up structlog once for the process (CLI and server call it at start-up)."""
    renderer: Any = structlog.processors.JSONRenderer() if json_output else structlog.dev.ConsoleRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redact_processor,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        cache_logger_on_first_use=True,
    )


def get_logger(name: str) -> Any:
    """A structlog logger bound to ``name`` (request ids come from contextvars)."""
    return structlog.get_logger(name)
