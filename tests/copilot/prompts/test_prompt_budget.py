"""Size budget: chat-mode instructions + the data tools' schemas + ``ask_user`` + the response
format ≤ 3,000 o200k tokens (55 % of upstream QDash's 5,441)."""

from __future__ import annotations

from qdash.settings import load_settings
from tests.support.prompt_budget import CHAT_PROMPT_TOKEN_BUDGET, chat_prompt_report, chat_prompt_size


def test_chat_prompt_and_tool_schemas_fit_the_token_budget() -> None:
    size = chat_prompt_size(load_settings())
    assert size.prompt_tokens > 0 and size.tool_tokens > 0 and size.format_tokens > 0
    assert CHAT_PROMPT_TOKEN_BUDGET == 3_000
    assert size.total <= CHAT_PROMPT_TOKEN_BUDGET, (size.prompt_tokens, size.tool_tokens, size.format_tokens)


def test_report_lines_name_the_target_and_ratio() -> None:
    lines = chat_prompt_report({})
    assert len(lines) == 3
    assert f"target <= {CHAT_PROMPT_TOKEN_BUDGET}" in lines[2] and "ratio" in lines[2]


def test_integer_ranges_are_text_and_still_enforced() -> None:
    from qdash.copilot.tools.registry import default_registry

    tools = {t["name"]: t for t in default_registry(load_settings()).definitions("responses")}
    last_n = tools["get_task_history"]["parameters"]["properties"]["last_n"]
    assert last_n == {"type": ["integer", "null"], "description": "1-50, default 5"}
