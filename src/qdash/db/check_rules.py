"""What ``qdash db check`` looks for: per collection, documents the copilot cannot use (blocking) or
reads in a particular way (notes), each with the reason and the fix.

Why rules as MongoDB filters: the check must stay read-only and cheap on a lab's database of
millions of rows, so every rule is one ``count_documents`` the server answers. The shapes are the
ones upstream QDash writes (``tests.support.upstream_lab`` reproduces them); ``{project}`` in a fix
is replaced by the ``--project`` value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, get_args

from qdash.settings import LabCollection, LabSettings

#: What the repositories read as a qubit / coupling id (Qubex labels and zero padding included).
QUBIT_QID = r"^Q?[0-9]+$"
COUPLING_QID = r"^Q?[0-9]+-Q?[0-9]+$"
OTHER_SPELLING = r"^(Q|0[0-9])"
NO_PROJECT = {"project_id": {"$not": {"$type": "string"}}}
NOT_A_DATE = {"$not": {"$type": "date"}}
NOT_AN_OBJECT = {"$not": {"$type": "object"}}


@dataclass(frozen=True)
class Rule:
    """Documents of ``collection`` matching ``query``; ``blocking``: the copilot cannot use them.

    ``scoped=False``: counted over the whole collection even with ``--project`` (documents without
    a project belong to none, so the project filter would hide exactly them).
    """

    collection: str
    query: dict[str, Any]
    reason: str
    fix: str = ""
    blocking: bool = True
    scoped: bool = True


def _no_project(collection: str) -> Rule:
    return Rule(
        collection,
        NO_PROJECT,
        "no project_id (written before upstream had projects): never read, every query is scoped "
        "to a project",
        f"assign them to their project: db.{collection}.updateMany({{project_id: null}}, "
        '{$set: {project_id: "{project}"}})',
        scoped=False,
    )


PROJECT_SCOPED = (*get_args(LabCollection), "provenance_activities", "provenance_relations")

RULES: tuple[Rule, ...] = (
    Rule(
        "user",
        {"$and": [{"access_token": {"$in": [None, ""]}}, {"access_token_hash": {"$in": [None, ""]}}]},
        "no access token: cannot sign in to the copilot",
        "give the user a token in upstream QDash (its access_token is accepted as is)",
        scoped=False,
    ),
    Rule("user", {"disabled": True}, "disabled: refused with 403", blocking=False, scoped=False),
    Rule(
        "user",
        {"default_project_id": {"$exists": False}},
        "no default_project_id (older upstream user): the first active membership is used",
        blocking=False,
        scoped=False,
    ),
    Rule(
        "project_membership",
        {"status": {"$in": ["revoked", "pending"]}},
        "revoked or pending (an invitation not accepted): grants no access",
        blocking=False,
    ),
    Rule(
        "project_membership",
        {"status": {"$exists": False}},
        "no status: treated as active",
        blocking=False,
    ),
    *(_no_project(name) for name in PROJECT_SCOPED),
    Rule(
        "chip",
        {"topology_id": {"$in": [None, ""]}},
        "no topology_id (upstream chips): the fallback grid of its size, coupled as its coupling "
        "documents say",
        'set one that matches the chip: db.chip.updateOne({project_id: "{project}", chip_id: "<chip>"}, '
        '{$set: {topology_id: "square-lattice-mux-64"}}) (a file in config/topologies/)',
        blocking=False,
    ),
    Rule(
        "qubit",
        {"qid": {"$not": {"$regex": QUBIT_QID}}},
        "qid is not a qubit number: no qubit lookup finds it",
        "rename it to the qubit's number (e.g. '16') or delete it",
    ),
    Rule(
        "qubit",
        {"qid": {"$regex": OTHER_SPELLING}},
        "qid spelled otherwise ('05' from upstream's seed import, 'Q05'): read as the plain number; "
        "where both spellings exist the most recently updated document is read",
        blocking=False,
    ),
    Rule(
        "coupling",
        {"qid": {"$not": {"$regex": COUPLING_QID}}},
        "qid is not '<control>-<target>' qubit numbers: no coupling lookup finds it",
        "rename it to '<control>-<target>' (e.g. '16-22') or delete it",
    ),
    *(
        Rule(
            name,
            {"data": NOT_AN_OBJECT},
            "data is missing or not an object",
            "re-save it from upstream QDash",
        )
        for name in ("qubit", "coupling")
    ),
    Rule(
        "task_result_history",
        {"output_parameters": NOT_AN_OBJECT},
        "output_parameters is missing or not an object",
        "set it to {} (no outputs) or delete the row",
    ),
    Rule(
        "task_result_history",
        {"start_at": NOT_A_DATE},
        "start_at is missing or not a date: left out of every series, history and search",
        "set start_at from end_at or system_info.created_at",
    ),
    Rule(
        "task_result_history",
        {"output_parameter_names": {"$exists": False}},
        "no output_parameter_names: the parameter time series do not find its outputs",
        "set output_parameter_names to the keys of output_parameters",
    ),
    Rule(
        "task_result_history",
        {"excluded": True},
        "excluded by a person on the dashboard: left out of every statistic and series (and counted as such)",
        blocking=False,
    ),
    Rule(
        "task_result_history",
        {"elapsed_time": {"$type": "string"}},
        "elapsed_time is an 'H:MM:SS' string (older upstream): read as seconds",
        blocking=False,
    ),
    Rule(
        "execution_history",
        {"start_at": NOT_A_DATE},
        "start_at is missing or not a date: left out of the execution history",
        "set start_at from the first task's start_at",
    ),
    Rule(
        "execution_history",
        {"elapsed_time": {"$type": "string"}},
        "elapsed_time is an 'H:MM:SS' string (older upstream): read as seconds",
        blocking=False,
    ),
    Rule(
        "calibration_note",
        {"note": NOT_AN_OBJECT},
        "note is missing or not an object",
        "set it to {} or delete the document",
    ),
    Rule(
        "parameter_versions",
        {"entity_id": {"$not": {"$type": "string"}}},
        "no entity_id: not part of any lineage",
        "delete it (upstream recreates versions on the next run)",
    ),
    Rule(
        "parameter_versions",
        {"qid": {"$regex": "^Q"}},
        "qid in Qubex label form ('Q40': upstream's seed import): read as qubit 40",
        blocking=False,
    ),
    Rule(
        "provenance_relations",
        {"$or": [{"source_id": {"$not": {"$type": "string"}}}, {"target_id": {"$not": {"$type": "string"}}}]},
        "source_id or target_id missing: the relation joins nothing",
        "delete it",
    ),
    Rule(
        "copilot_chat_session",
        {},
        "upstream's own chat sessions (no project_id): left alone; the copilot keeps its sessions in "
        "copilot_project_chat_session",
        blocking=False,
        scoped=False,
    ),
)


def lab_rules(lab: LabSettings) -> tuple[Rule, ...]:
    """Rules that depend on the ``lab`` settings: figure paths no root maps, notes' naive times."""
    mapped = [
        {"figure_path": {"$regex": "^" + re.escape(prefix.rstrip("/")) + "/"}} for prefix in lab.figure_roots
    ]
    unmapped = (
        {"$and": [{"figure_path": {"$regex": "^/"}}, {"$nor": mapped}]}
        if mapped
        else {"figure_path": {"$regex": "^/"}}
    )
    rules = [
        Rule(
            "task_result_history",
            unmapped,
            "absolute figure paths (upstream's /app/calib_data/…) that no lab.figure_roots entry maps: "
            "analysis runs without the experiment figure",
            "map them to where the files are on this machine, e.g. lab.figure_roots: "
            "{/app/calib_data: /mnt/qdash/calib_data}",
            blocking=False,
        )
    ]
    if lab.timezone == "UTC":
        rules.append(
            Rule(
                "calibration_note",
                {"task_id": "master"},
                "Qubex master notes: their entry timestamps are naive lab-local times, read in "
                "lab.timezone (UTC now)",
                "set lab.timezone to the zone the lab's calibration workers run in (e.g. Asia/Tokyo) "
                "unless that is UTC",
                blocking=False,
            )
        )
    return tuple(rules)


#: The collections the report lists (in this order), whether or not a rule names them.
COLLECTIONS = (
    "user",
    "project",
    "project_membership",
    *PROJECT_SCOPED,
    "copilot_chat_session",
    "copilot_project_chat_session",
)
#: Collections without a project_id field: the ``--project`` filter does not apply to them.
UNSCOPED = frozenset({"user", "copilot_chat_session"})
