"""The digest of turns older than the history window: every turn kept as a line, facts first."""

from __future__ import annotations

from qdash.copilot.history import condense_history
from qdash.copilot.history_digest import DIGEST_HEADER, answer_facts, digest
from qdash.copilot.requests import HistoryEntry


def _turn(question: str, answer: str) -> list[HistoryEntry]:
    return [HistoryEntry(role="user", content=question), HistoryEntry(role="assistant", content=answer)]


def test_answer_facts_put_sentences_with_numbers_and_qubits_first() -> None:
    answer = "Here is what I found. Q16 has T1 = 42.7 μs. The chip looks fine overall."
    facts_first = "Q16 has T1 = 42.7 μs. Here is what I found. The chip looks fine overall."
    assert answer_facts(answer, 200) == facts_first
    assert answer_facts(answer, 25).endswith("…") and len(answer_facts(answer, 25)) <= 25


def test_older_turns_become_numbered_digest_lines_before_the_recent_window() -> None:
    history = [
        entry
        for i in range(8)
        for entry in _turn(f"question {i}", f"Filler sentence. Qubit {i} has T1 {40 + i}.5 μs.")
    ]
    out = condense_history(history, max_turns=3, max_chars=10_000, digest_chars=2_000)
    assert out[0].role == "user" and out[0].content.startswith(DIGEST_HEADER)
    lines = out[0].content.splitlines()[1:]
    assert [line.split(":")[0] for line in lines] == [f"- turn {i}" for i in range(1, 6)]
    assert "Q: question 0 → A: Qubit 0 has T1 40.5 μs." in lines[0]
    assert [e.content for e in out[1:] if e.role == "user"] == ["question 5", "question 6", "question 7"]


def test_without_a_digest_budget_older_turns_are_left_out_as_before() -> None:
    history = [entry for i in range(4) for entry in _turn(f"q{i}", "a")]
    out = condense_history(history, max_turns=2, max_chars=10_000)
    assert [e.content for e in out if e.role == "user"] == ["q2", "q3"]


def test_digest_shrinks_answers_before_it_leaves_any_turn_out_and_says_so() -> None:
    turns = [_turn(f"question number {i}", "Q4 T1 is 41.0 μs. " * 40) for i in range(30)]
    roomy = digest(turns, max_chars=30 * 200)
    assert roomy is not None and len(roomy.content) <= 30 * 200
    assert roomy.content.count("- turn ") == 30 and "left out" not in roomy.content
    tight = digest(turns, max_chars=600)
    assert tight is not None and len(tight.content) <= 600
    assert "left out (over the digest budget)" in tight.content
    assert tight.content.endswith("- turn 30: Q: question… → A: Q4 T1 is 41.0 μs.…")  # the newest survive
