"""Plain pymongo reads of the raw documents, scoped by project: the oracle's only data access.

Why not the repositories: the oracle must be able to disagree with the tools. Everything here is
written from the data model (collections, fields, the version-chain rules) straight against pymongo,
so a bug in a repository or a tool shows up as a failed question instead of an agreeing answer.

Why a snapshot: a ``RawLab`` reads each collection of its project once and matches queries in
memory (MongoDB's own matching rules, as the embedded store implements them), partitioned by chip
and qubit. Grading a question set asks hundreds of queries of one unchanging lab; each of them
scanned every result of the project on the embedded store. A lab that changes (an approved write)
is graded with a new ``RawLab``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from mongomock_ng.filtering import filter_applies
from pymongo import DESCENDING
from pymongo.database import Database

from qdash.config_files import config_file
from qdash.settings import ScoreThreshold

Doc = dict[str, Any]
FLAGGED = ("REVIEW", "FAIL")
"""Review verdicts that ask a person to look (upstream's decisions are PASS, PASS_WITH_NOTE, REVIEW, FAIL)."""


def review_field(run: Doc, name: str) -> str | None:
    """A field of upstream's AI review note on a run (its ``- Name: `value``` line), if any."""
    line = re.compile(rf"^-\s*{re.escape(name)}:\s*`?(.+?)`?\s*$", re.MULTILINE)
    found = line.search(str((run.get("ai_review_note") or {}).get("content") or ""))
    return found.group(1) if found else None


def review_decision(run: Doc) -> str | None:
    """The verdict of the run's AI review: PASS, PASS_WITH_NOTE, REVIEW or FAIL."""
    return review_field(run, "Decision")


class RawLab:
    """Reads of one project's documents (every query carries ``project_id``)."""

    def __init__(
        self, db: Database[Doc], project_id: str, config_dir: Path, scoring: dict[str, ScoreThreshold]
    ) -> None:
        self.db = db
        self.project_id = project_id
        self.config_dir = config_dir
        self.scoring = scoring
        """Threshold classes (config ``scoring``): the lab's definition, not an answer."""
        self._states: dict[tuple[str, str], dict[str, Doc]] = {}
        self._snapshots: dict[str, list[Doc]] = {}
        self._indexes: dict[tuple[str, str], dict[str, list[Doc]]] = {}

    def find(self, collection: str, query: Doc, sort: list[tuple[str, int]] | None = None) -> list[Doc]:
        found = [doc for doc in self._candidates(collection, query) if filter_applies(query, doc)]
        for key, direction in reversed(sort or []):  # stable sorts, last key first
            found.sort(key=partial(_sort_key, dotted=key), reverse=direction == DESCENDING)
        return found

    def _candidates(self, collection: str, query: Doc) -> list[Doc]:
        """The project's documents that can match ``query``: the fewest found through one of its
        plain string equalities (an id, a chip, a qubit), else all of them."""
        best = self._project_docs(collection)
        for field, value in query.items():
            if isinstance(value, str) and not field.startswith("$") and "." not in field:
                found = self._by_value(collection, field).get(value, [])
                if len(found) < len(best):
                    best = found
        return best

    def _project_docs(self, collection: str) -> list[Doc]:
        if collection not in self._snapshots:
            self._snapshots[collection] = list(self.db[collection].find({"project_id": self.project_id}))
        return self._snapshots[collection]

    def _by_value(self, collection: str, field: str) -> dict[str, list[Doc]]:
        """Documents by their string value of ``field`` (each element of an array value, as
        MongoDB's equality on an array matches its elements); built on first use."""
        key = (collection, field)
        if key not in self._indexes:
            index: dict[str, list[Doc]] = defaultdict(list)
            for doc in self._project_docs(collection):
                value = doc.get(field)
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, str) and doc not in index[item][-1:]:  # once per document
                        index[item].append(doc)
            self._indexes[key] = index
        return self._indexes[key]

    def find_one(self, collection: str, query: Doc, sort: list[tuple[str, int]] | None = None) -> Doc | None:
        found = self.find(collection, query, sort)
        return found[0] if found else None

    def default_chip(self) -> str:
        chip = self.find_one("chip", {}, [("installed_at", DESCENDING)])
        if chip is None:
            raise LookupError(f"project {self.project_id} has no chip")
        return str(chip["chip_id"])

    def chip_ids(self) -> list[str]:
        return [str(c["chip_id"]) for c in self.find("chip", {}, [("installed_at", DESCENDING)])]

    def state(self, chip_id: str, target: str = "qubit") -> dict[str, Doc]:
        """qid → the current-state document (the most recently updated one per qid); read once."""
        key = (chip_id, target)
        if key not in self._states:
            docs = self.find(target, {"chip_id": chip_id}, [("system_info.updated_at", 1)])
            self._states[key] = {str(doc["qid"]): doc for doc in docs}
        return self._states[key]

    def current(self, chip_id: str, qid: str, parameter: str, target: str = "qubit") -> Doc:
        doc = self.state(chip_id, target).get(qid)
        entry = (doc or {}).get("data", {}).get(parameter)
        if entry is None:
            raise LookupError(f"{target} {qid} of {chip_id} has no current {parameter}")
        return dict(entry)

    def current_values(self, chip_id: str, parameter: str, target: str = "qubit") -> dict[str, float]:
        """id → current value of ``parameter`` for every qubit (or coupling) that has one."""
        values: dict[str, float] = {}
        for qid, doc in self.state(chip_id, target).items():
            entry = doc.get("data", {}).get(parameter)
            if entry is not None:
                values[qid] = float(entry["value"])
        return values

    def stored_unit(self, chip_id: str, parameter: str, target: str = "qubit") -> str:
        """The unit the current documents store ``parameter`` in (``""`` when none states one)."""
        for doc in self.state(chip_id, target).values():
            entry = doc.get("data", {}).get(parameter)
            if entry is not None:
                return str(entry.get("unit") or "")
        return ""

    def runs(self, chip_id: str, query: Doc) -> list[Doc]:
        """Task results of a chip in start order."""
        return self.find("task_result_history", {"chip_id": chip_id, **query}, [("start_at", 1)])

    def runs_by_cooldown(self, chip_id: str, query: Doc | None = None) -> dict[str, list[Doc]]:
        """Task results of a chip per non-empty ``cooldown_id`` in start order, cool-downs ordered by
        their first run."""
        found: dict[str, list[Doc]] = defaultdict(list)
        for run in self.runs(chip_id, query or {}):
            if run.get("cooldown_id"):
                found[str(run["cooldown_id"])].append(run)
        if not found:
            raise LookupError(f"no task result of {chip_id} has a cooldown_id")
        return dict(sorted(found.items(), key=lambda item: _sort_key(item[1][0], "start_at")))

    def output_series(self, chip_id: str, qid: str, parameter: str) -> list[tuple[datetime, float]]:
        """(start_at, value) of every completed run that output ``parameter`` on ``qid``."""
        runs = self.runs(chip_id, {"qid": qid, "status": "completed", "output_parameter_names": parameter})
        return [(run["start_at"], float(run["output_parameters"][parameter]["value"])) for run in runs]

    def topology(self, chip_id: str) -> Doc:
        chip = self.find_one("chip", {"chip_id": chip_id})
        if chip is None:
            raise LookupError(f"no chip {chip_id} in {self.project_id}")
        name = f"topologies/{chip['topology_id']}.yaml"
        found = config_file(name, self.config_dir)  # the operator's file, else the packaged one
        if found is None:
            raise LookupError(f"no {name} in {self.config_dir} or the packaged defaults")
        loaded: Doc = yaml.safe_load(found.read_text(encoding="utf-8"))
        return loaded

    def coupling_ids(self, chip_id: str) -> list[str]:
        return [f"{a}-{b}" for a, b in self.topology(chip_id)["couplings"]]


def _sort_key(doc: Doc, dotted: str) -> tuple[int, Any]:
    """MongoDB's order for one (possibly dotted) field: missing and null first."""
    value: Any = doc
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return (0, 0) if value is None else (1, value)
