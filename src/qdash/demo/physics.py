"""Synthetic physics of the demo chips: per-qubit baselines drawn once, values drawn per run.

A run's value is ``baseline × (1 + drift(day)) + noise`` within the ranges of docs/demo-data.md
(Values) and the constraints below. Constraints hold by construction (not by rejection after the
fact), so every stored document satisfies them: neighbours' frequencies stay ≥ 0.05 GHz apart
because baselines are ≥ 0.06 apart and drift is bounded; ``t2_echo ≤ 2·t1`` and
``t2_star ≤ t2_echo`` are drawn from the same run's T1/T2; fidelities are capped at 0.9995 and
depolarizing rates derived from them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from qdash.demo.catalogue import FIDELITY_CAP
from qdash.models.topology import Topology

MIN_DETUNING_GHZ = 0.06
"""Baseline separation of coupled qubits; drift (≤ 1e-4 GHz/week, capped) and noise keep runs ≥ 0.05."""
MAX_FREQ_DRIFT_GHZ = 0.004


@dataclass
class SpecialQubits:
    """Qubits with a story the demo should let users discover."""

    bad: list[str]
    t1_degrading: str
    tls: str
    tls_days: tuple[int, int]
    """First and last day index (inclusive) of the TLS dip on ``tls``."""
    mediocre: list[str] = field(default_factory=list)
    """Gate fidelity baselines 0.97-0.98 (with the bad qubits these are the "few qubits 0.90-0.98")."""


def _cap(value: float) -> float:
    return min(FIDELITY_CAP, value)


def rounded(value: float, digits: int = 6) -> float:
    """A stored value as the demo writes it: a plain float (not numpy's) to ``digits`` decimals."""
    return float(round(value, digits))


class ChipPhysics:
    """Baselines of one chip and the per-run value model; all randomness from one numpy Generator."""

    def __init__(self, topology: Topology, days: int, rng: np.random.Generator) -> None:
        self.rng = rng
        self.days = days
        self.topology = topology
        n = topology.num_qubits
        self.n = n
        picks = [str(q) for q in rng.permutation(n)[:6]]
        n_bad = int(rng.integers(1, 3))
        tls_start = min(days - 1, round(0.6 * days))
        self.special = SpecialQubits(
            bad=sorted(picks[:n_bad], key=int),
            t1_degrading=picks[2],
            tls=picks[3],
            tls_days=(tls_start, min(days - 1, tls_start + max(1, days // 10))),
            mediocre=sorted(picks[4:6], key=int),
        )
        self.freq = self._frequencies()
        self.freq_slope = rng.uniform(-1e-4, 1e-4, n) / 7.0  # GHz per day
        self.readout_offset = np.array([rng.uniform(1.5, min(2.5, 10.49 - f)) for f in self.freq])
        self.anharm = rng.uniform(-0.35, -0.20, n)
        self.t1_base = rng.uniform(20.0, 150.0, n)
        self.t1_rel_sigma = rng.uniform(0.10, 0.20, n)
        self.t2_ratio = rng.uniform(0.6, 1.6, n)
        self.t2s_ratio = rng.uniform(0.2, 0.8, n)
        self.drift_amp = rng.uniform(0.0, 0.1, n)
        self.drift_period = rng.uniform(7.0, 30.0, n)
        self.drift_phase = rng.uniform(0.0, 2 * math.pi, n)
        self.ramsey = rng.uniform(0.05, 2.0, n)
        self.rabi_freq = rng.uniform(5.0, 25.0, n)
        self.rabi_amp = rng.uniform(0.01, 0.5, n)
        self.hpi_amp = rng.uniform(0.01, 0.3, n)
        self.hpi_len = rng.choice(np.arange(16, 41, 2), n).astype(float)
        self.drag_beta = rng.normal(-0.5, 0.3, n)
        self.readout = rng.uniform(0.85, 0.99, n)
        self.gate = rng.uniform(0.98, FIDELITY_CAP, n)
        self.fail_rate = np.full(n, 0.03)
        for qid in self.special.mediocre:
            self.gate[int(qid)] = rng.uniform(0.97, 0.98)
        for qid in self.special.bad:
            q = int(qid)
            self.t1_base[q] = rng.uniform(8.0, 18.0)
            self.gate[q] = rng.uniform(0.90, 0.95)
            self.readout[q] = rng.uniform(0.80, 0.86)
            self.fail_rate[q] = 0.15
        self.t1_base[int(self.special.t1_degrading)] = rng.uniform(110.0, 140.0)
        couplings = topology.couplings
        self.cr_amp = rng.uniform(0.1, 1.0, len(couplings))
        self.cr_phase = rng.uniform(-math.pi, math.pi, len(couplings))
        self.zx90_time = rng.choice(np.arange(100, 401, 8), len(couplings)).astype(float)
        self.zx90 = rng.uniform(0.90, 0.995, len(couplings))
        self.bell = rng.uniform(0.80, 0.98, len(couplings))
        bad = {int(q) for q in self.special.bad}
        for i, (a, b) in enumerate(couplings):
            if a in bad or b in bad:
                self.zx90[i] = rng.uniform(0.80, 0.90)
                self.bell[i] = rng.uniform(0.70, 0.80)

    def _frequencies(self) -> np.ndarray:
        """Uniform 4.0-8.5 GHz baselines, redrawn until every coupled pair is ≥ MIN_DETUNING apart."""
        freq = np.zeros(self.n)
        for q in range(self.n):
            neighbours = [p for p in self.topology.neighbours(q) if p < q]
            for _ in range(1000):
                f = self.rng.uniform(4.0, 8.5)
                if all(abs(f - freq[p]) >= MIN_DETUNING_GHZ for p in neighbours):
                    freq[q] = f
                    break
            else:
                raise ValueError(f"no frequency for qubit {q} ≥ {MIN_DETUNING_GHZ} GHz from its neighbours")
        return freq

    # --- per-run draws -------------------------------------------------------------------------

    def _drift(self, q: int, day: float) -> float:
        angle = 2 * math.pi * day / self.drift_period[q] + self.drift_phase[q]
        return float(self.drift_amp[q] * math.sin(angle))

    def qubit_frequency(self, q: int, day: float) -> float:
        drift = max(-MAX_FREQ_DRIFT_GHZ, min(MAX_FREQ_DRIFT_GHZ, self.freq_slope[q] * day))
        return rounded(self.freq[q] + drift + float(np.clip(self.rng.normal(0, 2e-5), -1e-4, 1e-4)), 7)

    def readout_frequency(self, q: int, day: float) -> float:
        base = self.freq[q] + self.readout_offset[q]
        return rounded(min(10.5, base + self.rng.normal(0, 1e-5)), 7)

    def anharmonicity(self, q: int) -> float:
        return rounded(self.anharm[q] + self.rng.normal(0, 1e-3), 5)

    def t1(self, q: int, day: int) -> float:
        """One CheckT1 value (μs): drift, the degrading trend, TLS dips (2 % of runs, and a window)."""
        qid = str(q)
        first, last = self.special.tls_days
        if (qid == self.special.tls and first <= day <= last) or self.rng.random() < 0.02:
            return rounded(self.rng.uniform(5.0, 15.0), 3)
        base = self.t1_base[q] * (1 + self._drift(q, day))
        if qid == self.special.t1_degrading:
            base *= 1 - 0.7 * day / max(1, self.days - 1)
        value = base * (1 + self.rng.normal(0, self.t1_rel_sigma[q]))
        return rounded(max(3.0, value), 3)

    def t2_echo(self, q: int, t1: float) -> float:
        value = self.t2_ratio[q] * t1 * (1 + self.rng.normal(0, 0.15))
        return rounded(min(max(1.0, value), 2 * t1, 200.0), 3)

    def t2_star(self, q: int, t2_echo: float) -> float:
        value = self.t2s_ratio[q] * t2_echo * (1 + self.rng.normal(0, 0.2))
        return rounded(min(max(0.5, value), t2_echo), 3)

    def relative_error(self, value: float) -> float:
        """Fit uncertainty 2-8 % of the value."""
        return rounded(value * self.rng.uniform(0.02, 0.08), 4)

    def ramsey_frequency(self, q: int) -> float:
        return rounded(float(np.clip(self.ramsey[q] * (1 + self.rng.normal(0, 0.05)), 0.05, 2.0)), 5)

    def gate_fidelity(self, q: int, day: int) -> float:
        infidelity = (1 - self.gate[q]) * (1 + self._drift(q, day))
        return rounded(_cap(1 - infidelity + self.rng.normal(0, 5e-4)), 6)

    def readout_fidelities(self, q: int) -> tuple[float, float, float]:
        """(average, f0, f1) with ``f0 > f1`` and ``average == (f0 + f1) / 2``."""
        avg = float(np.clip(self.readout[q] + self.rng.normal(0, 0.005), 0.5, 0.995))
        half = min(self.rng.uniform(0.005, 0.03), FIDELITY_CAP - avg - 1e-6)
        half = max(half, 2e-6)
        f0, f1 = rounded(avg + half), rounded(avg - half)
        return (f0 + f1) / 2, f0, f1

    def coupling_fidelities(self, index: int) -> tuple[float, float]:
        zx90 = rounded(_cap(self.zx90[index] + self.rng.normal(0, 3e-3)))
        bell = rounded(_cap(self.bell[index] + self.rng.normal(0, 5e-3)))
        return zx90, bell

    @staticmethod
    def coherence_limit(gate_ns: float, coherence_us: list[tuple[float, float]]) -> float:
        """Coherence-limited fidelity ``1 - t/3 · Σ(1/T1 + 1/T2)`` over the qubits of the gate."""
        t_us = gate_ns / 1000.0
        error = t_us / 3 * sum(1 / t1 + 1 / t2 for t1, t2 in coherence_us)
        return rounded(_cap(1 - error))
