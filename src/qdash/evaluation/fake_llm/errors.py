"""Error bodies the fake answers with, word for word as the real servers send them.

Why a catalogue: tests assert on status, ``code``, ``param`` and message, so every rejection must be
built in one place from the documented templates; a validator only picks the rule and its values.
Each :class:`ApiError` carries the rule id so the request log can say which rule fired.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

INVALID = "invalid_request_error"


@dataclass
class ApiError(Exception):
    """One rejection: HTTP status, the ``error`` object and the rule that produced it."""

    status: int
    message: str
    param: str | None = None
    code: str | None = None
    type: str = INVALID
    rule: str = ""
    headers: dict[str, str] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        """The OpenAI envelope ``{"error": {message, type, param, code}}``."""
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def missing(path: str, rule: str = "R2") -> ApiError:
    return ApiError(
        400, f"Missing required parameter: '{path}'.", path, "missing_required_parameter", rule=rule
    )


def unknown_parameter(name: str) -> ApiError:
    return ApiError(400, f"Unknown parameter: '{name}'.", name, "unknown_parameter", rule="R1")


def invalid_type(path: str, expected: str, got: str) -> ApiError:
    return ApiError(
        400,
        f"Invalid type for '{path}': expected {expected}, but got {got} instead.",
        path,
        "invalid_type",
        rule="R17",
    )


def invalid_value(path: str, value: str, supported: list[str]) -> ApiError:
    quoted = [f"'{s}'" for s in supported]
    listed = " and ".join(quoted) if len(quoted) <= 2 else ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
    return ApiError(
        400, f"Invalid value: '{value}'. Supported values are: {listed}.", path, "invalid_value", rule="enum"
    )


def below_minimum(path: str, minimum: float, got: Any) -> ApiError:
    """Evidenced by the recorded http_error exchange (temperature -1)."""
    return ApiError(
        400,
        f"Invalid '{path}': decimal below minimum value. "
        f"Expected a value >= {minimum:g}, but got {got} instead.",
        path,
        "decimal_below_min_value",
        rule="min",
    )


def name_pattern(path: str, rule: str) -> ApiError:
    return ApiError(
        400,
        f"Invalid '{path}': string does not match pattern. "
        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        path,
        "invalid_value",
        rule=rule,
    )


def name_too_long(path: str, length: int) -> ApiError:
    return ApiError(
        400,
        f"Invalid '{path}': string too long. Expected a string with maximum length 64, "
        f"but got a string with length {length} instead.",
        path,
        "string_above_max_length",
        rule="R5",
    )


def function_schema(name: str, context: str, rule_text: str, param: str, rule: str) -> ApiError:
    return ApiError(
        400,
        f"Invalid schema for function '{name}': In context={context}, {rule_text}",
        param,
        "invalid_function_parameters",
        rule=rule,
    )


def format_schema(name: str, context: str, rule_text: str, param: str, rule: str) -> ApiError:
    return ApiError(
        400,
        f"Invalid schema for response_format '{name}': In context={context}, {rule_text}",
        param,
        "invalid_json_schema",
        rule=rule,
    )


def assistant_input_text(index: int, part: int) -> ApiError:
    return ApiError(
        400,
        "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.",
        f"input[{index}].content[{part}]",
        "invalid_value",
        rule="R8",
    )


def no_call_for_output(call_id: str) -> ApiError:
    return ApiError(
        400, f"No tool call found for function call output with call_id {call_id}.", "input", rule="R9"
    )


def no_output_for_call(call_id: str) -> ApiError:
    return ApiError(400, f"No tool output found for function call {call_id}.", "input", rule="R10")


def reasoning_without_follower(rs_id: str) -> ApiError:
    return ApiError(
        400,
        f"Item '{rs_id}' of type 'reasoning' was provided without its required following item.",
        "input",
        rule="R11",
    )


def item_without_reasoning(item_id: str, item_type: str, rs_id: str) -> ApiError:
    return ApiError(
        400,
        f"Item '{item_id}' of type '{item_type}' was provided without its required "
        f"'reasoning' item: '{rs_id}'.",
        "input",
        rule="R12",
    )


def wrong_id_prefix(index: int, value: str, prefix: str) -> ApiError:
    return ApiError(
        400,
        f"Invalid 'input[{index}].id': '{value}'. Expected an ID that begins with '{prefix}'.",
        f"input[{index}].id",
        "invalid_value",
        rule="R13",
    )


def empty_call_id(index: int) -> ApiError:
    return ApiError(
        400,
        f"Invalid 'input[{index}].call_id': empty string. "
        "Expected a string with minimum length 1, but got an empty string instead.",
        f"input[{index}].call_id",
        "empty_string",
        rule="R14",
    )


def previous_not_found(response_id: str) -> ApiError:
    return ApiError(
        400,
        f"Previous response with id '{response_id}' not found.",
        "previous_response_id",
        "previous_response_not_found",
        rule="R15",
    )


def not_persisted(item_id: str) -> ApiError:
    return ApiError(
        404,
        f"Item with id '{item_id}' not found. Items are not persisted when `store` is set to false. "
        "Try again with `store` set to true, or remove this item from your input.",
        "input",
        rule="R16",
    )


def model_not_found(model: str) -> ApiError:
    return ApiError(
        404,
        f"The model `{model}` does not exist or you do not have access to it.",
        None,
        "model_not_found",
        rule="R18",
    )


def invalid_json_body() -> ApiError:
    return ApiError(
        400,
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your "
        "HTTP library correctly. The OpenAI API expects a JSON payload, "
        "but what was sent was not valid JSON.)",
        rule="json",
    )


# --- Chat Completions -------------------------------------------------------------------------


def tool_without_calls(index: int) -> ApiError:
    return ApiError(
        400,
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
        "'tool_calls'.",
        f"messages.[{index}].role",
        rule="C1",
    )


def calls_without_tools(index: int, missing_ids: list[str]) -> ApiError:
    return ApiError(
        400,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(missing_ids),
        f"messages.[{index}].role",
        rule="C2",
    )


def tool_without_id(index: int) -> ApiError:
    return ApiError(
        400,
        "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
        f"messages.[{index}].tool_call_id",
        rule="C3",
    )


def only_with_tools(name: str, rule: str) -> ApiError:
    return ApiError(
        400,
        f"Invalid value for '{name}': '{name}' is only allowed when 'tools' are specified.",
        name,
        rule=rule,
    )


def unrecognized_argument(name: str) -> ApiError:
    return ApiError(400, f"Unrecognized request argument supplied: {name}", rule="C9")


def max_tokens_unsupported() -> ApiError:
    return ApiError(
        400,
        "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead.",
        "max_tokens",
        "unsupported_parameter",
        rule="C10",
    )


def message_name_pattern(index: int) -> ApiError:
    return name_pattern(f"messages[{index}].name", "C11")


# --- Transport-level bodies ---------------------------------------------------------------------


def rate_limited(model: str) -> dict[str, Any]:
    message = (
        f"Rate limit reached for {model} in organization org-fake on tokens per min (TPM): "
        "Limit 30000, Used 29000, Requested 2000. Please try again in 2s. "
        "Visit https://platform.openai.com/account/rate-limits to learn more."
    )
    return ApiError(429, message, code="rate_limit_exceeded", type="tokens").body()


def server_error() -> dict[str, Any]:
    message = "The server had an error while processing your request. Sorry about that!"
    return ApiError(500, message, type="server_error").body()


def overloaded() -> dict[str, Any]:
    message = "Model temporarily overloaded"
    return ApiError(503, message, code="server_is_overloaded", type="service_unavailable_error").body()


def quota_exceeded() -> dict[str, Any]:
    message = "You exceeded your current quota, please check your plan and billing details."
    return ApiError(429, message, code="insufficient_quota", type="insufficient_quota").body()


def default_body(status: int, model: str) -> dict[str, Any]:
    """The documented body for a bare ``http_error`` status."""
    if status == 429:
        return rate_limited(model)
    if status == 503:
        return overloaded()
    if status >= 500:
        return server_error()
    return ApiError(status, f"fake http_error {status}").body()


def mismatch(reason: str) -> ApiError:
    """A script problem, not an API error: 500 that the SDK must not retry."""
    return ApiError(
        500,
        f"fake: {reason}",
        type="fake_script_mismatch",
        rule="mismatch",
        headers={"x-should-retry": "false"},
    )


_ADDITIONAL = "'additionalProperties' is required to be supplied and to be false."
_RULES: dict[str, Callable[[dict[str, Any]], ApiError]] = {
    "R1": lambda v: unknown_parameter(v.get("name", "messages")),
    "R2": lambda v: missing(v.get("path", "model")),
    "R3": lambda v: missing(f"tools[{v.get('index', 0)}].name", rule="R3"),
    "R4": lambda v: name_pattern(f"tools[{v.get('index', 0)}].name", "R4"),
    "R5": lambda v: name_too_long(f"tools[{v.get('index', 0)}].name", int(v.get("length", 65))),
    "R6": lambda v: function_schema(v.get("name", "f"), "()", _ADDITIONAL, "tools[0].parameters", "R6"),
    "R7": lambda v: format_schema(
        v.get("name", "analysis_response"), "()", _ADDITIONAL, "text.format.schema", "R7"
    ),
    "R8": lambda v: assistant_input_text(int(v.get("index", 1)), int(v.get("part", 0))),
    "R9": lambda v: no_call_for_output(v.get("call_id", "call_1")),
    "R10": lambda v: no_output_for_call(v.get("call_id", "call_1")),
    "R11": lambda v: reasoning_without_follower(v.get("id", "rs_1")),
    "R12": lambda v: item_without_reasoning(
        v.get("id", "fc_1"), v.get("item_type", "function_call"), v.get("rs_id", "rs_1")
    ),
    "R13": lambda v: wrong_id_prefix(int(v.get("index", 1)), v.get("value", "call_1"), v.get("prefix", "fc")),
    "R14": lambda v: empty_call_id(int(v.get("index", 1))),
    "R15": lambda v: previous_not_found(v.get("id", "resp_1")),
    "R16": lambda v: not_persisted(v.get("id", "rs_1")),
    "R17": lambda v: invalid_type(v.get("path", "max_output_tokens"), "an integer", "an object"),
    "R18": lambda v: model_not_found(v.get("model", "gpt-5")),
    "C1": lambda v: tool_without_calls(int(v.get("index", 1))),
    "C2": lambda v: calls_without_tools(int(v.get("index", 1)), list(v.get("ids", ["call_1"]))),
    "C3": lambda v: tool_without_id(int(v.get("index", 1))),
    "C4": lambda v: only_with_tools("parallel_tool_calls", "C4"),
    "C5": lambda v: only_with_tools("tool_choice", "C5"),
    "C6": lambda v: name_pattern(f"tools[{v.get('index', 0)}].function.name", "C6"),
    "C7": lambda v: function_schema(
        v.get("name", "f"), "()", _ADDITIONAL, f"tools[{v.get('index', 0)}].function.parameters", "C7"
    ),
    "C8": lambda v: format_schema(
        v.get("name", "analysis_response"), "()", _ADDITIONAL, "response_format", "C8"
    ),
    "C9": lambda v: unrecognized_argument(v.get("name", "input")),
    "C10": lambda v: max_tokens_unsupported(),
    "C11": lambda v: message_name_pattern(int(v.get("index", 1))),
}


def rule_error(rule: str, **values: Any) -> ApiError:
    """The exact error of a rule id (``R1``…``R18``, ``C1``…``C11``) with its placeholders filled."""
    if rule not in _RULES:
        raise ValueError(f"unknown rule {rule!r}; known: {sorted(_RULES)}")
    return _RULES[rule](values)


def missing_thought_signature(function: str, position: int) -> ApiError:
    """Gemini's refusal of a current-turn call sent back without its ``thought_signature``.

    The text is Gemini's, as reported publicly; Gemini wraps it as ``[{"error": {code, message,
    status}}]``, here it comes in the OpenAI envelope. ``position`` is the message index (assumed:
    the reports do not say how Gemini counts, so tests do not assert on it).
    """
    return ApiError(
        400,
        "Function call is missing a thought_signature in functionCall parts. This is required for tools "
        "to work correctly, and missing thought_signature may lead to degraded model performance. "
        f"Additional data, function call `default_api:{function}` , position {position}. Please refer "
        "to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
        rule="gemini_thought_signature",
    )
