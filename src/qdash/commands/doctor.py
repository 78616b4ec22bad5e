"""``qdash doctor``: can this installation run? One line per check, with the fix when it fails.

Checks: the configuration loads (done by the CLI before this runs); the database is reachable (mode
and document counts); each configured model is contacted (Ollama: ``GET /api/version``; OpenAI
and compatible servers, a custom ``base_url`` included: ``GET /models`` with the key, whose variable
must be set for OpenAI itself — the key is never printed). The database and the default model are
required; other models are optional, so a missing optional server is a WARN line that does not fail
the run. When no model answers and the demo model (scripted answers) answers instead
(``copilot.demo_when_no_model``), the default model's problem is a WARN too: that is the demo set-up,
and it works. Nothing is created: an embedded store that does not exist yet is reported, not opened.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from typing import Literal

import typer

from qdash.config_files import describe_sources
from qdash.copilot.demo_model import demo_is_default
from qdash.db import DatabaseUnavailableError, close_database, database_mode, not_created, open_database
from qdash.db.indexes import INDEXES
from qdash.route import Remote, find_route
from qdash.settings import ModelSettings, Settings, get_settings

HTTP_TIMEOUT_S = 2.0
DEFAULT_OLLAMA_URL = "http://localhost:11434"
OPENAI_URL = "https://api.openai.com/v1"
EXIT_FAILED = 1


Status = Literal["OK", "WARN", "FAIL"]


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str

    def line(self) -> str:
        return f"{self.status:<4} {self.name}: {self.detail}"


def run_checks(settings: Settings) -> list[Check]:
    """Every check after the configuration one, in display order (blocking; ~2 s per dead server)."""
    checks = [check_database(settings)]
    demo_answers = demo_is_default(settings)
    for alias, model in settings.copilot.models.items():
        check = check_model(alias, model, required=alias == settings.copilot.default_model)
        if check.status == "FAIL" and demo_answers:
            check = replace(check, status="WARN", detail=f"{check.detail}; until then the demo model answers")
        checks.append(check)
    if demo_answers:
        detail = (
            "no configured model answers, so `qdash serve` and `qdash ask` answer the suggested questions "
            "with the demo model (scripted answers) until one does"
        )
        checks.append(Check("demo model", "OK", detail))
    return checks


def check_database(settings: Settings) -> Check:
    if (missing := not_created(settings.database)) is not None:
        return Check("database", "OK", f"embedded; {missing}")
    try:
        route = find_route(lambda: open_database(settings.database))
    except DatabaseUnavailableError as exc:  # a store held by another command included
        return Check("database", "FAIL", str(exc))
    if isinstance(route, Remote):  # a running ``qdash serve`` owns the embedded files: healthy
        server = route.server
        return Check(
            "database", "OK", f"embedded, held by a running server (PID {server.pid} at {server.url})"
        )
    db = route.db
    try:
        mode = database_mode(db)
        names = set(db.list_collection_names())
        counts = {name: db[name].estimated_document_count() for name in sorted(names)}
    finally:
        close_database(db)
    total = sum(counts.values())
    where = f"{settings.database.data_dir}" if mode == "embedded" else "server"
    if not settings.database.embedded_persist and mode == "embedded":
        where = "in memory (database.embedded_persist: false)"
    lab = ", ".join(f"{name} {count:,}" for name, count in counts.items() if count and name in INDEXES)
    detail = f"{mode} ({where}); {total:,} documents" + (f" [{lab}]" if lab else "")
    if total == 0:
        detail += "; empty: `qdash serve` seeds the demo lab (embedded), or run `qdash demo seed`"
    return Check("database", "OK", detail)


def check_model(alias: str, model: ModelSettings, required: bool) -> Check:
    """Contact the model's server (every provider, a custom ``base_url`` included).

    OpenAI and compatible servers answer ``GET <base_url>/models`` (with the key when one is set);
    Ollama ``GET /api/version``. The key itself is never printed, only whether its variable is set.
    """
    name = f"model {alias} ({model.provider} {model.name})" + ("" if required else " (optional)")
    failed: Status = "FAIL" if required else "WARN"
    if model.provider == "demo":
        return Check(name, "OK", "scripted answers, no server to contact")
    variable = model.api_key_env or ("OPENAI_API_KEY" if model.provider == "openai" else None)
    key = os.environ.get(variable) if variable else None
    if model.provider == "ollama":
        root = (model.base_url or DEFAULT_OLLAMA_URL).rstrip("/").removesuffix("/v1")
        url = f"{root}/api/version"
        fix = f"start Ollama (`ollama serve`, or `docker compose --profile ollama up -d`) at {root}"
    elif model.base_url:
        url = f"{model.base_url.rstrip('/')}/models"
        fix = f"start the server at {model.base_url} or correct copilot.models.{alias}.base_url"
    elif model.provider == "openai":
        if not key:
            return Check(name, failed, f"{variable} is not set; export {variable}=<your key>")
        url = f"{OPENAI_URL}/models"
        fix = f"check the network and the key in {variable}"
    else:
        return Check(name, failed, f"no base_url; set copilot.models.{alias}.base_url")
    headers = {"Authorization": f"Bearer {key}"} if key and model.provider != "ollama" else {}
    ok, detail = _http_get(url, headers)
    if key and model.provider != "ollama":
        detail = f"{variable} is set; {detail}"
    return Check(name, "OK", detail) if ok else Check(name, failed, f"{detail}; {fix}")


def _http_get(url: str, headers: dict[str, str]) -> tuple[bool, str]:
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
            body = response.read(4096)
    except urllib.error.HTTPError as exc:
        return False, f"GET {url} answered HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return False, f"GET {url} failed ({reason})"
    detail = f"GET {url} answered"
    try:
        payload = json.loads(body)
    except ValueError:
        return True, detail
    if isinstance(payload, dict) and "version" in payload:
        detail += f" (version {payload['version']})"
    elif isinstance(payload, dict) and isinstance(payload.get("data"), list):
        detail += f" ({len(payload['data'])} models)"
    return True, detail


def doctor() -> None:
    """Check configuration, database and model servers; exit 1 when a required check fails (FAIL).

    WARN lines (an optional model, or the default one while the demo model answers) do not fail it.
    """
    settings = get_settings()
    typer.echo(f"OK   config: {describe_sources(settings.config_dir, os.environ)}")
    checks = run_checks(settings)
    for check in checks:
        typer.echo(check.line())
    if any(check.status == "FAIL" for check in checks):
        raise typer.Exit(EXIT_FAILED)
