"""Configuration: environment (``QDASH_`` prefix) over ``copilot.yaml`` files over defaults.

Why one module: every layer reads the same validated object, so a bad value stops start-up once,
with one message naming the key and the fix, instead of failing later inside a request.

Order of precedence (highest first):
1. environment variables, ``QDASH_<SECTION>__<KEY>`` (e.g. ``QDASH_SANDBOX__WALL_S=3``) plus the
   flat aliases ``QDASH_MONGO_URI`` and ``QDASH_DATA_DIR``;
2. the local override file ``<config dir>/copilot.local.yaml`` (or ``$QDASH_CONFIG_LOCAL``), not
   committed (``qdash init`` writes one with every key commented);
3. ``<config dir>/copilot.yaml`` (or ``$QDASH_CONFIG``), else the packaged ``qdash/defaults/copilot.yaml``;
4. the defaults below.

The config dir is ``$QDASH_CONFIG_DIR``, else ``./config`` (see :mod:`qdash.config_files`); relative
``database.data_dir`` values (default ``var``) are resolved against the working directory.

Each section is its own model so the package that owns it can grow it without touching the others.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from qdash.config_files import CONFIG_DIR_ENV, config_file, default_config_dir


class Section(BaseModel):
    """Base of every section: unknown keys are errors, so typos in YAML are caught at start-up.

    A key's note for ``qdash init`` is its ``Field(description=…)``, not an attribute docstring:
    pydantic reads those by re-parsing each class's source, half of this module's import time, which
    every command pays.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class DatabaseSettings(Section):
    """Where the data lives. No URI means the embedded store under ``data_dir``."""

    mongo_uri: str | None = None
    name: str = "qdash"
    data_dir: Path = Field(Path("var"), validate_default=True)
    server_selection_timeout_ms: int = Field(5000, ge=100, le=60000)
    embedded_persist: bool = True
    embedded_warn_documents: int = Field(20_000, ge=1)
    seed_demo_on_empty: bool = True
    #: ``create_missing``: add the indexes our queries need that are missing (on a lab's database only
    #: non-unique ones named ``copilot_…``; nothing is ever dropped or changed there). ``off``: touch no
    #: index (start-up logs how many are missing; ``qdash db check`` lists them).
    indexes: Literal["create_missing", "off"] = "create_missing"

    @field_validator("mongo_uri")
    @classmethod
    def _check_uri(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not value.startswith(("mongodb://", "mongodb+srv://")):
            raise ValueError(
                "must start with mongodb:// or mongodb+srv:// (leave it unset for the embedded store)"
            )
        return value

    @field_validator("data_dir")
    @classmethod
    def _absolute_data_dir(cls, value: Path) -> Path:
        """Relative to the working directory at start-up, so a later chdir cannot move the data."""
        return value.expanduser().absolute()


class WireQuirks(Section):
    """What a model's server needs beyond the OpenAI wire; all off is OpenAI's own behaviour."""

    chat_reasoning_field: Literal["reasoning_content", "reasoning"] | None = Field(
        None,
        description="Chat: keep the reasoning the server sent and send it back on the assistant message "
        "under this key (DeepSeek-style servers, vLLM and Ollama thinking models lose their chain of "
        "thought between rounds otherwise).",
    )
    chat_thought_signatures: bool = Field(
        False,
        description="Chat: keep Gemini's ``extra_content.google.thought_signature`` on tool calls and send "
        "it back (Gemini's OpenAI-compatible endpoint refuses function calls without it).",
    )
    responses_bare_function_calls: bool = Field(
        False,
        description="Responses: send function calls back with ``status: null`` and without item ids (vLLM).",
    )


class ModelSettings(Section):
    """One configured LLM, chosen by its alias (``model_override`` may only name an alias)."""

    provider: Literal["openai", "ollama", "openai_compatible", "demo"] = Field(
        "openai",
        description="``demo``: scripted answers for a first try without a model "
        "(``qdash.copilot.demo_model``).",
    )
    name: str = "gpt-5-mini"
    api_style: Literal["responses", "chat_completions"] = "responses"
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    max_output_tokens: int = Field(16384, ge=256, le=200_000)
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = None
    tool_mode: Literal["auto", "native", "text"] = "auto"
    multimodal: bool = True
    read_timeout_s: float = Field(60.0, gt=0, le=600)
    price_input_per_mtok: float = Field(0.0, ge=0)
    price_cached_input_per_mtok: float = Field(0.0, ge=0)
    price_output_per_mtok: float = Field(0.0, ge=0)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    wire: WireQuirks = Field(default_factory=WireQuirks)


class Suggestion(Section):
    label: str
    prompt: str


class CopilotSettings(Section):
    """Chat-level behaviour and the model catalogue."""

    enabled: bool = True
    thinking_language: str = "en"
    response_language: str = "en"
    default_model: str = "openai"
    models: dict[str, ModelSettings] = Field(default_factory=lambda: {"openai": ModelSettings()})
    request_timeout_s: float = Field(180.0, gt=0, le=3600)
    history_max_chars: int = Field(24_000, ge=1000)
    history_digest_chars: int = Field(
        6_000,
        ge=0,
        description="Older turns beyond the history window become a digest of this size (0: left out).",
    )
    timezone: str = "UTC"
    initial_message: str = "Hi! Ask me about your chip: qubit parameters, trends, failed fits, heatmaps."
    suggestions: list[Suggestion] = Field(default_factory=list)
    demo_when_no_model: bool = Field(
        True,
        description="Add the demo model (scripted answers) as the default when no configured model is "
        "usable.",
    )
    evaluation_metrics: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "qubit": ["t1", "t2_echo", "t2_star", "x90_gate_fidelity", "average_readout_fidelity"],
            "coupling": ["zx90_gate_fidelity", "bell_state_fidelity"],
        }
    )

    @model_validator(mode="after")
    def _default_model_exists(self) -> CopilotSettings:
        if self.default_model not in self.models:
            raise ValueError(
                f"default_model '{self.default_model}' is not one of the configured models "
                f"{sorted(self.models)}; add it under copilot.models or pick one of those"
            )
        return self


