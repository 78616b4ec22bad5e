"""Redaction rules, request-id binding and where log lines go."""

from __future__ import annotations

import json
import logging

import pytest

from qdash.logging import (
    REDACTED,
    bind_request,
    command_level,
    command_logging,
    configure_logging,
    get_logger,
    redact_processor,
    redact_text,
    unbind_request,
)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("key sk-proj-abcdefghijklmnop used", "sk-proj-abcdefghijklmnop"),
        ("Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl"),
        ("mongodb://admin:hunter2@db:27017/qdash", "hunter2"),
        ("mongodb+srv://u:p4ss@cluster/x", "p4ss"),
        ("GET /x?api_key=12345abc&y=1", "12345abc"),
        ("password=letmein retry", "letmein"),
    ],
)
def test_redact_text_masks_secrets(text: str, secret: str) -> None:
    masked = redact_text(text)
    assert secret not in masked
    assert REDACTED in masked


def test_plain_text_is_untouched() -> None:
    assert redact_text("T1 of Q16 is 45.2 μs (task_id=5b0c)") == "T1 of Q16 is 45.2 μs (task_id=5b0c)"


def test_processor_masks_secret_keys_and_nested_values() -> None:
    event = {
        "event": "call",
        "api_key": "anything",
        "headers": {"Authorization": "Bearer abcdefgh", "accept": "json"},
        "urls": ["mongodb://a:b@h/db", "http://ok"],
        "count": 3,
    }
    out = redact_processor(None, "info", dict(event))
    assert out["api_key"] == REDACTED
    assert out["headers"] == {"Authorization": REDACTED, "accept": "json"}
    assert out["urls"] == ["mongodb://***@h/db", "http://ok"]
    assert out["count"] == 3


def test_json_lines_on_stderr_carry_the_request_id(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", json_output=True)
    log = get_logger("qdash.test")
    tokens = bind_request(request_id="r-1")
    try:
        log.info("inside", detail="token=abcdef123")
        log.debug("filtered out by level")
    finally:
        unbind_request(tokens)
    log.info("outside")
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = [json.loads(line) for line in captured.err.splitlines() if line.startswith("{")]
    assert [line["event"] for line in lines] == ["inside", "outside"]
    assert lines[0]["request_id"] == "r-1" and lines[0]["logger_name"] == "qdash.test"
    assert "request_id" not in lines[1]
    assert "abcdef123" not in lines[0]["detail"]


def test_library_logs_are_redacted_too(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO")
    configure_logging("INFO")  # idempotent: one handler, not two
    logging.getLogger("uvicorn.error").warning("connect to mongodb://u:secretpw@host failed")
    err = capsys.readouterr().err
    assert "secretpw" not in err
    assert err.count("connect to mongodb://***@host failed") == 1


def test_each_request_is_logged_once() -> None:
    """``qdash serve`` order: uvicorn configures its loggers, then the app factory configures ours.
    uvicorn writes its own access line whenever ``uvicorn.access`` has a handler (its own or, by
    propagation, the root's); it must not, since the request-id middleware logs every request."""
    import uvicorn

    uvicorn.Config("qdash.api.app:create_app", log_config=None, access_log=False).configure_logging()
    configure_logging("INFO")
    assert not logging.getLogger("uvicorn.access").hasHandlers()
    assert logging.getLogger("uvicorn.error").hasHandlers()  # start-up and errors still shown


def test_a_command_keeps_its_level_when_it_builds_an_app(capsys: pytest.CaptureFixture[str]) -> None:
    """``qdash eval`` builds the API app in process; the factory configures logging from the settings
    (INFO) again, yet the command's WARNING holds until the command ends."""
    log = get_logger("qdash.test")
    with command_logging("WARNING", json_output=False):
        configure_logging("INFO")  # what create_app does
        log.info("noise in front of the table")
        logging.getLogger("qdash.stdlib").info("stdlib noise")
        log.warning("kept")
    configure_logging("INFO")
    log.info("after the command")
    err = capsys.readouterr().err
    assert "noise" not in err and "kept" in err and "after the command" in err


def test_http_clients_never_log_each_request(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("DEBUG")
    for name in ("httpx", "httpx2"):
        logging.getLogger(name).info('HTTP Request: POST http://x/v1/responses "HTTP/1.1 200 OK"')
    assert "HTTP Request" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("configured", "verbose", "level"),
    [
        ("INFO", False, "WARNING"),
        ("ERROR", False, "ERROR"),
        ("WARNING", True, "INFO"),
        ("DEBUG", True, "DEBUG"),
    ],
)
def test_command_level(configured: str, verbose: bool, level: str) -> None:
    assert command_level(configured, verbose) == level
