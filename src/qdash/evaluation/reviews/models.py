"""The models of the review suite: a text-only stand-in to build prompts, and the scripted reviewer.

The scripted reviewer answers on the fake LLM server (real openai SDK) and decides **only from the
request it receives**, by one documented rule (``rule="prompt"``):

1. ``FAIL`` when the guard findings say the decision cannot be less severe than ``FAIL``, or the
   result's header says ``status failed``;
2. ``REVIEW`` when the guard findings name any other floor, or an output parameter's value shown in
   ``Output parameters: {…}`` lies past the ``bad`` threshold the system prompt lists for it
   (``- t1 [μs]: … bad < 20``);
3. ``PASS`` otherwise.

So it catches what the prompt shows and nothing more: its recall is bounded by what ``visible`` mode
finds in the prompts. ``rule="pass"`` accepts everything and ``rule="flag"`` flags everything (the
bounds a grading test checks).
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from qdash.evaluation.attempts import with_model
from qdash.models.ai_review import Decision, Label, Verdict
from qdash.settings import ModelSettings, Settings

if TYPE_CHECKING:  # the fake LLM server is test support: imported only where it runs (modes.py)
    from qdash.evaluation.fake_llm.records import RecordedRequest

Rule = Literal["prompt", "pass", "flag"]
PROMPT_ALIAS = "eval-review-prompt"
FLOOR = re.compile(r"cannot be less severe than (FAIL|REVIEW|PASS_WITH_NOTE)")
FAILED_HEADER = re.compile(r"^Result under analysis: .*, status failed\b", re.MULTILINE)
OUTPUTS = re.compile(r"^Output parameters: (\{.*\})$", re.MULTILINE)
THRESHOLD = re.compile(r"^- ([\w, ]+) \[[^\]]*\]: .*\bbad ([<>]) (-?\d[\d.]*(?:e[-+]?\d+)?)", re.MULTILINE)
LABELS: dict[Decision, Label] = {
    "FAIL": "ANOMALY",
    "REVIEW": "SUSPICIOUS",
    "PASS_WITH_NOTE": "CORRECT",
    "PASS": "CORRECT",
}


def prompt_settings(settings: Settings) -> Settings:
    """``settings`` with one text-only model: enough for a Reviewer to build prompts, never asked."""
    model = ModelSettings(
        name="gpt-4.1-mini", base_url="http://127.0.0.1:9/v1", api_key_env=None, multimodal=False
    )
    return with_model(settings, PROMPT_ALIAS, model)


def _system_text(request: RecordedRequest) -> str:
    body = request.body
    texts = [str(body.get("instructions") or "")]
    for entry in body.get("messages") or body.get("input") or []:
        if isinstance(entry, dict) and entry.get("role") in ("system", "developer"):
            content = entry.get("content")
            texts.append(content if isinstance(content, str) else json.dumps(content))
    return "\n".join(texts)


def bad_limits(system: str) -> dict[str, tuple[Callable[[float, float], bool], float]]:
    """parameter → (comparison, bound) of its bad class, from the threshold lines of a prompt."""
    limits: dict[str, tuple[Callable[[float, float], bool], float]] = {}
    for names, side, raw in THRESHOLD.findall(system):
        compare: Callable[[float, float], bool] = operator.lt if side == "<" else operator.gt
        for name in names.split(","):
            limits[name.strip()] = (compare, float(raw))
    return limits


def shown_outputs(user: str) -> dict[str, float]:
    """The numeric output values of the ``Output parameters`` line."""
    match = OUTPUTS.search(user)
    if match is None:
        return {}
    values: dict[str, float] = {}
    for name, entry in json.loads(match.group(1)).items():
        value = entry.get("value") if isinstance(entry, dict) else entry
        if isinstance(value, int | float) and not isinstance(value, bool):
            values[str(name)] = float(value)
    return values


def decide(system: str, user: str) -> Verdict:
    """Rule ``prompt`` (module docstring) on a system prompt and a user turn."""
    outputs = shown_outputs(user)
    limits = bad_limits(system)
    past = sorted(
        name for name, value in outputs.items() if name in limits and limits[name][0](value, limits[name][1])
    )
    floor = FLOOR.search(user)
    decision: Decision = "PASS"
    if FAILED_HEADER.search(user) or (floor and floor.group(1) == "FAIL"):
        decision = "FAIL"
    elif floor or past:
        decision = "REVIEW"
    why = f"past the bad threshold: {', '.join(past)}" if past else "as the guard findings say"
    return Verdict(
        decision=decision,
        label=LABELS[decision],
        accepted_parameters=[] if decision != "PASS" else sorted(outputs),
        questioned_parameters=past,
        reason="Values within the thresholds and no guard finding." if decision == "PASS" else why,
        closest_knowledge_case="none",
        suggested_labels=[],
        recommended_action="Use the values." if decision == "PASS" else "Look at the figure.",
        note="",
    )


class ScriptedReviewer:
    """A fake-server responder that answers every review request with a verdict by ``rule``."""

    def __init__(self, rule: Rule = "prompt") -> None:
        self.rule = rule

    def __call__(self, request: RecordedRequest) -> str:
        user = "\n".join(request.user_texts())
        verdict = decide(_system_text(request), user)
        if self.rule != "prompt":
            decision: Decision = "PASS" if self.rule == "pass" else "REVIEW"
            verdict = verdict.model_copy(update={"decision": decision, "label": LABELS[decision]})
        return verdict.model_dump_json()