class LabSettings(Section):
    """Facts about the lab whose upstream QDash database we read.

    ``timezone``: the IANA zone of the lab's calibration workers. The Qubex backend writes naive
    local timestamps into calibration notes; they are read in this zone (default UTC, which is
    right only for a lab whose workers run in UTC).
    ``figure_roots``: where upstream's absolute figure paths are on this machine, as
    ``{stored path prefix: local directory}`` (e.g. ``/app/calib_data: /mnt/qdash/calib_data``).
    Analysis reads a figure only below one of these directories (or the data directory).
    """

    timezone: str = "UTC"
    figure_roots: dict[str, Path] = Field(default_factory=dict)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown timezone '{value}'; use an IANA name such as UTC or Asia/Tokyo"
            ) from None
        return value

    @field_validator("figure_roots")
    @classmethod
    def _absolute_prefixes(cls, value: dict[str, Path]) -> dict[str, Path]:
        for prefix, local in value.items():
            if not prefix.startswith("/"):
                raise ValueError(
                    f"figure_roots prefix '{prefix}' must be an absolute path as stored by upstream QDash, "
                    "e.g. /app/calib_data"
                )
            if not local.is_absolute():
                raise ValueError(f"figure_roots['{prefix}'] = '{local}' must be an absolute local directory")
        return value


class AnalysisSettings(Section):
    enabled: bool = True
    multimodal: bool = True
    max_conversation_turns: int = Field(10, ge=0, le=100)
    max_image_bytes: int = Field(5 * 1024 * 1024, ge=1024)


