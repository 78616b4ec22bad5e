"""Plain pymongo reads of the raw documents, scoped by project: the oracle's only data access.

Why not the repositories: the oracle must be able to disagree with the tools. Everything here is
written from the data model (collections, fields, the version-chain rules) straight against pymongo,
so a bug in a repository or a tool shows up as a failed question instead of an agreeing answer.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from pymongo import DESCENDING
from pymongo.database import Database

from qdash.config_files import config_file
from qdash.settings import ScoreThreshold

Doc = dict[str, Any]


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

    def find(self, collection: str, query: Doc, sort: list[tuple[str, int]] | None = None) -> list[Doc]:
        cursor = self.db[collection].find({"project_id": self.project_id, **query})
        if sort:
            cursor = cursor.sort(sort)
        return list(cursor)

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
