"""Chip topologies: the model of ``topologies/<id>.yaml`` and its loader.

Topologies are files, not documents: they describe hardware layouts shared by many chips. A chip
whose topology file is missing or invalid still gets a usable geometry: a ``ceil(√n)``-wide grid,
row-major, without couplings (:func:`fallback_topology`). Each file is the config directory's
``topologies/<id>.yaml`` when present, else the packaged one (:mod:`qdash.config_files`).
"""

from __future__ import annotations

import math
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from qdash.config_files import config_file, default_config_dir

LayoutType = Literal["grid", "hex", "linear"]


class TopologyError(ValueError):
    """A topology file cannot be used; the message names the file and what to fix."""


class _Section(BaseModel):
    """A part of a topology file: an unknown key is a typo, and fails the file."""

    model_config = ConfigDict(extra="forbid")


class MuxConfig(_Section):
    enabled: bool = False
    size: int = Field(2, ge=1)


class QubitPosition(_Section):
    row: int = Field(ge=0)
    col: int = Field(ge=0)


class Visualization(_Section):
    show_mux_boundaries: bool = False
    region_size: int = Field(4, ge=1)


class Topology(_Section):
    """A chip layout. Each coupling is listed once, ``[control, target]`` under ``checkerboard_cr``."""

    id: str
    name: str = ""
    description: str = ""
    grid_size: int = Field(ge=1)
    num_qubits: int = Field(ge=1)
    layout_type: LayoutType = "grid"
    direction_convention: str = "unspecified"
    mux: MuxConfig = Field(default_factory=MuxConfig)
    qubits: dict[int, QubitPosition]
    couplings: list[tuple[int, int]] = Field(default_factory=list)
    visualization: Visualization = Field(default_factory=Visualization)

    @model_validator(mode="after")
    def _consistent(self) -> Topology:
        if sorted(self.qubits) != list(range(self.num_qubits)):
            raise ValueError(
                f"qubits must be exactly 0..{self.num_qubits - 1} (num_qubits={self.num_qubits})"
            )
        seen: set[frozenset[int]] = set()
        for q1, q2 in self.couplings:
            if q1 not in self.qubits or q2 not in self.qubits or q1 == q2:
                raise ValueError(f"coupling [{q1}, {q2}] must join two different qubits of this topology")
            edge = frozenset((q1, q2))
            if edge in seen:
                raise ValueError(f"coupling [{q1}, {q2}] is listed twice; list each physical edge once")
            seen.add(edge)
        return self

    @property
    def qids(self) -> list[str]:
        """Qubit ids as stored (``"0"`` … ``"n-1"``)."""
        return [str(q) for q in range(self.num_qubits)]

    @property
    def coupling_ids(self) -> list[str]:
        """Coupling ids ``"q1-q2"`` in the listed order and direction."""
        return [f"{q1}-{q2}" for q1, q2 in self.couplings]

    def neighbours(self, qubit: int) -> list[int]:
        """Every qubit coupled to ``qubit``, in coupling-list order."""
        return [b if a == qubit else a for a, b in self.couplings if qubit in (a, b)]

    def resolve_coupling(self, q1: int, q2: int) -> str | None:
        """The listed coupling id for a pair given in either order, or ``None`` when not coupled."""
        for a, b in self.couplings:
            if (a, b) in ((q1, q2), (q2, q1)):
                return f"{a}-{b}"
        return None

    def to_yaml(self) -> str:
        """The YAML text of a topology file (qubit keys as ints, couplings as flow lists)."""
        data = self.model_dump(mode="json")
        data["qubits"] = {int(k): v for k, v in data["qubits"].items()}
        data["couplings"] = [list(pair) for pair in self.couplings]
        head = {k: data[k] for k in data if k not in ("qubits", "couplings", "visualization")}
        text = yaml.safe_dump(head, sort_keys=False, allow_unicode=True)
        text += yaml.safe_dump({"qubits": data["qubits"]}, sort_keys=False, default_flow_style=None)
        text += "couplings:\n" + "".join(f"- [{a}, {b}]\n" for a, b in self.couplings)
        text += yaml.safe_dump({"visualization": data["visualization"]}, sort_keys=False)
        return text


def topology_file(topology_id: str, config_dir: Path | None = None) -> Traversable | None:
    """``topologies/<topology_id>.yaml`` from the config directory, else the package, else None."""
    return config_file(f"topologies/{topology_id}.yaml", config_dir)


def load_topology(topology_id: str, config_dir: Path | None = None) -> Topology:
    """Read and validate ``topologies/<topology_id>.yaml``; raise TopologyError otherwise."""
    if not topology_id or "/" in topology_id or "\\" in topology_id or topology_id.startswith("."):
        raise TopologyError(
            f"invalid topology id {topology_id!r}: use a file stem such as 'square-lattice-mux-64'"
        )
    path = topology_file(topology_id, config_dir)
    if path is None:
        folder = (config_dir or default_config_dir()) / "topologies"
        raise TopologyError(
            f"topology file {topology_id}.yaml not found in {folder} or the packaged defaults; "
            "add it there or fix the chip's topology_id"
        )
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TopologyError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise TopologyError(f"{path}: the top level must be a mapping (id, grid_size, qubits, couplings…)")
    raw.setdefault("id", topology_id)
    if raw["id"] != topology_id:
        raise TopologyError(f"{path}: id {raw['id']!r} must equal the file stem {topology_id!r}")
    try:
        return Topology.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise TopologyError(f"{path}: {where}: {first['msg']}") from None


def fallback_topology(num_qubits: int, topology_id: str | None = None) -> Topology:
    """A ``ceil(√n)``-wide grid, row-major and without couplings, for chips without a usable file."""
    if num_qubits < 1:
        raise TopologyError(
            f"cannot build a fallback grid for {num_qubits} qubits; the chip size must be ≥ 1"
        )
    width = math.ceil(math.sqrt(num_qubits))
    return Topology(
        id=topology_id or f"fallback-grid-{num_qubits}",
        name="Fallback grid",
        description=f"no usable topology file; {width}-wide row-major grid without couplings",
        grid_size=width,
        num_qubits=num_qubits,
        qubits={q: QubitPosition(row=q // width, col=q % width) for q in range(num_qubits)},
    )


def load_topology_or_fallback(
    topology_id: str | None, num_qubits: int, config_dir: Path | None = None
) -> tuple[Topology, str | None]:
    """The chip's topology, or the fallback grid plus the reason the file could not be used."""
    if not topology_id:
        return fallback_topology(num_qubits), "the chip has no topology_id"
    try:
        return load_topology(topology_id, config_dir), None
    except TopologyError as exc:
        return fallback_topology(num_qubits, topology_id), str(exc)