class ScoreThreshold(Section):
    """One scoring entry; a value on a boundary belongs to the better class.

    Numbers are display values when ``scale`` is set.
    """

    unit: str
    bad: float | None = None
    good: float
    excellent: float
    higher_is_better: bool = True
    scale: float | None = Field(None, gt=0)
    stored_unit: str | None = Field(
        None, description="unit of the stored values; required with scale (e.g. GHz when unit is MHz)"
    )

    @model_validator(mode="after")
    def _ordered(self) -> ScoreThreshold:
        if self.scale is not None and not self.stored_unit:
            raise ValueError("scale needs stored_unit (the unit of stored values, e.g. GHz for MHz ×1000)")
        bad = self.bad
        if self.higher_is_better:
            ok = (bad is None or bad < self.good) and self.good <= self.excellent
            rule = "bad < good <= excellent"
        else:
            ok = (bad is None or bad > self.good) and self.good >= self.excellent
            rule = "bad > good >= excellent"
        if not ok:
            direction = "higher" if self.higher_is_better else "lower"
            raise ValueError(f"thresholds must satisfy {rule} when {direction} is better")
        return self

    def stored(self, value: float | None) -> float | None:
        """Threshold number in stored units (divides by ``scale`` when the config used display units)."""
        if value is None or self.scale is None:
            return value
        return value / self.scale

    def bounds(self) -> tuple[float, float, float | None]:
        """``excellent``, ``good`` and ``bad`` (None when unset) in stored units."""
        scale = self.scale or 1.0
        return self.excellent / scale, self.good / scale, None if self.bad is None else self.bad / scale


LabCollection = Literal[
    "chip",
    "qubit",
    "coupling",
    "task_result_history",
    "execution_history",
    "calibration_note",
    "parameter_versions",
]
"""The lab-data collections a config tool may query (all scoped to the caller's project)."""


class CustomQuerySettings(Section):
    """The read-only query a config tool runs; ``"$name"`` values are replaced by the call's arguments."""

    collection: LabCollection
    filter: dict[str, Any] = Field(default_factory=dict)
    fields: list[str] = Field(default_factory=list, description="projection; empty = whole documents")
    sort: dict[str, Literal[1, -1]] = Field(default_factory=dict)
    limit: int | str = Field(20, description="a number (1-100) or '$<int parameter>'")


class CustomToolSettings(Section):
    """One config-declared tool: curried signature + description + the query it runs."""

    signature: str = Field(description="e.g. '(qid::Text)==>(last_n::Int {default:5})==>(::[Object])'")
    description: str
    label: str = "Querying calibration data"
    query: CustomQuerySettings


class ToolsSettings(Section):
    max_concurrency: int = Field(8, ge=1, le=64)
    timeout_s: float = Field(20.0, gt=0, le=300)
    timeseries_call_limit: int = Field(3, ge=1, le=50)
    max_identical_calls: int = Field(2, ge=1, le=20)
    max_result_chars: int = Field(12_000, ge=1000)
    answer_table_chars: int = Field(
        6_000, ge=0, description="per-qubit tables of chip-wide tools shown up to this size; else extremes"
    )
    investigation: bool = Field(
        False,
        description="offer get_degradation_report and suggest_recalibration to the model (their schemas "
        "cost ~230 o200k tokens per request, beyond the prompt budget; see docs/tools.md)",
    )
    data_store_ttl_s: int = Field(24 * 3600, ge=60)
    data_store_max_bytes: int = Field(16 * 1024 * 1024, ge=1024)
    data_store_key_max_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    custom: dict[str, CustomToolSettings] = Field(
        default_factory=dict, description="extra simple tools declared in config (docs/tools.md)"
    )


class AgentSettings(Section):
    max_rounds: int = Field(10, ge=1, le=100)
    max_rounds_local: int = Field(16, ge=1, le=100)
    max_tool_calls: int = Field(40, ge=1, le=500)
    max_tokens_per_turn: int = Field(300_000, ge=1000)
    turn_time_s: float = Field(120.0, gt=0, le=3600)
    max_retries: int = Field(2, ge=0, le=10)
    log_tool_payloads: bool = False


