"""SDK exceptions → ModelError: codes, retryability, safe details."""

from __future__ import annotations

import httpx2
import openai

from qdash.copilot.engine.providers.errors import from_openai_error, retry_after_seconds, safe_detail


def status_error(
    status: int, body: dict[str, object], headers: dict[str, str] | None = None
) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/responses")
    response = httpx2.Response(status, json=body, headers=headers or {}, request=request)
    classes = {400: openai.BadRequestError, 429: openai.RateLimitError, 500: openai.InternalServerError,
               401: openai.AuthenticationError}  # fmt: skip
    error = body.get("error")
    message = error.get("message") if isinstance(error, dict) else "x"
    # Like the SDK: the exception's body is the inner ``error`` object.
    return classes[status](f"Error code: {status} - {message}", response=response, body=error)


def test_rate_limit_keeps_retry_after_and_scrubs_urls() -> None:
    body = {"error": {"message": "Rate limit reached. Visit https://platform.openai.com/account/rate-limits",
                      "type": "tokens", "param": None, "code": "rate_limit_exceeded"}}  # fmt: skip
    error = from_openai_error(status_error(429, body, {"retry-after-ms": "250"}), during_stream=False)
    assert error.kind == "rate_limited" and error.retry_after == 0.25 and not error.retryable
    assert "https://" not in error.detail and "<url>" in error.detail


def test_quota_is_not_reported_as_a_retryable_rate_limit() -> None:
    quota = "You exceeded your current quota"
    code = "insufficient_quota"
    body = {"error": {"message": quota, "type": code, "param": None, "code": code}}
    error = from_openai_error(status_error(429, body), during_stream=False)
    assert error.kind == "model_error"


def test_auth_and_server_errors() -> None:
    leaked = {"error": {"message": "Incorrect API key provided: sk-abcdefghijkl"}}
    auth = from_openai_error(status_error(401, leaked), during_stream=False)
    assert auth.kind == "model_error" and "sk-" not in auth.detail
    server = from_openai_error(status_error(500, {"error": {"message": "boom"}}), during_stream=False)
    assert server.kind == "model_unavailable" and server.detail == "The model server failed: boom"


def test_timeouts_mid_stream_are_retryable_for_the_loop() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/responses")
    assert from_openai_error(openai.APITimeoutError(request), during_stream=True).retryable
    assert not from_openai_error(openai.APITimeoutError(request), during_stream=False).retryable


def test_helpers() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({}) is None
    assert safe_detail("key sk-ABCDEFGHIJKLMNOP at http://x.y/z") == "key *** at <url>"
