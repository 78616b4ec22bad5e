"""A chip's topology: chip document → ``topologies/<topology_id>.yaml`` (config dir, else packaged).

Why cached: the 144-qubit file takes milliseconds to parse and validate, and coupling and heatmap
calls need it on every request; the cache key includes the file chosen and its mtime, so edits and
a newly added override are picked up.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from qdash.copilot.tools.spec import ToolContext, ToolError
from qdash.models.topology import Topology, TopologyError, load_topology, topology_file
from qdash.repositories.chips import get_chip
from qdash.repositories.scope import Doc, ProjectScope


@lru_cache(maxsize=32)
def _cached(topology_id: str, config_dir: Path, _source: str, _mtime: float) -> Topology:
    return load_topology(topology_id, config_dir)


def _load(topology_id: str, config_dir: Path) -> Topology:
    source = topology_file(topology_id, config_dir)
    mtime = source.stat().st_mtime if isinstance(source, Path) else -1.0
    return _cached(topology_id, config_dir, str(source), mtime)


def chip_topology(ctx: ToolContext, scope: ProjectScope, chip_id: str) -> tuple[Doc, Topology]:
    """The chip document and its topology, or ``Chip <chip> not found or has no topology``."""
    chip = get_chip(scope, chip_id)
    topology_id = chip.get("topology_id") if chip else None
    if chip is None or not topology_id:
        raise ToolError(f"Chip {chip_id} not found or has no topology", "check chip_id, or pass null")
    try:
        return chip, _load(str(topology_id), ctx.settings.config_dir)
    except TopologyError as exc:
        raise ToolError(f"Chip {chip_id} not found or has no topology ({exc})") from None
