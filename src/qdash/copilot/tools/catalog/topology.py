"""A chip's topology: chip document → ``topologies/<topology_id>.yaml`` (config dir, else packaged).

Why cached: the 144-qubit file takes milliseconds to parse and validate, and coupling and heatmap
calls need it on every request; the cache key includes the file chosen and its mtime, so edits and
a newly added override are picked up.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from qdash.copilot.tools.catalog.formatting import qid_sort_key
from qdash.copilot.tools.spec import ToolContext, ToolError
from qdash.models.topology import Topology, TopologyError, fallback_topology, load_topology, topology_file
from qdash.repositories.chips import get_chip
from qdash.repositories.current_state import list_couplings
from qdash.repositories.scope import Doc, ProjectScope


@lru_cache(maxsize=32)
def _cached(topology_id: str, config_dir: Path, _source: str, _mtime: float) -> Topology:
    return load_topology(topology_id, config_dir)


def _load(topology_id: str, config_dir: Path) -> Topology:
    source = topology_file(topology_id, config_dir)
    mtime = source.stat().st_mtime if isinstance(source, Path) else -1.0
    return _cached(topology_id, config_dir, str(source), mtime)


def chip_topology(ctx: ToolContext, scope: ProjectScope, chip_id: str) -> tuple[Doc, Topology]:
    """The chip document and its topology, or ``Chip <chip> not found or has no topology``.

    Upstream QDash chips often carry no ``topology_id`` (it came late upstream): those get the
    fallback grid (``Topology.description`` says so) with the pairs their coupling documents hold.
    """
    chip = get_chip(scope, chip_id)
    if chip is None:
        raise ToolError(f"Chip {chip_id} not found or has no topology", "check chip_id, or pass null")
    topology_id = chip.get("topology_id")
    if not topology_id:
        return chip, _without_file(scope, chip_id, chip)
    try:
        return chip, _load(str(topology_id), ctx.settings.config_dir)
    except TopologyError as exc:
        raise ToolError(f"Chip {chip_id} not found or has no topology ({exc})") from None


def _without_file(scope: ProjectScope, chip_id: str, chip: Doc) -> Topology:
    """The fallback grid for the chip's size, coupled as its coupling documents say (each physical
    pair once, whichever direction upstream wrote first)."""
    docs = list_couplings(scope, chip_id, projection={"qid": 1})
    pairs: dict[frozenset[int], tuple[int, int]] = {}
    for qid in sorted(docs, key=qid_sort_key):
        left, sep, right = qid.partition("-")
        if sep and left.isdigit() and right.isdigit() and left != right:
            pairs.setdefault(frozenset((int(left), int(right))), (int(left), int(right)))
    size = max([int(chip.get("size") or 0), *(q + 1 for pair in pairs.values() for q in pair), 1])
    grid = fallback_topology(size)
    return grid.model_copy(
        update={
            "description": "the chip has no topology_id: "
            + grid.description
            + " (couplings from the database)",
            "couplings": list(pairs.values()),
        }
    )
