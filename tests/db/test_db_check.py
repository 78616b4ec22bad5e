"""``qdash db check``: on upstream's shapes it names what cannot be used and why; it never writes
unless asked, and then only our own indexes, only as the policy allows."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bson import json_util
from pymongo.database import Database
from typer.testing import CliRunner

from qdash.cli import app
from qdash.db import close_database, open_database
from qdash.db.check import GuestWriteRefusedError, check_database, create_indexes
from qdash.db.indexes import NAME_PREFIX
from qdash.db.ownership import OWN_COLLECTIONS
from qdash.settings import DatabaseSettings, LabSettings, get_settings
from tests.support.upstream_lab import PROJECT_ID, upstream_index_snapshot, write_upstream_lab
from tests.support.upstream_lab import writes as upstream


def _digest(db: Database[dict[str, Any]]) -> str:
    """Every document of every collection: proves a command left the lab's data untouched."""
    h = hashlib.sha256()
    for name in sorted(db.list_collection_names()):
        for doc in db[name].find().sort("_id", 1):
            h.update(json_util.dumps(doc, sort_keys=True).encode())
    return h.hexdigest()


def _findings(report: Any, collection: str) -> dict[str, Any]:
    found = next(c for c in report.collections if c.name == collection)
    return {f.reason.split(":")[0]: f for f in found.findings}


def test_upstream_lab_report_names_each_unusable_document_with_its_fix(
    mongo_db: Database[dict[str, Any]],
) -> None:
    write_upstream_lab(mongo_db)
    before = _digest(mongo_db)
    report = check_database(mongo_db, PROJECT_ID, "create_missing")
    assert report.owner == "lab" and not report.clean
    unusable = {c.name: c.unusable for c in report.collections if c.unusable}
    assert unusable == {"chip": 1, "task_result_history": 4, "execution_history": 1}
    rows = next(c for c in report.collections if c.name == "task_result_history")
    assert (rows.total, rows.usable) == (108, 104)  # the project's 104 + 4 rows of no project
    no_project = _findings(report, "task_result_history")[
        "no project_id (written before upstream had projects)"
    ]
    assert no_project.blocking and no_project.count == 4
    assert f'{{$set: {{project_id: "{PROJECT_ID}"}}}}' in no_project.fix
    spelled = _findings(report, "qubit")["qid spelled otherwise ('05' from upstream's seed import, 'Q05')"]
    assert spelled.count == 1 and not spelled.blocking
    notes = _findings(report, "task_result_history")
    assert notes["excluded by a person on the dashboard"].count == 1
    assert not notes["elapsed_time is an 'H"].blocking
    assert (
        _findings(report, "project_membership")["revoked or pending (an invitation not accepted)"].count == 2
    )
    assert report.missing_indexes > 0
    assert _digest(mongo_db) == before  # the check only reads


def test_create_indexes_on_a_lab_adds_only_ours_and_touches_no_document(
    mongo_db: Database[dict[str, Any]],
) -> None:
    lab = write_upstream_lab(mongo_db)
    before = _digest(mongo_db)
    assert create_indexes(mongo_db, "create_missing") > 0
    assert check_database(mongo_db, None, "create_missing").missing_indexes == 0
    assert upstream_index_snapshot(mongo_db) == lab.indexes_before
    assert _digest(mongo_db) == before
    for name in set(mongo_db.list_collection_names()) - OWN_COLLECTIONS:
        for index_name, info in mongo_db[name].index_information().items():
            if index_name.startswith(NAME_PREFIX):
                assert not info.get("unique"), (name, index_name)


def test_create_indexes_is_refused_on_a_lab_when_the_policy_is_off(
    mongo_db: Database[dict[str, Any]],
) -> None:
    write_upstream_lab(mongo_db)
    indexes = {name: mongo_db[name].index_information() for name in mongo_db.list_collection_names()}
    with pytest.raises(GuestWriteRefusedError, match=r"database\.indexes: create_missing"):
        create_indexes(mongo_db, "off")
    assert {name: mongo_db[name].index_information() for name in indexes} == indexes


