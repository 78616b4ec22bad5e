"""Experiment figures of demo task runs, rendered on first request and cached under the data dir.

Why lazily: one PNG per task run would make seeding minutes long; the analysis endpoint and the
dashboard only ever open a few. :func:`ensure_figure` draws the synthetic measurement curve the task
would have produced (T1 decay, Rabi oscillation, resonance dip, RB decay…) from the run's stored
outputs, with the fit line and the fitted value in the title, so the picture agrees with the data.
The curve's noise is seeded by the task id: the same run always gives the same picture.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from qdash.demo.catalogue import TASKS, FigureKind

if TYPE_CHECKING:  # matplotlib costs ~40 MiB and ~0.5 s: imported only when a figure is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


class FigureError(ValueError):
    """The task result has no figure that can be rendered; the message says why."""


def figure_file(data_dir: Path, relative: str) -> Path:
    """``data_dir / relative``, refusing paths that would leave ``data_dir``."""
    root = Path(data_dir).resolve()
    target = (root / relative).resolve()
    if not relative or Path(relative).is_absolute() or not target.is_relative_to(root):
        raise FigureError(f"figure path {relative!r} must be relative and stay inside {root}")
    if target.suffix.lower() != ".png":
        raise FigureError(f"figure path {relative!r} is not a .png file")
    return target


def ensure_figure(data_dir: Path, task_result: dict[str, Any]) -> Path:
    """Path of the run's first figure under ``data_dir``, rendering it first if it is not there yet.

    Blocking (matplotlib): call it from a worker thread in async code. Safe against concurrent
    calls: the PNG is written to a temporary file and renamed into place.
    """
    paths = task_result.get("figure_path") or []
    if not paths:
        raise FigureError(
            f"task {task_result.get('task_id', '?')} ({task_result.get('status', '?')}) has no figure_path"
        )
    target = figure_file(data_dir, str(paths[0]))
    if target.is_file():
        return target
    write_png(render(task_result), target)
    return target


def write_png(figure: Figure, target: Path) -> None:
    """Save ``figure`` at ``target`` atomically (temporary file, then rename), so a concurrent reader
    or a second renderer never sees a half-written PNG."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".fig-", suffix=".png", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            figure.savefig(handle, format="png")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _value(result: dict[str, Any], name: str, default: float) -> float:
    param = (result.get("output_parameters") or {}).get(name)
    return float(param["value"]) if param else default


def _averaged(result: dict[str, Any], name: str, default: float) -> float:
    """``<name>_average`` where the run output one (repeated-measurement tasks), else ``name``."""
    average = f"{name}_average"
    return _value(result, average if average in (result.get("output_parameters") or {}) else name, default)


@dataclass(frozen=True)
class Noise:
    """The seeded imperfections of a drawn measurement: random scatter and the small systematic
    pulse error. ``scale`` is 1 for a demo run; an ideal reference figure draws with less."""

    rng: np.random.Generator
    scale: float = 1.0

    def __call__(self, sigma: float, size: int) -> np.ndarray:
        return self.rng.normal(0.0, sigma * self.scale, size)


def render(
    task_result: dict[str, Any], *, kind: FigureKind | None = None, noise_scale: float = 1.0
) -> Figure:
    """Draw the run's synthetic measurement and fit (no pyplot: thread-safe, no global state).

    ``kind`` overrides the catalogue's figure shape (for tasks the demo never runs);
    ``noise_scale`` scales the scatter (see :class:`Noise`).
    """
    name = str(task_result.get("name", ""))
    task = TASKS.get(name)
    seed = int(hashlib.sha256(str(task_result.get("task_id", name)).encode()).hexdigest()[:16], 16)
    noise = Noise(np.random.default_rng(seed), noise_scale)
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 4.0), dpi=80)
    ax = figure.add_subplot()
    kind = kind or (task.figure if task else "status")
    title = _DRAW[kind](ax, task_result, noise)
    qid = task_result.get("qid") or "chip"
    status = task_result.get("status", "")
    suffix = "" if status == "completed" else f" [{status}]"
    ax.set_title(f"{name} {qid}: {title}{suffix}", fontsize=10)
    ax.grid(alpha=0.3)
    figure.tight_layout()
    return figure


def _scatter_fit(
    ax: Axes,
    x: np.ndarray,
    model: np.ndarray,
    noise: Noise,
    sigma: float,
    *,
    xlabel: str,
    ylabel: str,
) -> None:
    ax.plot(x, model + noise(sigma, x.size), "o", ms=3, label="data")
    ax.plot(x, model, "-", lw=1.5, label="fit")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)