class SandboxSettings(Section):
    wall_s: float = Field(5.0, gt=0, le=120)
    cpu_s: int = Field(5, ge=1, le=120)
    memory_mib: int = Field(1024, ge=64, le=65536)
    output_chars: int = Field(65_536, ge=1024)
    result_bytes: int = Field(2 * 1024 * 1024, ge=1024)
    input_bytes: int = Field(16 * 1024 * 1024, ge=1024)
    max_concurrency: int = Field(4, ge=1, le=64)
    spares: int = Field(2, ge=0, le=32)
    uid: int = Field(65534, ge=0)
    restart_every: int = Field(500, ge=1)
    require: list[str] = Field(default_factory=lambda: ["privdrop", "net"])
    seccomp: bool = True
    fs: Literal["landlock", "none"] = "landlock"
    prefault: bool = True

    @field_validator("require")
    @classmethod
    def _known_layers(cls, value: list[str]) -> list[str]:
        known = {"privdrop", "net", "rlimits", "seccomp", "fs"}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(f"unknown layer(s) {unknown}; choose from {sorted(known)}")
        return value


class UploadSettings(Section):
    max_bytes: int = Field(20 * 1024 * 1024, ge=1024)
    max_rows: int = Field(200_000, ge=10)
    max_columns: int = Field(200, ge=1)


class ApiSettings(Section):
    host: str = "127.0.0.1"
    port: int = Field(5715, ge=1, le=65535)
    max_concurrent_streams_per_user: int = Field(4, ge=1, le=100)
    chat_requests_per_minute: int = Field(30, ge=1, le=10_000)
    heartbeat_s: float = Field(2.0, gt=0, le=60)
    # Event vocabulary of the chat and analysis streams (docs/api.md, "Upstream dialect"): auto
    # serves the newest upstream dashboard (its requests carry request_id) its own events and every
    # other client the contract's; contract or upstream_latest force one for every request
    # (upstream_latest keeps the contract's text and chart blocks for requests without request_id).
    stream_dialect: Literal["auto", "contract", "upstream_latest"] = "auto"
    # Largest request body, refused with 413 before it is parsed (uploads have uploads.max_bytes).
    # 12 MiB holds the largest body we accept: an analysis request with a 5 MiB image (6.7 MiB as
    # base64) and 4 MiB of history, or a session PATCH up to its 8 MiB document limit.
    max_body_bytes: int = Field(12 * 1024 * 1024, ge=1024)
    cors_origins: list[str] = Field(default_factory=list)
    # Threads for blocking work (database calls, tool queries). None: 4 on the embedded store, whose
    # calls are Python holding the GIL (more threads only make the event loop wait longer for it),
    # 40 on a MongoDB server, whose calls mostly wait on the network with the GIL released.
    worker_threads: int | None = Field(None, ge=1, le=256)


class ActionsSettings(Section):
    """Lab actions the copilot may propose and a person approves (``qdash.actions``).

    Off by default: with ``enabled: false`` no write tool is offered to the model (the prompt
    budget is untouched) and decisions in chat requests are ignored."""

    enabled: bool = Field(
        False, description="offer the write tools; every write still needs a person's approval"
    )
    exclude_task_result: bool = Field(
        True, description="exclude a task result from statistics and restore it (upstream's excluded fields)"
    )
    note_task_result: bool = Field(True, description="write a task result's note (upstream's user_note)")
    label_ai_review: bool = Field(True, description="a person's decision and label on an AI review")
    approval_ttl_s: int = Field(
        900, ge=10, le=7 * 24 * 3600, description="how long a proposal waits for the user's decision"
    )


