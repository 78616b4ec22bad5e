"""The oracle: computed from raw documents and the generator's stories, for any seed and end date."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pymongo.database import Database

from qdash.demo import DemoSpec, seed_demo
from qdash.evaluation import EvalLab, load_questions
from qdash.evaluation.oracle.answers import classify
from qdash.evaluation.truth import Selection
from qdash.settings import ScoreThreshold, load_settings

T1 = ScoreThreshold(unit="μs", bad=20, good=50, excellent=100)
ANHARMONICITY = ScoreThreshold(unit="GHz", bad=-0.25, good=-0.28, excellent=-0.32, higher_is_better=False)


def question(question_id: str) -> Any:
    return next(q for q in load_questions() if q.id == question_id)


def test_story_facts_come_from_the_generators_record(eval_lab: EvalLab) -> None:
    chip = eval_lab.report.chip("proj-demo", eval_lab.oracle.facts["chip"])
    assert eval_lab.oracle.facts["tls"] == chip.tls_qubit
    assert eval_lab.oracle.truth(question("degrading-qubit")).ids == [chip.t1_degrading_qubit]
    dates = eval_lab.oracle.truth(question("tls-dates")).dates
    assert [d.replace("-", "") for d in dates] == sorted(set(chip.tls_days))


def test_the_tls_dip_is_in_the_raw_t1_runs_on_its_dates(eval_lab: EvalLab) -> None:
    dip = eval_lab.oracle.truth(question("tls-dip-value")).numbers
    assert dip and all(5.0 <= value <= 15.0 for value in dip)  # the story's dip range


def test_threshold_answer_matches_a_direct_scan_of_qubit_documents(eval_lab: EvalLab) -> None:
    chip = eval_lab.oracle.facts["chip"]
    docs = eval_lab.db["qubit"].find({"project_id": "proj-demo", "chip_id": chip})
    below = sorted((d["qid"] for d in docs if d["data"].get("t1", {}).get("value", 1e9) < 30), key=int)
    assert eval_lab.oracle.truth(question("t1-below-30")).ids == below


@given(st.floats(min_value=0, max_value=300, allow_nan=False))
def test_classes_follow_domain_inequalities_with_boundaries_in_the_better_class(value: float) -> None:
    grade = classify(value, T1)
    expected = "excellent" if value >= 100 else "good" if value >= 50 else "fair" if value >= 20 else "bad"
    assert grade == expected


def test_lower_is_better_boundaries() -> None:
    assert classify(-0.32, ANHARMONICITY) == "excellent"
    assert classify(-0.28, ANHARMONICITY) == "good"
    assert classify(-0.25, ANHARMONICITY) == "fair"
    assert classify(-0.2499, ANHARMONICITY) == "bad"


def test_selection_rules() -> None:
    values = {"1": 10.0, "2": 30.0, "3": 20.0, "10": 5.0}
    assert Selection(parameter="t1", op="<", value=20).pick(values) == ["1", "10"]
    assert Selection(parameter="t1", op="lowest", value=2).pick(values) == ["10", "1"]
    assert Selection(parameter="t1", op="highest", value=1, within=["1", "3"]).pick(values) == ["3"]


@pytest.mark.slow
def test_truth_is_recomputed_for_another_seed_and_end_date(
    mongo_db: Database[dict[str, Any]], eval_lab: EvalLab, tmp_path: Any
) -> None:
    spec = DemoSpec.small(seed=3, end_at=datetime(2025, 3, 1, 12, tzinfo=UTC))
    other = EvalLab(mongo_db, seed_demo(mongo_db, spec), load_settings(database={"data_dir": str(tmp_path)}))
    assert other.oracle.facts["end_date"] == "2025-03-01"
    truths = {q.id: other.oracle.truth(q) for q in load_questions()}
    assert truths["tls-dates"].dates[0].startswith("2025-02")
    assert truths["current-t1"] != eval_lab.oracle.truth(question("current-t1"))


def test_the_failed_fit_facts_are_traps_in_the_raw_documents(eval_lab: EvalLab) -> None:
    """The fact's newest run of its task failed after one completed: the value to give is the
    completed run's, and the newest run measured nothing to keep (read with plain pymongo)."""
    facts, db = eval_lab.oracle.facts, eval_lab.db
    for kind in ("q", "coupling"):
        qid, task = (
            facts[f"newest_failed_{kind}"],
            facts["newest_failed_task" if kind == "q" else "newest_failed_coupling_task"],
        )
        query = {"project_id": "proj-demo", "chip_id": facts["chip"], "name": task, "qid": qid}
        runs = sorted(db["task_result_history"].find(query), key=lambda run: run["start_at"])
        assert runs[-1]["status"] == "failed" and ("-" in qid) == (kind == "coupling")
    param = facts["newest_failed_param"]
    good = [
        run
        for run in runs_of(db, facts, facts["newest_failed_q"])
        if run["status"] == "completed" and param in run.get("output_parameters", {})
    ]
    assert eval_lab.oracle.truth(question("trap-failed-fit-qubit")).numbers == [
        good[-1]["output_parameters"][param]["value"]
    ]
    newest = runs_of(db, facts, facts["newest_failed_q"], facts["newest_failed_task"])[-1]
    assert eval_lab.oracle.truth(question("trap-newest-run-failed")).texts == [
        newest["message"].split("(")[0].strip()
    ]


def runs_of(
    db: Database[dict[str, Any]], facts: dict[str, str], qid: str, task: str | None = None
) -> list[dict[str, Any]]:
    query = {
        "project_id": "proj-demo",
        "chip_id": facts["chip"],
        "qid": qid,
        **({"name": task} if task else {}),
    }
    return sorted(db["task_result_history"].find(query), key=lambda run: run["start_at"])


def test_the_cut_list_truths_count_every_run_not_the_ones_a_tool_lists(eval_lab: EvalLab) -> None:
    facts, db = eval_lab.oracle.facts, eval_lab.db
    scope = {"project_id": "proj-demo", "chip_id": facts["chip"], "status": "failed"}
    in_execution = db["task_result_history"].count_documents({**scope, "execution_id": facts["busy_exec"]})
    assert eval_lab.oracle.truth(question("trap-cut-list-execution-count")).numbers == [in_execution]
    assert in_execution > 10, "more than the search tool lists by default"
    since = datetime.fromisoformat(facts["since_day"].replace("Z", "+00:00"))
    runs = [
        r
        for r in db["task_result_history"].find({**scope, "start_at": {"$gte": since}})
        if not r.get("excluded")
    ]
    qubits = sorted({r["qid"] for r in runs if "-" not in r["qid"]}, key=int)
    assert eval_lab.oracle.truth(question("trap-cut-list-window-qubits")).ids == qubits
    assert eval_lab.oracle.truth(question("trap-cut-list-window-count")).numbers == [len(runs)]
