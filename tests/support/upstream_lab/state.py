"""Tenancy and current state as upstream writes them: users, project, memberships, chip, qubit,
coupling and upstream's own chat session.

Upstream initialises every qubit and both directions of every coupling (``"0-1"`` and ``"1-0"``);
only the calibrated direction ever gets data. ``update_calib_data`` deep-merges each saved task's
outputs into ``data`` (failed fits included) and keeps the best fidelity in ``best_data``; the chip
document embeds a copy of every qubit and coupling. Qubits nobody calibrated since an upgrade keep
the older shape (``node_info``, no ``best_data``). The seed import writes a qubit for ``"Q05"`` under
qid ``"05"`` (it strips only the ``Q``) with a partial parameter (value, unit, description).
"""

from __future__ import annotations

from datetime import datetime

from tests.support.upstream_lab.documents import FIDELITY_METRICS, Doc, system_info
from tests.support.upstream_lab.spec import (
    CHIP_ID,
    CHIP_SIZE,
    LAB_TZ,
    LEGACY_CHIP_ID,
    OWNER,
    PAIRS,
    PEOPLE,
    PROJECT_ID,
    PROJECT_NAME,
    SEED_AT,
    SEED_VALUES,
    SESSION_ID,
)

CREATED = datetime(2026, 1, 20, 9, tzinfo=LAB_TZ)
HASHED_PASSWORD = "$2b$12$C6UzMDM.H6dfI/f/IKcEeO5x9xgRwbSGqkH9aT1l4bzmFpkD6Y0rK"  # bcrypt-shaped


def users() -> list[Doc]:
    """``UserDocument``: plain ``access_token`` (unique), older users without ``default_project_id``."""
    docs = []
    for person in PEOPLE:
        doc: Doc = {
            "username": person.username,
            "hashed_password": HASHED_PASSWORD,
            "access_token": person.token,
            "full_name": person.username.title(),
            "disabled": False,
            "system_info": system_info(CREATED),
        }
        if person.has_default_project:
            doc["default_project_id"] = PROJECT_ID
        docs.append(doc)
    return docs


def project() -> Doc:
    return {
        "project_id": PROJECT_ID,
        "owner_username": OWNER,
        "name": PROJECT_NAME,
        "description": None,
        "tags": [],
        "default_role": "viewer",
        "system_info": system_info(CREATED),
    }


def memberships() -> list[Doc]:
    """``ProjectMembershipDocument``: ``status`` active / revoked / pending (default pending)."""
    return [
        {
            "project_id": PROJECT_ID,
            "username": p.username,
            "role": p.role,
            "status": p.status,
            "invited_by": None if p.username == OWNER else OWNER,
            "last_accessed_at": None,
            "system_info": system_info(CREATED),
        }
        for p in PEOPLE
        if p.status is not None
    ]


def _merge(existing: Doc, new: Doc) -> Doc:
    """``QubitDocument.merge_calib_data``: nested dicts merge, anything else replaces."""
    for key, value in new.items():
        if isinstance(existing.get(key), dict) and isinstance(value, dict):
            _merge(existing[key], value)
        else:
            existing[key] = value
    return existing


def _best(best: Doc, outputs: Doc) -> None:
    """``update_best_data``: keep the higher value of each fidelity-like metric."""
    for name in FIDELITY_METRICS:
        new = outputs.get(name)
        if new is not None and (name not in best or new["value"] > best[name]["value"]):
            best[name] = {
                k: new[k]
                for k in (
                    "value",
                    "value_type",
                    "error",
                    "unit",
                    "description",
                    "calibrated_at",
                    "execution_id",
                    "task_id",
                )
            }


def _stored(param: Doc) -> Doc:
    """What reaches ``qubit.data``: the ParameterModel, not the history-only comparison fields."""
    return {k: v for k, v in param.items() if not k.startswith(("database_", "previous_"))}


def _initial(qid: str) -> Doc:
    """A qubit or coupling as upstream's chip initialisation writes it (no calibration yet)."""
    return {
        "project_id": PROJECT_ID,
        "username": OWNER,
        "qid": qid,
        "status": "pending",
        "chip_id": CHIP_ID,
        "data": {},
        "system_info": system_info(CREATED),
    }