class ReviewSettings(Section):
    """AI review of task results (``qdash.review``)."""

    model: str | None = Field(None, description="configured model alias; default: copilot.default_model")
    concurrency: int = Field(4, ge=1, le=64, description="results reviewed at once by one bulk job")
    max_results_per_job: int = Field(5000, ge=1, le=100_000)
    daily_token_budget: int | None = Field(
        None,
        ge=0,
        description="model tokens (input + output) one project's reviews may use per UTC calendar day; "
        "null: unlimited",
    )
    project_budgets: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=dict, description="daily token budget per project id, over daily_token_budget"
    )
    reserve_tokens: int = Field(
        6000,
        ge=1,
        description="tokens reserved before a project's first model request of the day; later requests "
        "reserve the day's largest real usage",
    )
    project_concurrency: int = Field(
        4,
        ge=1,
        le=64,
        description="model reviews of one project at once, across all jobs of every process on the "
        "database (API replicas, the CLI's watcher)",
    )
    slot_wait_s: float = Field(
        600.0,
        ge=0,
        le=86_400,
        description="longest wait for one of a project's review slots; past it the result is left "
        "unreviewed for a later run",
    )
    auto_resume: bool = Field(True, description="API servers take over jobs whose process died")
    lease_s: float = Field(
        30.0,
        ge=0.2,
        le=3600,
        description="a running job's (and a model review slot's) lease: not renewed for this long, it "
        "is taken over",
    )
    lease_renew_s: float = Field(
        10.0, gt=0, le=1200, description="how often a running job (and a review slot) renews its lease"
    )
    resume_interval_s: float = Field(
        15.0, ge=0.1, le=3600, description="how often an API server looks for jobs to take over"
    )
    max_resumed_jobs: int = Field(2, ge=1, le=64, description="jobs taken over that one server runs at once")
    max_auto_resumes: int = Field(
        5, ge=0, le=1000, description="a job resumed this often (by hand or taken over) is left to a human"
    )

    def budget_for(self, project_id: str) -> int | None:
        """The project's daily token budget: its own entry, else ``daily_token_budget`` (None: unlimited)."""
        return self.project_budgets.get(project_id, self.daily_token_budget)

    @model_validator(mode="after")
    def _renewed_before_expiry(self) -> ReviewSettings:
        if self.lease_renew_s >= self.lease_s:
            raise ValueError(
                f"review.lease_renew_s ({self.lease_renew_s}) must be below review.lease_s ({self.lease_s}), "
                "or a live job's lease expires between renewals; a third of the lease is a good choice"
            )
        return self


class LoggingSettings(Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    json_output: bool = Field(False, alias="json")


def _default_scoring() -> dict[str, ScoreThreshold]:
    rows: dict[str, tuple[str, float | None, float, float, bool]] = {
        "t1": ("μs", 20, 50, 100, True),
        "t1_average": ("μs", 20, 50, 100, True),
        "t2_echo": ("μs", 30, 80, 150, True),
        "t2_echo_average": ("μs", 30, 80, 150, True),
        "t2_star": ("μs", 10, 20, 40, True),
        "average_readout_fidelity": ("a.u.", 0.85, 0.95, 0.99, True),
        "x90_gate_fidelity": ("a.u.", 0.98, 0.995, 0.999, True),
        "x180_gate_fidelity": ("a.u.", 0.98, 0.995, 0.999, True),
        "zx90_gate_fidelity": ("a.u.", 0.85, 0.95, 0.99, True),
        "bell_state_fidelity": ("a.u.", 0.80, 0.90, 0.95, True),
        "anharmonicity": ("GHz", -0.250, -0.280, -0.320, False),
    }
    return {
        key: ScoreThreshold(unit=u, bad=b, good=g, excellent=e, higher_is_better=h)
        for key, (u, b, g, e, h) in rows.items()
    }


class Settings(BaseSettings):
    """The whole validated configuration."""

    model_config = SettingsConfigDict(
        env_prefix="QDASH_",
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
        populate_by_name=True,
    )

    database: DatabaseSettings = Field(default_factory=DatabaseSettings)  # data_dir: cwd at load time
    copilot: CopilotSettings = CopilotSettings()
    lab: LabSettings = LabSettings()
    analysis: AnalysisSettings = AnalysisSettings()
    scoring: dict[str, ScoreThreshold] = Field(default_factory=_default_scoring)
    tools: ToolsSettings = ToolsSettings()
    agent: AgentSettings = AgentSettings()
    sandbox: SandboxSettings = SandboxSettings()
    uploads: UploadSettings = UploadSettings()
    api: ApiSettings = ApiSettings()
    review: ReviewSettings = ReviewSettings()
    actions: ActionsSettings = ActionsSettings()
    logging: LoggingSettings = LoggingSettings()
    config_dir: Path = Field(default_factory=default_config_dir)
    #: False in a subclass that shows what the configuration files alone give (``qdash init``).
    read_environment: ClassVar[bool] = True

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (env_settings, init_settings) if cls.read_environment else (init_settings,)

    @field_validator("scoring", mode="before")
    @classmethod
    def _scoring_over_defaults(cls, value: Any) -> Any:
        """A metric given in part (``scoring.t1.good: 60``) keeps the rest of its default entry,
        and metrics not given keep theirs: overriding one number must not mean restating them all."""
        if not isinstance(value, dict):
            return value
        merged: dict[str, Any] = {name: entry.model_dump() for name, entry in _default_scoring().items()}
        for name, entry in value.items():
            default = merged.get(name)
            merged[name] = {**default, **entry} if isinstance(entry, dict) and default else entry
        return merged


class ConfigError(Exception):
    """A configuration problem; its message names the key and how to fix it."""


def read_yaml(path: Traversable | None) -> dict[str, Any]:
    if path is None or not path.is_file():
        return {}
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc}); fix the syntax at the position shown") from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections (database:, copilot:, …)")
    return loaded


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _flat_env_aliases() -> dict[str, Any]:
    """Short names operators expect (``QDASH_MONGO_URI``, ``QDASH_DATA_DIR``) on top of nested ones."""
    database: dict[str, Any] = {}
    if (uri := os.environ.get("QDASH_MONGO_URI")) is not None:
        database["mongo_uri"] = uri
    if (data_dir := os.environ.get("QDASH_DATA_DIR")) is not None:
        database["data_dir"] = data_dir
    return {"database": database} if database else {}


