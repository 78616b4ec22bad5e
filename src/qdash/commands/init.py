"""``qdash init [DIR]``: write an editable ``copilot.local.yaml`` with every key commented out.

Why generated: the file is rendered from the settings model (each section, each key, its current
value and its description), so it cannot drift from what the loader accepts. The values shown are
those of the ``copilot.yaml`` in effect for that directory (its own, else the packaged one) over
the model's defaults; environment variables are left out on purpose (they may hold secrets, and the
file should say what the configuration files do). Uncommenting every key reproduces that
configuration exactly (a test does this).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from pydantic import BaseModel, ValidationError

from qdash.config_files import CONFIG_DIR_ENV, config_file, default_config_dir
from qdash.settings import ConfigError, DatabaseSettings, Settings, format_validation_error, read_yaml

LOCAL_FILE = "copilot.local.yaml"
NOT_A_KEY = frozenset({"config_dir"})
"""Settings fields that are not configuration keys (``config_dir`` is where this file lives)."""

HEADER = """\
## QDash Copilot local settings, written by `qdash init` from the settings model.
## Every key is commented out and shows its current value: uncomment a key (remove "# ") and edit
## it. Precedence: QDASH_<SECTION>__<KEY> environment variables > this file > copilot.yaml
## (this directory's, else the packaged default) > built-in defaults. Unknown keys stop start-up.
## Relative paths are resolved against the working directory. `qdash doctor` checks the result.
"""


class _FilesOnly(Settings):
    """The settings the configuration files give, without environment variables."""

    read_environment = False


def _comment_lines(text: str, indent: int) -> list[str]:
    pad = " " * indent
    return [f"# {pad}{line}" for line in text.splitlines()]


def _section_lines(section: BaseModel, values: dict[str, Any]) -> list[str]:
    """One section: its docstring as a note, then each key (``## description`` above it when set)."""
    lines: list[str] = []
    if doc := (type(section).__doc__ or "").strip():
        lines.append(f"#   ## {doc.splitlines()[0].replace('``', '`')}")
    for name, field in type(section).model_fields.items():
        key = field.alias or name
        if field.description:
            first, *rest = field.description.replace("``", "`").splitlines()
            lines.append(f"#   ## {key}: {first}")
            lines.extend(f"#   ##   {line.strip()}" for line in rest if line.strip())
        dumped = yaml.safe_dump({key: values[key]}, sort_keys=False, allow_unicode=True, width=100)
        lines.extend(_comment_lines(dumped, 2))
    return lines


def render_local_file(config_dir: Path) -> str:
    """The commented ``copilot.local.yaml`` for ``config_dir``."""
    raw = read_yaml(config_file("copilot.yaml", config_dir))
    try:
        settings = _FilesOnly(**raw)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc)) from None
    values = settings.model_dump(mode="json", by_alias=True, exclude=set(NOT_A_KEY))
    # data_dir is made absolute at load time; show what the file says (default: var, under the cwd).
    values["database"]["data_dir"] = str(
        raw.get("database", {}).get("data_dir", DatabaseSettings.model_fields["data_dir"].default)
    )
    lines = [HEADER]
    for name in type(settings).model_fields:
        if name in NOT_A_KEY:
            continue
        section = getattr(settings, name)
        if isinstance(section, BaseModel):
            lines.append(f"# {name}:")
            lines.extend(_section_lines(section, values[name]))
        else:
            dumped = yaml.safe_dump({name: values[name]}, sort_keys=False, allow_unicode=True, width=100)
            lines.extend(_comment_lines(dumped, 0))
        lines.append("")
    return "\n".join(lines)


def init(
    directory: Annotated[
        Path | None,
        typer.Argument(help=f"config directory (default: ${CONFIG_DIR_ENV}, else ./config)"),
    ] = None,
    force: Annotated[bool, typer.Option(help=f"overwrite an existing {LOCAL_FILE}")] = False,
) -> None:
    """Write an editable copilot.local.yaml with every key commented out (and its current value)."""
    target_dir = (directory or default_config_dir()).expanduser().absolute()
    target = target_dir / LOCAL_FILE
    if target.exists() and not force:
        typer.echo(f"error: {target} already exists; edit it, or pass --force to rewrite it", err=True)
        raise typer.Exit(1)
    target_dir.mkdir(parents=True, exist_ok=True)
    target.write_text(render_local_file(target_dir), encoding="utf-8")
    typer.echo(f"wrote {target}: uncomment and edit the keys you change; `qdash doctor` checks it")
    if target_dir != default_config_dir():
        typer.echo(f"qdash reads this directory when {CONFIG_DIR_ENV}={target_dir} is set")