def test_demo_lab_is_fully_usable(demo_lab: Any) -> None:
    report = check_database(demo_lab.db, "proj-demo", "create_missing")
    assert report.unusable == 0, [(c.name, c.findings) for c in report.collections if c.unusable]
    assert not [f for c in report.collections for f in c.findings if f.blocking]


@pytest.fixture
def lab_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The upstream lab in a persisted embedded store, as the CLI will open it."""
    db = open_database(DatabaseSettings(data_dir=tmp_path, embedded_persist=True))
    write_upstream_lab(db)
    close_database(db)
    monkeypatch.setenv("QDASH_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("QDASH_MONGO_URI", raising=False)
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def test_cli_reports_and_exits_1_on_findings(lab_dir: Path) -> None:
    result = CliRunner().invoke(app, ["db", "check", "--project", PROJECT_ID, "--width", "200"])
    assert result.exit_code == 1, result.output
    assert "owner: lab" in result.output
    assert "task_result_history: cannot use 4 — no project_id" in result.output
    assert (
        f'db.task_result_history.updateMany({{project_id: null}}, {{$set: {{project_id: "{PROJECT_ID}"}}}})'
        in (result.output)
    )
    assert "missing indexes (" in result.output


def test_cli_create_indexes_refused_when_policy_is_off(
    lab_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QDASH_DATABASE__INDEXES", "off")
    get_settings.cache_clear()
    result = CliRunner().invoke(app, ["db", "check", "--create-indexes", "--width", "200"])
    assert result.exit_code == 2, result.output
    assert "refused:" in result.output and "belongs to a lab" in result.output


def test_cli_create_indexes_then_only_data_findings_remain(lab_dir: Path) -> None:
    db = open_database(get_settings().database)
    missing = check_database(db, None, "create_missing").missing_indexes
    close_database(db)
    result = CliRunner().invoke(app, ["db", "check", "--create-indexes", "--width", "200"])
    assert result.exit_code == 1, result.output  # the unusable rows remain: data is never rewritten
    assert missing > 0 and f"created {missing} index(es)" in result.output
    assert (
        "missing indexes (" not in result.output
        and "6 document(s) unusable, 0 index(es) missing" in result.output
    )


def test_notes_follow_the_lab_settings(mongo_db: Database[dict[str, Any]]) -> None:
    """Figure paths no root maps and naive note times are named until lab.* says where and when."""
    write_upstream_lab(mongo_db)
    default = check_database(mongo_db, PROJECT_ID, "create_missing")
    assert (
        _findings(default, "coupling")[
            "pairs stored in both directions (upstream writes '0-1' and '1-0')"
        ].count
        == 8
    )
    figures = "absolute figure paths (upstream's /app/calib_data/…) that no lab.figure_roots entry maps"
    assert _findings(default, "task_result_history")[figures].count == 104
    assert _findings(default, "calibration_note")["Qubex master notes"].count == 4
    configured = LabSettings(timezone="Asia/Tokyo", figure_roots={"/app/calib_data": "/mnt/calib"})
    report = check_database(mongo_db, PROJECT_ID, "create_missing", configured)
    assert figures not in _findings(report, "task_result_history")
    assert "Qubex master notes" not in _findings(report, "calibration_note")


def test_ids_stored_by_several_users_are_named(mongo_db: Database[dict[str, Any]]) -> None:
    """Upstream keys qubit and coupling documents by username too: bob's copy of the chip is read
    as one (the newest per id), and the report says so."""
    write_upstream_lab(mongo_db)
    upstream.initialize_chip(
        mongo_db,
        project_id=PROJECT_ID,
        username="bob",
        chip_id="64Qv1",
        qids=["0", "1"],
        couplings=["0-1", "1-0"],
    )
    report = check_database(mongo_db, PROJECT_ID, "create_missing")
    several = "ids stored more than once in a chip (upstream's unique key includes username)"
    assert _findings(report, "qubit")[several].count == 2
    assert _findings(report, "coupling")[several].count == 2
    assert (
        _findings(report, "coupling")[
            "pairs stored in both directions (upstream writes '0-1' and '1-0')"
        ].count
        == 8
    )
