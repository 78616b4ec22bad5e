"""Prompt building: stable chat prompt, direction-correct thresholds, analysis context rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdash.copilot.prompts import (
    AnalysisContext,
    build_analysis_instructions,
    build_chat_instructions,
    chat_context_note,
    load_task_knowledge,
    render_analysis_context,
)
from qdash.settings import PROJECT_ROOT, ConfigError, load_settings

CONFIG = PROJECT_ROOT / "config"


def test_chat_prompt_is_stable_and_has_the_parts() -> None:
    settings = load_settings(copilot={"response_language": "ja"})
    text = build_chat_instructions(settings)
    assert text == build_chat_instructions(settings)
    assert "Write every answer in Japanese" in text
    assert "- anharmonicity [GHz] (lower is better): excellent ≤ -0.32, good ≤ -0.28, bad > -0.25" in text
    assert "one get_chip_summary or get_chip_parameter_timeseries call" in text
    assert '"blocks"' in text


def test_chat_context_note_preloads_qubit_params() -> None:
    note = chat_context_note("64Qv3", "16", {"t1": {"value": 45.2, "unit": "μs"}})
    assert note.startswith("Context: chip 64Qv3, qubit 16.")
    assert '"unit":"μs"' in note
    assert chat_context_note(None, None, None) == ""


def test_task_knowledge_covers_the_demo_tasks() -> None:
    knowledge = load_task_knowledge(CONFIG)
    daily = [
        "CheckRabi",
        "CreateHPIPulse",
        "CheckHPIPulse",
        "CreatePIPulse",
        "CheckPIPulse",
        "CheckT1",
        "CheckT2Echo",
        "CheckRamsey",
        "CreateDRAGHPIPulse",
        "CheckDRAGHPIPulse",
        "CreateDRAGPIPulse",
        "CheckDRAGPIPulse",
        "ReadoutClassification",
        "RandomizedBenchmarking",
        "X90InterleavedRandomizedBenchmarking",
        "CheckCrossResonance",
        "CreateZX90",
        "CheckZX90",
        "CheckBellState",
        "CheckBellStateTomography",
        "ZX90InterleavedRandomizedBenchmarking",
    ]
    assert set(daily) <= set(knowledge)


def test_analysis_prompt_has_knowledge_and_images() -> None:
    settings = load_settings()
    knowledge = load_task_knowledge(CONFIG)["CheckT1"]
    text = build_analysis_instructions(settings, "CheckT1", knowledge, with_images=True)
    assert "two-level-system" in text and "Images:" in text
    assert "Images:" not in build_analysis_instructions(settings, "CheckT1", None, with_images=False)


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
