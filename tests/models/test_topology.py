"""Topology files: counts, MUX numbering, coupling direction, loader errors and the fallback grid."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdash.config_files import packaged_file
from qdash.models import TopologyError, fallback_topology, load_topology, load_topology_or_fallback
from tests.support.topology_builders import render, shipped_topologies


@pytest.mark.parametrize(
    ("topology_id", "qubits", "couplings", "layout"),
    [
        ("square-lattice-mux-64", 64, 112, "grid"),
        ("square-lattice-mux-144", 144, 264, "grid"),
        ("heavy-hex-27", 27, 29, "hex"),
        ("linear-16", 16, 15, "grid"),
    ],
)
def test_shipped_counts(topology_id: str, qubits: int, couplings: int, layout: str) -> None:
    topology = load_topology(topology_id)
    assert topology.id == topology_id
    assert topology.num_qubits == len(topology.qubits) == qubits
    assert len(topology.couplings) == couplings
    assert topology.layout_type == layout


def test_committed_files_equal_the_builders() -> None:
    for topology in shipped_topologies():
        path = packaged_file(f"topologies/{topology.id}.yaml")
        assert path.read_text(encoding="utf-8") == render(topology), f"regenerate {path}"


def test_mux_numbering_and_checkerboard_direction() -> None:
    topology = load_topology("square-lattice-mux-64")
    row0 = sorted((p.col, q) for q, p in topology.qubits.items() if p.row == 0)
    assert [q for _, q in row0] == [0, 1, 4, 5, 8, 9, 12, 13]
    ids = topology.coupling_ids
    assert ids.index("0-1") < ids.index("4-1") < ids.index("3-17")
    for control, target in topology.couplings:
        c, t = topology.qubits[control], topology.qubits[target]
        assert (c.row + c.col) % 2 == 0 and (t.row + t.col) % 2 == 1
        assert abs(c.row - t.row) + abs(c.col - t.col) == 1
    assert topology.direction_convention == "checkerboard_cr"
    assert topology.resolve_coupling(1, 4) == "4-1"
    assert topology.resolve_coupling(0, 63) is None
    assert sorted(topology.neighbours(0)) == [1, 2]


def test_linear_omits_layout_type_and_heavy_hex_is_low_to_high() -> None:
    text = packaged_file("topologies/linear-16.yaml").read_text(encoding="utf-8")
    assert "layout_type" not in text
    assert load_topology("linear-16").couplings == [(i, i + 1) for i in range(15)]
    assert all(a < b for a, b in load_topology("heavy-hex-27").couplings)


def test_loader_errors_name_the_problem(tmp_path: Path) -> None:
    folder = tmp_path / "topologies"
    folder.mkdir()
    (folder / "bad.yaml").write_text("id: bad\ngrid_size: 2\nnum_qubits: 2\nqubits: {0: {row: 0, col: 0}}\n")
    with pytest.raises(TopologyError, match=r"qubits must be exactly 0\.\.1"):
        load_topology("bad", tmp_path)
    with pytest.raises(TopologyError, match="not found"):
        load_topology("missing", tmp_path)
    with pytest.raises(TopologyError, match="invalid topology id"):
        load_topology("../etc/passwd", tmp_path)


def test_fallback_grid_is_ceil_sqrt_wide_row_major(tmp_path: Path) -> None:
    grid = fallback_topology(10)
    assert grid.grid_size == 4
    assert (grid.qubits[5].row, grid.qubits[5].col) == (1, 1)
    assert grid.couplings == []
    topology, reason = load_topology_or_fallback("missing", 10, tmp_path)
    assert topology.grid_size == 4 and reason is not None and "not found" in reason
    found, none = load_topology_or_fallback("square-lattice-mux-64", 64)
    assert found.num_qubits == 64 and none is None
