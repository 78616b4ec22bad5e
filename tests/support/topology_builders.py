"""Builders for the shipped topology files, so ``qdash/defaults/topologies/*.yaml`` are generated.

Run ``python -m tests.support.topology_builders [folder]`` from the repository root to rewrite the
files (default: the packaged ``defaults/topologies`` of a checkout); not in the wheel, which ships
the files; a test checks the committed files equal these builders' output.

Square lattices follow upstream QDash's MUX numbering: MUX ``m`` holds qubits ``4m … 4m+3`` in a
2×2 block (0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right), MUX blocks row-major. Edges are
listed per qubit in id order, right neighbour first, then the one below; under ``checkerboard_cr``
each pair is ``[control, target]`` with the control on an even ``row+col`` square.
"""

from __future__ import annotations

import sys
from pathlib import Path

from qdash.config_files import packaged_file
from qdash.models.topology import MuxConfig, QubitPosition, Topology, Visualization


def mux_position(qubit: int, grid_size: int) -> tuple[int, int]:
    """(row, col) of a qubit on a MUX-numbered square lattice."""
    per_row = grid_size // 2
    mux, k = divmod(qubit, 4)
    return 2 * (mux // per_row) + k // 2, 2 * (mux % per_row) + k % 2


def square_lattice_mux(grid_size: int) -> Topology:
    """A ``grid_size × grid_size`` lattice with 2×2 MUX blocks and checkerboard CR directions."""
    if grid_size % 2:
        raise ValueError(f"grid_size must be even for 2×2 MUX blocks (got {grid_size})")
    n = grid_size * grid_size
    pos = {q: mux_position(q, grid_size) for q in range(n)}
    at = {rc: q for q, rc in pos.items()}
    couplings: list[tuple[int, int]] = []
    for q in range(n):
        row, col = pos[q]
        for other_rc in ((row, col + 1), (row + 1, col)):
            other = at.get(other_rc)
            if other is None:
                continue
            control_first = (row + col) % 2 == 0
            couplings.append((q, other) if control_first else (other, q))
    return Topology(
        id=f"square-lattice-mux-{n}",
        name="Square Lattice with MUX",
        description=f"{grid_size}x{grid_size} square lattice with 2x2 MUX readout groups; "
        "couplings are [control, target] with the control on an even row+col site",
        grid_size=grid_size,
        num_qubits=n,
        layout_type="grid",
        direction_convention="checkerboard_cr",
        mux=MuxConfig(enabled=True, size=2),
        qubits={q: QubitPosition(row=r, col=c) for q, (r, c) in pos.items()},
        couplings=couplings,
        visualization=Visualization(show_mux_boundaries=True, region_size=4),
    )


# Heavy-hex rows: (row, first col, last col) of the degree-2 chains, and (row, cols) of the bridge
# qubits joining the chains above and below. 3 chains + 5 bridges = 27 qubits, 29 edges, 3 cycles.
_HEX_CHAINS = ((0, 1, 7), (2, 0, 7), (4, 0, 6))
_HEX_BRIDGES = ((1, (2, 6)), (3, (0, 3, 6)))


def heavy_hex_27() -> Topology:
    """A 27-qubit heavy-hex patch (IBM-Falcon-like, our own construction); pairs listed low→high."""
    cells: list[tuple[int, int]] = []
    for row, first, last in _HEX_CHAINS:
        cells += [(row, col) for col in range(first, last + 1)]
    for row, cols in _HEX_BRIDGES:
        cells += [(row, col) for col in cols]
    cells.sort()
    at = {rc: q for q, rc in enumerate(cells)}
    edges: set[tuple[int, int]] = set()
    for (row, col), q in at.items():
        for other_rc in ((row, col + 1), (row + 1, col)):
            other = at.get(other_rc)
            if other is not None and not (row % 2 == 1 and other_rc == (row, col + 1)):
                edges.add((min(q, other), max(q, other)))
    return Topology(
        id="heavy-hex-27",
        name="Heavy Hex 27",
        description="27-qubit heavy-hex patch (IBM-Falcon-like): three chains joined by five bridge qubits",
        grid_size=8,
        num_qubits=len(cells),
        layout_type="hex",
        qubits={q: QubitPosition(row=r, col=c) for q, (r, c) in enumerate(cells)},
        couplings=sorted(edges),
    )


def linear(n: int = 16, width: int = 4) -> Topology:
    """A chain ``[i, i+1]`` drawn as a snake on a ``width``-wide grid so neighbours stay adjacent.

    Like the upstream file it omits ``layout_type``, which therefore reads as ``grid``.
    """

    def position(q: int) -> QubitPosition:
        row, k = divmod(q, width)
        return QubitPosition(row=row, col=k if row % 2 == 0 else width - 1 - k)

    return Topology(
        id=f"linear-{n}",
        name=f"Linear {n}",
        description=f"{n} qubits in a chain, drawn as a snake on a {width}-wide grid",
        grid_size=width,
        num_qubits=n,
        qubits={q: position(q) for q in range(n)},
        couplings=[(q, q + 1) for q in range(n - 1)],
    )


def shipped_topologies() -> list[Topology]:
    """Every topology file we ship."""
    return [square_lattice_mux(8), square_lattice_mux(12), heavy_hex_27(), linear(16)]


def render(topology: Topology) -> str:
    """File text; ``linear-*`` omits ``layout_type`` as upstream's file does."""
    text = topology.to_yaml()
    if topology.id.startswith("linear-"):
        text = text.replace("layout_type: grid\n", "")
    return text


def write_all(folder: Path | None = None) -> list[Path]:
    """Write every shipped topology file into ``folder``; returns the paths written."""
    folder = folder or Path(str(packaged_file("topologies")))
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for topology in shipped_topologies():
        path = folder / f"{topology.id}.yaml"
        path.write_text(render(topology), encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(written)
