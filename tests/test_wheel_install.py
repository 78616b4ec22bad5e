"""The built wheel, installed (not editable) into a fresh venv, works from an unrelated directory.

Why: an editable checkout hides packaging mistakes (config read from ``<site-packages>/../config``,
data written next to the interpreter). This test builds the wheel from a copy of the sources
(``pip wheel --no-build-isolation``: offline, with the setuptools of the test extras), installs it
with ``--no-deps --no-index`` into a fresh venv and runs the ``qdash`` script of that venv from an
empty temporary directory. The venv sees its dependencies through one ``.pth`` line naming this
interpreter's site-packages (no network); ``qdash`` itself is imported from the wheel, which the
test checks (``.pth`` path lines add no editable finders).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from qdash.config_files import PACKAGED_DEFAULTS

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _run(
    args: list[str | Path],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    *,
    codes: tuple[int, ...] = (0,),
) -> str:
    if env is None:  # a PYTHONPATH naming a checkout's src/ (and its egg-info) would make pip skip the wheel
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(arg) for arg in args], check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode in codes, f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _packaged_names() -> set[str]:
    names = {f"qdash/defaults/{entry.name}" for entry in PACKAGED_DEFAULTS.iterdir() if entry.is_file()}
    topologies = PACKAGED_DEFAULTS / "topologies"
    return names | {f"qdash/defaults/topologies/{entry.name}" for entry in topologies.iterdir()}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the sources (so the checkout gets no build/ or egg-info)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", work / "dist", source]
    )
    (built,) = (work / "dist").glob("qdash_copilot-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; returns its bin directory."""
    root = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", "--without-pip", root])
    python = root / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel])
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    runner_paths = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "_test_runner_dependencies.pth").write_text("\n".join(runner_paths) + "\n", encoding="utf-8")
    return root / "bin"


@pytest.fixture
def user_env() -> dict[str, str]:
    """A new user's environment: no project variables, no PYTHONPATH, no model key (doctor then
    contacts no model on the internet; the demo model answers)."""
    drop = ("PYTHONPATH", "OPENAI_API_KEY")
    return {k: v for k, v in os.environ.items() if not k.startswith("QDASH_") and k not in drop}


def test_the_wheel_holds_the_default_configuration(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = _packaged_names()
    assert {"qdash/defaults/copilot.yaml", "qdash/defaults/task_knowledge.yaml"} <= expected
    assert expected <= names, f"missing from the wheel: {sorted(expected - names)}"
    assert "qdash/api/ui/index.html" in names


def test_the_wheel_holds_every_source_and_data_file(wheel: Path) -> None:
    """A new data type or a folder without ``__init__.py`` would otherwise be left out silently."""
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = ROOT / "src"
    files = {
        path.relative_to(sources).as_posix()
        for path in (sources / "qdash").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert files - names == set(), "add them to [tool.setuptools.package-data] or add an __init__.py"


def test_installed_qdash_runs_from_an_unrelated_directory(
    venv: Path, tmp_path: Path, user_env: dict[str, str]
) -> None:
    where = tmp_path / "elsewhere"
    where.mkdir()
    imported = _run([venv / "python", "-c", "import qdash; print(qdash.__file__)"], where, user_env)
    assert Path(imported.strip()).is_relative_to(venv.parent / "lib"), imported

    # Seeding reads the packaged topologies (the failure this test was written for).
    _run([venv / "qdash", "demo", "seed", "--scale", "small", "--days", "2"], where, user_env)
    # Without a key the demo model answers: the default OpenAI model is a WARN, the set-up healthy.
    doctor = _run([venv / "qdash", "doctor"], where, user_env)
    assert f"OK   config: packaged defaults (there is no config directory {where / 'config'})" in doctor
    assert f"OK   database: embedded ({where / 'var'})" in doctor
    assert "FAIL" not in doctor and "OK   demo model" in doctor

    port = _free_port()
    server = subprocess.Popen(
        [venv / "qdash", "serve", "--port", str(port)],
        cwd=where,
        env=user_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, f"qdash serve exited:\n{server.communicate()[1]}"
            try:
                health = httpx.get(f"{base}/health", timeout=2)
                if health.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "qdash serve did not answer /health within 60 s"
            time.sleep(0.3)
        assert health.json()["database"] == {"mode": "embedded", "ok": True}
        # Packaged task knowledge + a figure rendered into ./var; the chat page from package data.
        figure = httpx.get(f"{base}/copilot/expected-image", params={"task_name": "CheckT1"}, timeout=30)
        assert figure.status_code == 200 and figure.content[:8] == b"\x89PNG\r\n\x1a\n"
        assert httpx.get(f"{base}/copilot/ui", timeout=5).status_code == 200
    finally:
        server.terminate()
        server.wait(20)
    assert (where / "var" / "embedded.sqlite3").is_file()
    assert not (venv.parent / "lib" / "python3.11" / "var").exists()
    assert sorted(path.name for path in where.iterdir()) == ["var"]
