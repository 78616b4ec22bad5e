"""Token budget of what every chat-mode request repeats: the fixed instructions, the tool schemas and
the response-format schema (``text.format``).

Why: all three are sent with every model request of every turn, so their size is paid again and
again; ≤ 3,000 o200k tokens is 55 % of what upstream QDash sends (5,441 counted from its source),
``ask_user`` included (integer ranges are written as ``"1-50, default 10"`` in the description,
``tools/schema.py``). It was 2,720 (half); raised so that tools can say what their parameters do and
take a window (issue 29: outputs a model can take at their word).
Counted offline with bpe-openai, the tool schemas as the compact JSON of the Responses shape and the
format as the ``text`` object the Responses adapter sends. Used by ``bench/loop.py`` (report) and
``tests/copilot/prompts/test_prompt_budget.py`` (the limit).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import bpe_openai

from qdash.copilot.answer import OUTPUT_FORMAT_NAME, OUTPUT_SCHEMA
from qdash.copilot.prompts.chat import build_chat_instructions
from qdash.copilot.tools.registry import default_registry
from qdash.settings import Settings, load_settings

CHAT_PROMPT_TOKEN_BUDGET = 3_000
"""o200k tokens for the chat-mode instructions + the eighteen tool schemas + ``ask_user`` + the
response format."""


@dataclass(frozen=True)
class PromptSize:
    """o200k tokens of the fixed chat-mode instructions, the tool schemas and the response format."""

    prompt_tokens: int
    tool_tokens: int
    tool_chars: int
    format_tokens: int

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.tool_tokens + self.format_tokens

    @property
    def ratio(self) -> float:
        """``total / CHAT_PROMPT_TOKEN_BUDGET``; at most 1.0 when within budget."""
        return self.total / CHAT_PROMPT_TOKEN_BUDGET


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def chat_prompt_size(settings: Settings) -> PromptSize:
    """Measure the chat-mode instructions, the tools a chat request carries (the default registry's,
    ``ask_user`` last) and the response format."""
    encoding = bpe_openai.get_encoding("o200k_base")
    prompt = build_chat_instructions(settings)
    chat_tools = default_registry(settings).definitions("responses")
    tools = _compact(chat_tools)
    text_format = _compact(
        {
            "format": {
                "type": "json_schema",
                "name": OUTPUT_FORMAT_NAME,
                "schema": OUTPUT_SCHEMA,
                "strict": False,
            }
        }
    )
    return PromptSize(
        len(encoding.encode(prompt)),
        len(encoding.encode(tools)),
        len(tools),
        len(encoding.encode(text_format)),
    )


def chat_prompt_report(first_request_body: dict[str, Any] | None = None) -> list[str]:
    """Report lines for ``bench/loop.py``'s ``EXTRA_REPORTS`` (the bench's own request is not used:
    it sends a stub prompt and no-op tools; this measures what chat mode sends)."""
    size = chat_prompt_size(load_settings())
    return [
        f"chat-mode prompt: {size.prompt_tokens} o200k tokens (fixed instructions)",
        f"tool schemas: {size.tool_tokens} o200k tokens ({size.tool_chars} chars); "
        f"response format: {size.format_tokens} o200k tokens",
        f"prompt + tools + format: {size.total} o200k tokens, target <= {CHAT_PROMPT_TOKEN_BUDGET}, "
        f"ratio {size.ratio:.3f}",
    ]
