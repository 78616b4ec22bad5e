"""Task name → output values of one run, from :class:`ChipPhysics` and the qubit's state today.

Separate from the engine so each task's physics reads as one small function; the engine only knows
"this task produced these (value, error) pairs".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from qdash.demo.catalogue import FIDELITY_CAP, TASKS
from qdash.demo.physics import ChipPhysics, rounded

Values = dict[str, tuple[float, float]]
"""parameter name → (value, error) in stored units."""


@dataclass
class Today:
    """One qubit's drawn truths of the current day, so T2 follows the same run's T1 (and T2* that T2)."""

    t1: float | None = None
    t2_echo: float | None = None


@dataclass
class RunContext:
    physics: ChipPhysics
    day: int
    today: dict[int, Today] = field(default_factory=dict)
    current: Callable[[int, str], float | None] = lambda _q, _p: None
    """Current stored value of a qubit parameter (``qubit.data``), or None."""

    def of(self, q: int) -> Today:
        return self.today.setdefault(q, Today())


def _err_freq(p: ChipPhysics) -> float:
    return rounded(p.rng.uniform(1e-5, 3e-4), 7)


def _err_fid(p: ChipPhysics) -> float:
    return rounded(p.rng.uniform(1e-4, 2e-3), 6)


def _t1_today(ctx: RunContext, q: int) -> float:
    today = ctx.of(q)
    if today.t1 is None:
        today.t1 = ctx.physics.t1(q, ctx.day)
    return today.t1


def _t2_today(ctx: RunContext, q: int) -> float:
    today = ctx.of(q)
    if today.t2_echo is None:
        today.t2_echo = ctx.physics.t2_echo(q, _t1_today(ctx, q))
    return today.t2_echo


def check_t1(ctx: RunContext, q: int, rerun: bool) -> Values:
    p, today = ctx.physics, ctx.of(q)
    if rerun or today.t1 is None:
        value = p.t1(q, ctx.day)
        if today.t2_echo is not None:
            value = max(value, rounded(today.t2_echo / 2, 3))
        today.t1 = value
    return {"t1": (today.t1, p.relative_error(today.t1))}


def check_t2_echo(ctx: RunContext, q: int, rerun: bool) -> Values:
    p, today = ctx.physics, ctx.of(q)
    if rerun or today.t2_echo is None:
        today.t2_echo = p.t2_echo(q, _t1_today(ctx, q))
    return {"t2_echo": (today.t2_echo, p.relative_error(today.t2_echo))}


def check_ramsey(ctx: RunContext, q: int, rerun: bool) -> Values:
    p = ctx.physics
    t2_star = p.t2_star(q, _t2_today(ctx, q))
    return {
        "ramsey_frequency": (p.ramsey_frequency(q), rounded(p.rng.uniform(0.001, 0.01), 5)),
        "qubit_frequency": (p.qubit_frequency(q, ctx.day), _err_freq(p)),
        "t2_star": (t2_star, p.relative_error(t2_star)),
    }


def _averaged(draws: list[float], name: str, p: ChipPhysics) -> Values:
    mean, std = float(np.mean(draws)), float(np.std(draws, ddof=1))
    return {
        f"{name}_average": (rounded(mean, 3), p.relative_error(mean)),
        f"{name}_std": (rounded(std, 3), 0.0),
    }


def check_t1_average(ctx: RunContext, q: int, rerun: bool) -> Values:
    return _averaged([ctx.physics.t1(q, ctx.day) for _ in range(5)], "t1", ctx.physics)


def check_t2_echo_average(ctx: RunContext, q: int, rerun: bool) -> Values:
    t1 = _t1_today(ctx, q)
    return _averaged([ctx.physics.t2_echo(q, t1) for _ in range(5)], "t2_echo", ctx.physics)


def check_rabi(ctx: RunContext, q: int, rerun: bool) -> Values:
    p = ctx.physics
    amp = rounded(float(np.clip(p.rabi_amp[q] * (1 + p.rng.normal(0, 0.02)), 0.01, 0.5)))
    freq = rounded(float(np.clip(p.rabi_freq[q] * (1 + p.rng.normal(0, 0.02)), 5.0, 25.0)), 4)
    control = rounded(min(1.0, 2 * amp + 0.05))
    return {
        "rabi_amplitude": (amp, rounded(amp * 0.01)),
        "rabi_frequency": (freq, rounded(freq * 0.005, 4)),
        "rabi_phase": (rounded(p.rng.uniform(-math.pi, math.pi)), 0.0),
        "rabi_offset": (rounded(p.rng.normal(0, 0.05)), 0.0),
        "rabi_noise": (rounded(p.rng.uniform(0.001, 0.01)), 0.0),
        "rabi_distance": (rounded(p.rng.uniform(0.8, 1.2)), 0.0),
        "rabi_reference_phase": (rounded(p.rng.uniform(-math.pi, math.pi)), 0.0),
        "control_amplitude": (control, 0.0),
        "rabi_angle": (rounded(p.rng.uniform(0, 360), 3), 0.0),
        "maximum_rabi_frequency": (rounded(freq / control, 4), 0.0),
    }


def create_hpi(ctx: RunContext, q: int, rerun: bool) -> Values:
    p = ctx.physics
    amp = rounded(float(np.clip(p.hpi_amp[q] * (1 + p.rng.normal(0, 0.01)), 0.01, 0.3)))
    return {"hpi_amplitude": (amp, 0.0), "hpi_length": (float(p.hpi_len[q]), 0.0)}


def create_pi(ctx: RunContext, q: int, rerun: bool) -> Values:
    p = ctx.physics
    hpi = ctx.current(q, "hpi_amplitude") or float(p.hpi_amp[q])
    return {
        "pi_amplitude": (rounded(2 * hpi * (1 + p.rng.normal(0, 0.01))), 0.0),
        "pi_length": (float(p.hpi_len[q]), 0.0),
    }


def _drag(ctx: RunContext, q: int, prefix: str, factor: float) -> Values:
    p = ctx.physics
    return {
        f"{prefix}_amplitude": (rounded(factor * p.hpi_amp[q] * (1 + p.rng.normal(0, 0.02))), 0.0),
        f"{prefix}_beta": (rounded(p.drag_beta[q] + p.rng.normal(0, 0.02)), 0.0),
        f"{prefix}_length": (float(p.hpi_len[q]), 0.0),
    }


def create_drag_hpi(ctx: RunContext, q: int, rerun: bool) -> Values:
    return _drag(ctx, q, "drag_hpi", 1.05)


def create_drag_pi(ctx: RunContext, q: int, rerun: bool) -> Values:
    return _drag(ctx, q, "drag_pi", 2.1)


def readout_classification(ctx: RunContext, q: int, rerun: bool) -> Values:
    p = ctx.physics
    avg, f0, f1 = p.readout_fidelities(q)
    return {
        "average_readout_fidelity": (avg, _err_fid(p)),
        "readout_fidelity_0": (f0, _err_fid(p)),
        "readout_fidelity_1": (f1, _err_fid(p)),
    }


def _rb(ctx: RunContext, q: int, name: str, rate: str, worse: float) -> Values:
    p = ctx.physics
    f = p.gate_fidelity(q, ctx.day)
    f = rounded(min(FIDELITY_CAP, 1 - (1 - f) * worse))
    return {name: (f, _err_fid(p)), rate: (rounded(2 * (1 - f), 7), 0.0)}


def randomized_benchmarking(ctx: RunContext, q: int, rerun: bool) -> Values:
    return _rb(ctx, q, "average_gate_fidelity", "depolarizing_rate", 1.0)


def x90_irb(ctx: RunContext, q: int, rerun: bool) -> Values:
    return _rb(ctx, q, "x90_gate_fidelity", "x90_depolarizing_rate", 1.1)


def x180_irb(ctx: RunContext, q: int, rerun: bool) -> Values:
    return _rb(ctx, q, "x180_gate_fidelity", "x180_depolarizing_rate", 1.3)


def coherence_limit_1q(ctx: RunContext, q: int, rerun: bool) -> Values:
    t1 = ctx.current(q, "t1") or _t1_today(ctx, q)
    t2 = ctx.current(q, "t2_echo") or _t2_today(ctx, q)
    gate = ctx.current(q, "hpi_length") or float(ctx.physics.hpi_len[q])
    return {"one_qubit_gate_coherence_limit": (ChipPhysics.coherence_limit(gate, [(t1, t2)]), 0.0)}


def check_readout_frequency(ctx: RunContext, q: int, rerun: bool) -> Values:
    return {"readout_frequency": (ctx.physics.readout_frequency(q, ctx.day), _err_freq(ctx.physics))}


def check_qubit_spectroscopy(ctx: RunContext, q: int, rerun: bool) -> Values:
    p = ctx.physics
    return {
        "qubit_frequency": (p.qubit_frequency(q, ctx.day), _err_freq(p)),
        "anharmonicity": (p.anharmonicity(q), rounded(p.rng.uniform(1e-4, 1e-3), 6)),
    }


QUBIT_VALUES: dict[str, Callable[[RunContext, int, bool], Values]] = {
    "CheckReadoutFrequency": check_readout_frequency,
    "CheckQubitSpectroscopy": check_qubit_spectroscopy,
    "CheckRabi": check_rabi,
    "CreateHPIPulse": create_hpi,
    "CreatePIPulse": create_pi,
    "CheckT1": check_t1,
    "CheckT1Average": check_t1_average,
    "CheckT2Echo": check_t2_echo,
    "CheckT2EchoAverage": check_t2_echo_average,
    "CheckRamsey": check_ramsey,
    "CreateDRAGHPIPulse": create_drag_hpi,
    "CreateDRAGPIPulse": create_drag_pi,
    "ReadoutClassification": readout_classification,
    "RandomizedBenchmarking": randomized_benchmarking,
    "X90InterleavedRandomizedBenchmarking": x90_irb,
    "X180InterleavedRandomizedBenchmarking": x180_irb,
    "Check1QGateCoherenceLimit": coherence_limit_1q,
}


def coupling_values(ctx: RunContext, task: str, index: int, control: int, target: int) -> Values:
    """Outputs of a 2-qubit task on coupling ``index`` (``control``/``target`` qubit indices)."""
    p = ctx.physics
    if task in ("CheckCrossResonance", "CreateZX90"):
        values: Values = {
            "cr_amplitude": (
                rounded(float(np.clip(p.cr_amp[index] * (1 + p.rng.normal(0, 0.02)), 0.1, 1.0))),
                0.0,
            ),
            "cr_phase": (
                rounded(float(np.clip(p.cr_phase[index] + p.rng.normal(0, 0.02), -math.pi, math.pi))),
                0.0,
            ),
            "cancel_amplitude": (rounded(p.rng.uniform(0.0, 0.3)), 0.0),
            "cancel_phase": (rounded(p.rng.uniform(-math.pi, math.pi)), 0.0),
            "cancel_beta": (rounded(p.rng.normal(0, 0.5)), 0.0),
            "rotary_amplitude": (rounded(p.rng.uniform(0.0, 0.2)), 0.0),
            "zx_rotation_rate": (rounded(p.rng.uniform(0.5, 5.0)), 0.0),
        }
        if task == "CreateZX90":
            values["zx90_gate_time"] = (float(p.zx90_time[index]), 0.0)
        return values
    zx90, bell = p.coupling_fidelities(index)
    if task == "CheckBellStateTomography":
        return {"bell_state_fidelity": (bell, _err_fid(p))}
    if task == "ZX90InterleavedRandomizedBenchmarking":
        return {
            "zx90_gate_fidelity": (zx90, _err_fid(p)),
            "zx90_depolarizing_rate": (rounded(4 * (1 - zx90) / 3, 7), 0.0),
        }
    if task == "Check2QGateCoherenceLimit":
        pairs = []
        for q in (control, target):
            t1 = ctx.current(q, "t1") or _t1_today(ctx, q)
            pairs.append((t1, ctx.current(q, "t2_echo") or _t2_today(ctx, q)))
        limit = ChipPhysics.coherence_limit(float(p.zx90_time[index]), pairs)
        return {"two_qubit_gate_coherence_limit": (limit, 0.0)}
    if TASKS[task].outputs:
        raise KeyError(f"no value model for coupling task {task}")
    return {}


def qubit_values(ctx: RunContext, task: str, q: int, rerun: bool = False) -> Values:
    """Outputs of a 1-qubit task (``{}`` for tasks without outputs)."""
    func = QUBIT_VALUES.get(task)
    if func is None:
        if TASKS[task].outputs:
            raise KeyError(f"no value model for qubit task {task}")
        return {}
    return func(ctx, q, rerun)
