"""Config-declared tools: a curried signature plus a read-only, project-scoped query.

Why a query and not arbitrary code: lab staff can add "latest readout fidelity of a qubit" in YAML
without a release, and the tool can do nothing but read one collection of the caller's project.
``"$name"`` strings in ``filter``/``limit`` are replaced by the call's arguments; a filter key whose
argument is ``null`` is left out (so optional parameters are optional filters). The return type says
what comes back: ``(::Object)`` the first match (not found is an error), ``(::[Object])`` up to
``limit`` matches as ``{"rows": [...], "count": n}``. ``project_id`` always comes from the request;
operators are limited to plain comparisons; parameters named qid/qids/coupling_id/qubit_id accept
``Q16``/``Q16-Q22`` like the built-in tools. Every problem is a ``ConfigError`` naming the key.

Example (``config/copilot.yaml``)::

    tools:
      custom:
        get_t1_runs:
          signature: "(qid::Text)==>(last_n::Int {default:5, min:1, max:50})==>(::[Object])"
          description: "Recent CheckT1 runs of one qubit: start_at, status, execution_id."
          query:
            collection: task_result_history
            filter: {qid: "$qid", name: CheckT1}
            fields: [start_at, status, execution_id]
            sort: {start_at: -1}
            limit: "$last_n"
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, create_model, field_validator

from qdash.copilot.tools.catalog.identifiers import normalize_target
from qdash.copilot.tools.signature import Signature, SignatureError, parse_signature
from qdash.copilot.tools.spec import ToolContext, ToolError, ToolSpec
from qdash.repositories.scope import ProjectScope
from qdash.settings import ConfigError, CustomQuerySettings, CustomToolSettings

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
OPERATORS = frozenset(
    {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$all", "$and", "$or", "$size"}
)
MAX_LIMIT = 100
ID_PARAMS = frozenset({"qid", "qids", "coupling_id", "qubit_id"})
_MISSING = object()


def build_custom_tool(name: str, config: CustomToolSettings) -> ToolSpec:
    """The tool of one ``tools.custom.<name>`` entry; ConfigError when invalid."""
    where = f"tools.custom.{name}"
    if not NAME.match(name):
        raise ConfigError(f"{where}: tool names are 1-64 characters of a-z, A-Z, 0-9, _ and -")
    try:
        signature = parse_signature(config.signature)
    except SignatureError as exc:
        raise ConfigError(f"{where}.signature: {exc}") from None
    if signature.returns.name != "Object" or signature.returns.depth > 1:
        raise ConfigError(
            f"{where}.signature: a query tool returns (::Object) or (::[Object]), not (::{signature.returns})"
        )
    _check_query(where, config.query, signature)
    return ToolSpec(
        name=name,
        description=config.description,
        args_model=_normalising_ids(signature.args_model(name), signature),
        label=config.label,
        impl=_QueryTool(config.query, many=signature.returns.depth == 1),
        tags=("custom",),
    )


def _normalising_ids(model: type[BaseModel], signature: Signature) -> type[BaseModel]:
    """Text parameters named like identifiers (qid, qids, coupling_id) accept ``Q16``/``Q16-Q22``."""
    names = [p.name for p in signature.params if p.name in ID_PARAMS and p.type.name == "Text"]
    if not names:
        return model

    def normalise(cls: Any, value: Any) -> Any:
        if isinstance(value, list):
            return [normalize_target(v) if isinstance(v, str | int) else v for v in value]
        return normalize_target(value) if isinstance(value, str | int) else value

    validator: Any = field_validator(*names, mode="before")(classmethod(normalise))
    derived: type[BaseModel] = create_model(
        model.__name__, __base__=model, __validators__={"normalise_ids": validator}
    )
    return derived


def _placeholders(value: Any) -> set[str]:
    if isinstance(value, str) and value.startswith("$") and value[1:].isidentifier():
        return {value[1:]}
    if isinstance(value, dict):
        return set().union(*(_placeholders(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_placeholders(v) for v in value)) if value else set()
    return set()


def _operators(value: Any) -> set[str]:
    if isinstance(value, dict):
        found = {k for k in value if k.startswith("$")}
        return found.union(*(_operators(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_operators(v) for v in value)) if value else set()
    return set()


def _check_query(where: str, query: CustomQuerySettings, signature: Signature) -> None:
    params = {p.name: p for p in signature.params}
    if "project_id" in query.filter:
        raise ConfigError(f"{where}.query.filter: project_id comes from the request; remove it")
    bad = sorted(_operators(query.filter) - OPERATORS)
    if bad:
        raise ConfigError(f"{where}.query.filter: operator {bad[0]} is not allowed; use {sorted(OPERATORS)}")
    used = _placeholders(query.filter)
    if isinstance(query.limit, str):
        limit_param = query.limit.removeprefix("$")
        param = params.get(limit_param)
        if not query.limit.startswith("$") or param is None or param.type.name != "Int" or param.type.depth:
            raise ConfigError(
                f"{where}.query.limit: must be a number or '$<Int parameter>', got {query.limit!r}"
            )
        used.add(limit_param)
    elif not 1 <= query.limit <= MAX_LIMIT:
        raise ConfigError(f"{where}.query.limit: must be 1-{MAX_LIMIT}, got {query.limit}")
    unknown = sorted(used - set(params))
    if unknown:
        raise ConfigError(f"{where}.query: '${unknown[0]}' is not a parameter of the signature")
    unused = sorted(set(params) - used)
    if unused:
        raise ConfigError(f"{where}.signature: parameter '{unused[0]}' is not used by the query")


def _substitute(value: Any, args: dict[str, Any]) -> Any:
    """Replace ``"$name"`` by the argument; ``_MISSING`` when an argument in it is null."""
    if isinstance(value, str) and value.startswith("$") and value[1:] in args:
        found = args[value[1:]]
        return _MISSING if found is None else found
    if isinstance(value, dict):
        out = {k: _substitute(v, args) for k, v in value.items()}
        return _MISSING if any(v is _MISSING for v in out.values()) else out
    if isinstance(value, list):
        items = [_substitute(v, args) for v in value]
        return _MISSING if any(v is _MISSING for v in items) else items
    return value


class _QueryTool:
    """The implementation: one ``find`` in the caller's project (blocking; runs on the tool pool)."""

    def __init__(self, query: CustomQuerySettings, many: bool) -> None:
        self.query = query
        self.many = many

    def __call__(self, ctx: ToolContext, args: BaseModel) -> dict[str, Any]:
        values = args.model_dump()
        substituted = {k: _substitute(v, values) for k, v in self.query.filter.items()}
        filter_ = {k: v for k, v in substituted.items() if v is not _MISSING}
        limit = values[self.query.limit[1:]] if isinstance(self.query.limit, str) else self.query.limit
        limit = max(1, min(MAX_LIMIT, int(limit)))
        projection = {"_id": 0, **{f: 1 for f in self.query.fields}}
        scope = ProjectScope(ctx.db, ctx.project_id, ctx.max_time_ms)
        rows = scope.find(
            self.query.collection,
            filter_,
            projection,
            sort=list(self.query.sort.items()) or None,
            limit=limit if self.many else 1,
        )
        if self.many:
            return {"rows": rows, "count": len(rows)}
        if not rows:
            shown = ", ".join(f"{k}={v}" for k, v in filter_.items())
            raise ToolError(
                f"No document found ({shown})", "check the identifiers, or list what exists first"
            )
        return rows[0]
