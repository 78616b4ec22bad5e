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

from qdash.db.check_rules import COLLECTIONS, RULES, UNSCOPED, Rule
from qdash.db.factory import database_mode
from qdash.db.indexes import IndexPolicy, IndexState, ensure_indexes, index_states
from qdash.db.ownership import holds_lab_data, is_owned


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
    db: Database[Any], name: str, project: str | None, missing: list[IndexState]
) -> CollectionReport:
    collection = db[name]
    scope = _scope(name, project)
    rules = [rule for rule in RULES if rule.collection == name]
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
    return CollectionReport(name, total, usable, findings, missing)


def check_database(db: Database[Any], project: str | None, policy: IndexPolicy) -> DatabaseReport:
    """The report; reads only (counts and index lists)."""
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
        collections=[_collection_report(db, name, project, missing.get(name, [])) for name in names],
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
