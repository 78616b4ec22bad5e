"""A 60-turn investigation stays within a small model's context and still knows what turn 3 found.

The dashboard resends the whole conversation each turn. Turns beyond the history window become the
digest (``history_digest``), so the request stays bounded while the facts of early answers remain
visible. The scripted model answers the last question only from what the request shows it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import bpe_openai

from qdash.copilot.requests import ChatRequest, HistoryEntry
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.evaluation.fake_llm.records import RecordedRequest

from .conftest import AssistantFactory
from .test_assistant import DEMO, Final, blocks, collect, fake_settings, terminal

TURNS = 60
CONTEXT_TOKENS = 16_000
"""A small local model's context window (e.g. a 16k Ollama model); the whole request must fit."""
FACT = re.compile(r"T1 of Q16 was ([\d.]+) μs")


def _answer(turn: int) -> str:
    if turn == 3:
        return "I checked the latest CheckT1 run. T1 of Q16 was 42.7 μs, below the 50 μs line."
    # A long, mostly narrative answer with its own numbers, as an investigation produces.
    return f"Turn {turn}: Q{turn % 64} looked at; readout fidelity {90 + turn % 9}.{turn % 7} %. " + (
        "The fit converged and the residuals look flat across the sweep. " * 20
    )


def _model(request: RecordedRequest) -> str:
    text = json.dumps(request.body.get("input"), ensure_ascii=False)
    if "what T1 did you report for Q16" in request.last_user_text():
        found = FACT.search(text)
        return blocks(f"You were told {found.group(1)} μs." if found else "I do not know any more.")
    turn = int(re.search(r"question (\d+)", request.last_user_text()).group(1))  # type: ignore[union-attr]
    return blocks(_answer(turn))


async def test_sixty_turns_stay_in_context_and_remember_turn_three(
    demo_lab: Any, fake_llm: FakeLLMServer, tmp_path: Any, make_assistant: AssistantFactory
) -> None:
    fake_llm.script(*([_model] * TURNS))
    assistant = make_assistant(demo_lab.db, fake_settings(fake_llm, tmp_path))
    encoding = bpe_openai.get_encoding("o200k_base")
    history: list[HistoryEntry] = []
    sizes: list[int] = []
    final: Any = None
    for turn in range(1, TURNS + 1):
        message = (
            "Going back to the start: what T1 did you report for Q16?"
            if turn == TURNS
            else f"question {turn}: please look at the chip again and tell me what changed " + "x" * 200
        )
        request = ChatRequest(message=message, conversation_history=history)
        events = await collect(assistant.chat(DEMO, request))
        final = terminal(events)
        assert isinstance(final, Final)
        answer = json.dumps(final.result.wire())
        history += [HistoryEntry(role="user", content=message)]
        history += [HistoryEntry(role="assistant", content=answer)]
        sizes.append(len(encoding.encode(json.dumps(fake_llm.last_request.body, ensure_ascii=False))))
    assert final.result.wire()["blocks"][0]["content"] == "You were told 42.7 μs."
    assert max(sizes) <= CONTEXT_TOKENS, f"largest request {max(sizes)} o200k tokens"
    assert sizes[-1] < 3 * sizes[9], "the request must stop growing with the conversation"