def current_state(saved_rows: list[Doc]) -> tuple[list[Doc], list[Doc], list[Doc]]:
    """(qubits, couplings, chips) after upstream saved ``saved_rows`` (project rows, in order)."""
    qubits: dict[str, Doc] = {}
    for q in range(CHIP_SIZE):
        qid = str(q)
        node_info = {"fill": "", "position": {"x": float(q % 8), "y": float(q // 8)}}
        qubits[qid] = _initial(qid) | {"node_info": node_info}
    couplings: dict[str, Doc] = {}
    for control, target in PAIRS:
        for qid in (f"{control}-{target}", f"{target}-{control}"):
            couplings[qid] = _initial(qid) | {"best_data": {}, "edge_info": None}
    for row in saved_rows:
        target_doc = (couplings if row["task_type"] == "coupling" else qubits)[row["qid"]]
        outputs = {k: _stored(p) for k, p in row["output_parameters"].items()}
        _merge(target_doc["data"], outputs)
        _best(target_doc.setdefault("best_data", {}), outputs)
        target_doc["system_info"] = {"created_at": CREATED, "updated_at": row["end_at"]}
    _seed_import(qubits)
    return list(qubits.values()), list(couplings.values()), _chips(qubits, couplings)


def _seed_import(qubits: dict[str, Doc]) -> None:
    for yaml_qid, value in SEED_VALUES.items():
        qid = yaml_qid.lstrip("Q")  # upstream: "Q05" -> "05", "Q40" -> "40"
        param = {"value": value, "unit": "GHz", "description": "Imported from seed (qubit_frequency)"}
        if qid in qubits:
            _merge(qubits[qid]["data"], {"qubit_frequency": param})
            qubits[qid]["system_info"] = {"created_at": CREATED, "updated_at": SEED_AT}
        else:
            qubits[qid] = {
                "project_id": PROJECT_ID,
                "username": OWNER,
                "qid": qid,
                "status": "active",
                "chip_id": CHIP_ID,
                "data": {"qubit_frequency": param},
                "best_data": {},
                "node_info": None,
                "system_info": system_info(SEED_AT),
            }


def _chips(qubits: dict[str, Doc], couplings: dict[str, Doc]) -> list[Doc]:
    """The current chip embeds every qubit and coupling; the legacy one predates projects."""

    def embedded(doc: Doc) -> Doc:
        return {k: doc[k] for k in ("project_id", "username", "qid", "status", "chip_id", "data")} | {
            "best_data": doc.get("best_data", {})
        }

    current = {
        "project_id": PROJECT_ID,
        "chip_id": CHIP_ID,
        "username": OWNER,
        "size": CHIP_SIZE,
        "qubits": {
            qid: embedded(doc) for qid, doc in qubits.items() if qid.isdigit() and qid == str(int(qid))
        },
        "couplings": {qid: embedded(doc) for qid, doc in couplings.items()},
        "installed_at": CREATED.isoformat(),  # pendulum to_iso8601_string(): "+09:00"
        "system_info": system_info(CREATED),
    }
    legacy = {
        "chip_id": LEGACY_CHIP_ID,
        "username": OWNER,
        "size": CHIP_SIZE,
        "qubits": {},
        "couplings": {},
        "installed_at": datetime(2025, 6, 1, 9, tzinfo=LAB_TZ).isoformat(),
        "system_info": system_info(datetime(2025, 6, 1, 9, tzinfo=LAB_TZ)),
    }
    return [legacy, current]


def chat_session(at: datetime) -> Doc:
    """``CopilotChatSessionDocument``: upstream's own sessions, keyed by user, no project_id."""
    return {
        "username": OWNER,
        "session_id": SESSION_ID,
        "title": "T1 drop on Q03",
        "context": {"chip_id": CHIP_ID, "qid": "3"},
        "messages": [
            {"role": "user", "content": "Why did T1 of Q03 drop?", "attached_image": None, "created_at": at},
            {
                "role": "assistant",
                "content": "The 2.1 μs point looks like a TLS event.",
                "attached_image": None,
                "created_at": at,
            },
        ],
        "agent_messages": None,
        "created_at": at,
        "updated_at": at,
    }
