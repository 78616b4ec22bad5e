"""Where each configuration file comes from: the operator's config directory, else the package.

Why: an installed wheel has no checkout around it, so the default configuration (``copilot.yaml``,
``task_knowledge.yaml``, ``topologies/*.yaml``) ships inside the package (``qdash/defaults``) and is
read through importlib.resources. An operator overrides it file by file: a file with the same
relative name in the config directory replaces the packaged one (a new topology file simply adds
one). The config directory is ``$QDASH_CONFIG_DIR``, else ``./config`` under the working directory
(absent is fine: then every file comes from the package).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

CONFIG_DIR_ENV = "QDASH_CONFIG_DIR"
PACKAGED_DEFAULTS: Traversable = files("qdash") / "defaults"


def default_config_dir() -> Path:
    """``$QDASH_CONFIG_DIR`` if set, else ``./config`` (absolute, resolved against the working dir)."""
    configured = os.environ.get(CONFIG_DIR_ENV)
    return Path(configured or "config").expanduser().absolute()


def packaged_file(name: str) -> Traversable:
    """The packaged default ``name`` (a ``/``-separated path under ``qdash/defaults``)."""
    return PACKAGED_DEFAULTS.joinpath(*name.split("/"))


def config_file(name: str, config_dir: Path | None = None) -> Traversable | None:
    """The operator's ``<config_dir>/<name>`` when it exists, else the packaged default, else None.

    ``config_dir`` None means :func:`default_config_dir`.
    """
    override = (config_dir if config_dir is not None else default_config_dir()) / name
    if override.is_file():
        return override
    packaged = packaged_file(name)
    return packaged if packaged.is_file() else None


def override_names(config_dir: Path) -> list[str]:
    """The configuration files ``config_dir`` holds (each replaces or adds to a packaged one)."""
    if not config_dir.is_dir():
        return []
    names = ("copilot.yaml", "copilot.local.yaml", "task_knowledge.yaml", "calibration_flow.yaml")
    found = [name for name in names if (config_dir / name).is_file()]
    found += sorted(f"topologies/{path.name}" for path in config_dir.glob("topologies/*.yaml"))
    if (config_dir / "knowledge").is_dir():
        found.append("knowledge/")
    return found


def describe_sources(config_dir: Path, environ: Mapping[str, str]) -> str:
    """One line for ``qdash doctor``: packaged defaults, what the config directory overrides, and
    the ``QDASH_*`` variables set. A folder holding no file we read lists what it does hold, so a
    misspelt ``copilot.local.yml`` shows, and is told apart from a folder that is not there."""
    overrides = override_names(config_dir)
    if overrides:
        files = f"packaged defaults, overridden by {config_dir}: {', '.join(overrides)}"
    elif config_dir.is_dir():
        held = sorted(path.name + ("/" if path.is_dir() else "") for path in config_dir.iterdir())
        holds = f"holds no configuration file, only {', '.join(held)}" if held else "is empty"
        files = f"packaged defaults (the config directory {config_dir} {holds})"
    else:
        files = f"packaged defaults (there is no config directory {config_dir})"
    variables = sorted(name for name in environ if name.startswith("QDASH_"))
    return f"{files}; " + (
        f"QDASH_* variables set: {', '.join(variables)}" if variables else "no QDASH_* variables set"
    )