def _decay(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    tau = _averaged(result, "t1", 50.0)
    x = np.linspace(0, 5 * tau, 60)
    _scatter_fit(ax, x, 0.02 + 0.96 * np.exp(-x / tau), noise, 0.02, xlabel="delay (μs)", ylabel="P(|1>)")
    return f"T1 = {tau:.2f} μs"


def _echo(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    tau = _averaged(result, "t2_echo", 60.0)
    x = np.linspace(0, 4 * tau, 60)
    _scatter_fit(ax, x, 0.5 + 0.48 * np.exp(-x / tau), noise, 0.02, xlabel="delay (μs)", ylabel="P(|0>)")
    return f"T2 echo = {tau:.2f} μs"


def _ramsey(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    tau, detuning = _value(result, "t2_star", 20.0), _value(result, "ramsey_frequency", 0.5)
    x = np.linspace(0, min(3 * tau, 6 / max(detuning, 1e-3)), 120)
    model = 0.5 + 0.48 * np.exp(-x / tau) * np.cos(2 * math.pi * detuning * x)
    _scatter_fit(ax, x, model, noise, 0.02, xlabel="delay (μs)", ylabel="P(|0>)")
    return f"T2* = {tau:.2f} μs, Δf = {detuning:.3f} MHz"


def _rabi(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    freq, amp = _value(result, "rabi_frequency", 10.0), _value(result, "rabi_amplitude", 0.2)
    x = np.linspace(0, 200, 100)
    model = 0.5 - amp * np.cos(2 * math.pi * freq * x / 1000)
    _scatter_fit(ax, x, model, noise, 0.01, xlabel="drive duration (ns)", ylabel="signal (a.u.)")
    return f"f_Rabi = {freq:.2f} MHz"


def _pulse(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    outputs = result.get("output_parameters") or {}
    amp_name = next((n for n in outputs if n.endswith("amplitude")), "")
    amp = _value(result, amp_name, 0.1) if amp_name else 0.1
    x = np.arange(0, 21)
    model = 0.5 + 0.45 * np.cos(math.pi * x / 2 + 0.02 * noise.scale * x)
    _scatter_fit(ax, x, model, noise, 0.02, xlabel="number of pulses", ylabel="P(|0>)")
    return f"{amp_name} = {amp:.4f}" if amp_name else "pulse repetition"


def _resonance(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    outputs = result.get("output_parameters") or {}
    name = next((n for n in outputs if n.endswith("frequency")), "")
    f0 = _value(result, name, 7.0) if name else 7.0
    x = np.linspace(f0 - 0.01, f0 + 0.01, 120)
    model = 1 - 0.7 / (1 + ((x - f0) / 0.0015) ** 2)
    _scatter_fit(ax, x, model, noise, 0.02, xlabel="frequency (GHz)", ylabel="|S21| (a.u.)")
    return f"{name or 'f'} = {f0:.4f} GHz"


def _readout(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    f0, f1 = _value(result, "readout_fidelity_0", 0.95), _value(result, "readout_fidelity_1", 0.9)
    sep = 2.0 * (f0 + f1) / 2 + 1.0
    ax.hist(noise.rng.normal(0, 1, 2000), bins=50, alpha=0.6, label="|0>")
    ax.hist(noise.rng.normal(sep, 1, 2000), bins=50, alpha=0.6, label="|1>")
    ax.axvline(sep / 2, color="k", lw=1, label="threshold")
    ax.set_xlabel("I (a.u.)")
    ax.set_ylabel("counts")
    ax.legend(fontsize=8)
    return f"F = {_value(result, 'average_readout_fidelity', (f0 + f1) / 2):.4f}"


def _rb(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    outputs = result.get("output_parameters") or {}
    name = next((n for n in outputs if n.endswith("fidelity")), "")
    fidelity = _value(result, name, 0.99) if name else 0.99
    p = max(0.0, 1 - 2 * (1 - fidelity))
    x = np.arange(0, 401, 20)
    _scatter_fit(
        ax, x, 0.5 + 0.5 * p**x, noise, 0.01, xlabel="number of Cliffords", ylabel="sequence fidelity"
    )
    return f"{name or 'F'} = {fidelity:.5f}"


def _cr(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    rate = _value(result, "zx_rotation_rate", 1.0)
    x = np.linspace(0, 400, 100)
    _scatter_fit(
        ax,
        x,
        np.cos(2 * math.pi * rate * x / 1000),
        noise,
        0.03,
        xlabel="CR duration (ns)",
        ylabel="<Z> target",
    )
    gate = _value(result, "zx90_gate_time", 0.0)
    return f"ZX90 gate = {gate:.0f} ns" if gate else f"ZX rate = {rate:.3f}"


def _bell(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    fidelity = _value(result, "bell_state_fidelity", 0.9)
    leak = (1 - fidelity) / 2
    populations = np.array([0.5 - leak, leak, leak, 0.5 - leak]) + noise(0.005, 4)
    ax.bar(["00", "01", "10", "11"], populations)
    ax.set_ylabel("population")
    return f"Bell fidelity = {fidelity:.4f}"


def _limit(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    outputs = result.get("output_parameters") or {}
    name = next(iter(outputs), "coherence limit")
    value = _value(result, name, 0.999)
    ax.bar([name], [value])
    ax.set_ylim(min(0.99, value - 0.001), 1.0)
    return f"{name} = {value:.5f}"


def _status(ax: Axes, result: dict[str, Any], noise: Noise) -> str:
    x = np.arange(0, 50)
    ax.plot(x, noise(0.05, x.size), "-", lw=1)
    ax.set_xlabel("sample")
    ax.set_ylabel("signal (a.u.)")
    return str(result.get("status", ""))


_DRAW = {
    "decay": _decay,
    "echo": _echo,
    "ramsey": _ramsey,
    "rabi": _rabi,
    "pulse": _pulse,
    "resonance": _resonance,
    "readout": _readout,
    "rb": _rb,
    "cr": _cr,
    "bell": _bell,
    "limit": _limit,
    "status": _status,
}
