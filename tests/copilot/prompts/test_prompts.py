"""Prompt building: stable chat prompt, direction-correct thresholds, analysis context rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdash.copilot.prompts.analysis import (
    ANALYSIS_PROMPT,
    AnalysisContext,
    images_note,
    render_analysis_context,
)
from qdash.copilot.prompts.chat import build_chat_instructions, chat_context_note
from qdash.copilot.prompts.knowledge import load_task_knowledge
from qdash.demo.catalogue import FULL_1Q_ORDER, FULL_2Q_ORDER
from qdash.settings import ConfigError, load_settings

PACKAGED_ONLY = Path(__file__).parent / "no-config-dir"  # absent: every file comes from the package


def test_chat_prompt_is_stable_and_has_the_parts() -> None:
    settings = load_settings(copilot={"response_language": "ja"})
    text = build_chat_instructions(settings)
    assert text == build_chat_instructions(settings)
    assert "Write every answer in Japanese" in text
    assert "grades (the lab's thresholds)" in text  # chat-mode tools report grades and thresholds
    analysis = ANALYSIS_PROMPT.instructions(settings, "CheckT1", None, with_images=False)
    assert "- anharmonicity [MHz]: excellent ≤ -320, good ≤ -280, bad > -250" in analysis
    assert "one get_chip_summary or get_chip_parameter_timeseries call" in text
    assert '"blocks"' in text


def test_chat_context_note_preloads_qubit_params() -> None:
    note = chat_context_note("64Qv3", "16", {"t1": {"value": 45.2, "unit": "μs"}})
    assert note.startswith("Context: chip 64Qv3, qubit 16.")
    assert '"unit":"μs"' in note
    assert chat_context_note(None, None, None) == ""


MEASURED_ONLY = {
    "CheckReadoutFrequency",
    "CheckT1Average",
    "CheckT2EchoAverage",
    "Check1QGateCoherenceLimit",
    "Check2QGateCoherenceLimit",
}
"""Demo tasks without a knowledge entry: averages, coherence limits and the readout frequency."""


def test_task_knowledge_covers_the_demo_tasks() -> None:
    knowledge = load_task_knowledge(PACKAGED_ONLY)
    assert set(FULL_1Q_ORDER + FULL_2Q_ORDER) - MEASURED_ONLY <= set(knowledge)


def test_analysis_prompt_has_knowledge_and_images() -> None:
    settings = load_settings()
    knowledge = load_task_knowledge(PACKAGED_ONLY)["CheckT1"]
    text = ANALYSIS_PROMPT.instructions(settings, "CheckT1", knowledge, with_images=True)
    assert "two-level-system" in text and "Images:" in text
    assert "Images:" not in ANALYSIS_PROMPT.instructions(settings, "CheckT1", None, with_images=False)


def test_analysis_context_renders_facts() -> None:
    context = AnalysisContext(
        task_name="CheckT1",
        chip_id="64Qv3",
        qid="16",
        execution_id="20260227-001",
        task_id="t-1",
        status="failed",
        message="fit R² 0.2",
        output_parameters={"t1": {"value": 8.1, "unit": "μs"}},
    )
    text = render_analysis_context(context)
    assert "status failed (fit R² 0.2)" in text
    assert 'Output parameters: {"t1":{"value":8.1,"unit":"μs"}}' in text
    assert "Neighbour qubits" not in text


def test_bad_knowledge_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "task_knowledge.yaml").write_text("CheckT1:\n  summary: x\n  bogus: 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"CheckT1\.bogus"):
        load_task_knowledge(tmp_path)


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ("[{alt: x}]", r"CheckT1\.expected_images\.0\.alt_text"),
        ('["just a string"]', r"CheckT1\.expected_images\.0"),
        ('[{alt_text: ""}]', r"CheckT1\.expected_images\.0\.alt_text"),
        ("{alt_text: x}", r"CheckT1\.expected_images"),
    ],
)
def test_malformed_expected_images_name_the_task(tmp_path: Path, entry: str, key: str) -> None:
    text = f"CheckT1:\n  summary: x\n  expected_images: {entry}\n"
    (tmp_path / "task_knowledge.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=key) as caught:
        load_task_knowledge(tmp_path)
    assert "expected_images: a list of {alt_text: ...}" in str(caught.value)


def test_images_note_names_the_references_after_the_experiment_figure() -> None:
    note = images_note("CheckT1", 1, ["Clean decay.", "Second."])
    assert note.startswith("Attached images: 1 experiment figure(s) of this result first, then 2 reference")
    assert "good CheckT1 result (ideal examples, not this qubit's data)" in note
    assert note.endswith("data):\n- image 2: Clean decay.\n- image 3: Second.")
    alone = images_note("CheckT1", 0, ["Clean decay."])
    assert alone.startswith("Attached images: no experiment figure, only 1 reference") and "image 1:" in alone
    assert images_note("CheckT1", 1, []) == ""
