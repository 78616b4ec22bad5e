"""``qdash db check``: which documents the copilot can use, which not (reason + fix), which
indexes are missing — read-only; ``create_indexes`` adds ours only where the policy allows.

Why a report and not a migration: the database is usually a lab's (upstream QDash writes it); we
never rewrite its data. The report says what to change and how, the operator decides.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pymongo.database import Database

from qdash.db.check_rules import COLLECTIONS, RULES, UNSCOPED, Rule, lab_rules
from qdash.db.factory import database_mode
from qdash.db.indexes import IndexPolicy, IndexState, ensure_indexes, index_states
from qdash.db.ownership import holds_lab_data, is_owned
from qdash.settings import LabSettings


class GuestWriteRefusedError(RuntimeError):
    """``--create-indexes`` on a lab's database while ``database.indexes`` is ``off``."""


@dataclass(frozen=True)
class Finding:
    count: int
    reason: str
    fix: str
    blocking: bool


@dataclass
class CollectionReport:
    name: str
    total: int  # documents in scope (the project's, or all)
    usable: int
    findings: list[Finding] = field(default_factory=list)
    missing_indexes: list[IndexState] = field(default_factory=list)

    @property
    def unusable(self) -> int:
        return self.total - self.usable


@dataclass
class DatabaseReport:
    database: str
    mode: str
    owner: str  # "copilot", "lab" or "nobody yet"
    index_policy: IndexPolicy
    project: str | None
    collections: list[CollectionReport]

    @property
    def unusable(self) -> int:
        return sum(c.unusable for c in self.collections)

    @property
    def missing_indexes(self) -> int:
        return sum(len(c.missing_indexes) for c in self.collections)

    @property
    def clean(self) -> bool:
        return self.unusable == 0 and self.missing_indexes == 0


def owner_of(db: Database[Any]) -> str:
    if is_owned(db):
        return "copilot"
    return "lab" if holds_lab_data(db) else "nobody yet"


def _scope(name: str, project: str | None) -> dict[str, Any]:
    return {} if project is None or name in UNSCOPED else {"project_id": project}


def _filter(rule: Rule, project: str | None) -> dict[str, Any]:
    scope = _scope(rule.collection, project) if rule.scoped else {}
    return {"$and": [scope, rule.query]} if scope else rule.query


def _collection_report(
    db: Database[Any], name: str, project: str | None, missing: list[IndexState], rules: list[Rule]
) -> CollectionReport:
    collection = db[name]
    scope = _scope(name, project)
    unscoped_blocking = [rule for rule in rules if rule.blocking and not rule.scoped and scope]
    total = collection.count_documents(scope) + sum(
        collection.count_documents(rule.query) for rule in unscoped_blocking
    )
    blocking = [rule.query for rule in rules if rule.blocking]
    usable = collection.count_documents({"$and": [scope, {"$nor": blocking}]} if blocking else scope)
    findings = []
    for rule in rules:
        count = collection.count_documents(_filter(rule, project))
        if count:
            fix = rule.fix.replace("{project}", project or "<project_id>")
            findings.append(Finding(count, rule.reason, fix, rule.blocking))
    if name in ("qubit", "coupling"):
        findings += _id_findings(collection, scope)
    return CollectionReport(name, total, usable, findings, missing)


BOTH_WAYS = "pairs stored in both directions (upstream writes '0-1' and '1-0'): read as one pair"
SEVERAL = (
    "ids stored more than once in a chip (upstream's unique key includes username): the most "
    "recently updated document is read"
)


def _id_findings(collection: Any, scope: dict[str, Any]) -> list[Finding]:
    """Pairs stored both ways and ids stored several times, per project and chip. Qubit and
    coupling collections are small (one document per qubit or direction), so this reads ids only."""
    seen: set[tuple[Any, Any, str]] = set()
    both_ways = 0
    repeated: set[tuple[Any, Any, str]] = set()
    for doc in collection.find(scope, {"project_id": 1, "chip_id": 1, "qid": 1, "_id": 0}):
        key = (doc.get("project_id"), doc.get("chip_id"), str(doc.get("qid", "")))
        left, sep, right = key[2].partition("-")
        if key in seen:
            repeated.add(key)
        elif sep and (key[0], key[1], f"{right}-{left}") in seen:
            both_ways += 1
        seen.add(key)
    counts = ((both_ways, BOTH_WAYS), (len(repeated), SEVERAL))
    return [Finding(count, reason, "", blocking=False) for count, reason in counts if count]


def check_database(
    db: Database[Any], project: str | None, policy: IndexPolicy, lab: LabSettings | None = None
) -> DatabaseReport:
    """The report; reads only (counts, coupling ids and index lists)."""
    rules = [*RULES, *lab_rules(lab or LabSettings())]
    missing: dict[str, list[IndexState]] = defaultdict(list)
    for state in index_states(db):
        if state.missing:
            missing[state.collection].append(state)
    names = list(COLLECTIONS) + sorted(set(missing) - set(COLLECTIONS))
    return DatabaseReport(
        database=db.name,
        mode=database_mode(db),
        owner=owner_of(db),
        index_policy=policy,
        project=project,
        collections=[
            _collection_report(
                db, name, project, missing.get(name, []), [r for r in rules if r.collection == name]
            )
            for name in names
        ],
    )


def create_indexes(db: Database[Any], policy: IndexPolicy) -> int:
    """Create our missing indexes; on a lab's database only as its guest (non-unique ``copilot_…``,
    nothing dropped or changed), and only when ``database.indexes`` allows it."""
    if owner_of(db) == "lab" and policy == "off":
        raise GuestWriteRefusedError(
            f"database {db.name!r} belongs to a lab (upstream QDash data, no copilot owner marker) and "
            "database.indexes is 'off': refusing to create indexes. To let the copilot add its "
            "missing indexes as a guest (non-unique, named copilot_…, never dropping or changing "
            "one), set database.indexes: create_missing (or QDASH_DATABASE__INDEXES=create_missing), "
            "or ask the lab's database owner to create them"
        )
    return ensure_indexes(db, policy="create_missing")