def format_validation_error(exc: ValidationError) -> str:
    lines = ["invalid configuration:"]
    for err in exc.errors():
        key = ".".join(str(part) for part in err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden":
            hint = "unknown key; check its spelling (`qdash init` lists every key) or remove it"
        else:
            hint = err["msg"].removeprefix("Value error, ")
        given = err.get("input")
        # A whole section as the input (a cross-field rule such as default_model) would bury the
        # message under the dump; its message names what is wrong and the choices instead.
        shown = "" if isinstance(given, dict | list) else f" (got {given!r})"
        lines.append(f"  {key}: {hint}{shown}")
    lines.append("Fix copilot.yaml or copilot.local.yaml in the config directory, or the QDASH_* variable.")
    return "\n".join(lines)


def _config_dir(config_dir: Path | None) -> Path:
    """The folder whose files override the packaged defaults; a named one must exist."""
    if config_dir is None and CONFIG_DIR_ENV not in os.environ:
        return default_config_dir()  # ./config: optional
    directory = Path(config_dir) if config_dir is not None else default_config_dir()
    if not directory.is_dir():
        raise ConfigError(
            f"config directory {directory} does not exist; create it with `qdash init {directory}` "
            f"or unset {CONFIG_DIR_ENV} to use the packaged defaults"
        )
    return directory.absolute()


def load_settings(config_dir: Path | None = None, **overrides: Any) -> Settings:
    """Read, merge and validate the configuration; raise ConfigError with a readable message."""
    directory = _config_dir(config_dir)
    main_env = os.environ.get("QDASH_CONFIG")
    main_file = Path(main_env) if main_env else config_file("copilot.yaml", directory)
    local_file = Path(os.environ.get("QDASH_CONFIG_LOCAL", directory / "copilot.local.yaml"))
    data = _deep_merge(read_yaml(main_file), read_yaml(local_file))
    data = _deep_merge(data, _flat_env_aliases())
    data = _deep_merge(data, overrides)
    data.setdefault("config_dir", directory)
    try:
        # The env source inside BaseSettings wins over the init values for nested keys.
        return Settings(**data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Process-wide settings, loaded once (tests build their own with ``load_settings``)."""
    return load_settings()
