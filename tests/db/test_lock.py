"""One process owns an embedded data directory; a second fails fast and names the owner."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qdash.db import DatabaseInUseError, close_database, open_database
from qdash.settings import DatabaseSettings


def test_second_open_fails_with_owner_pid_and_fix(tmp_path: Path) -> None:
    settings = DatabaseSettings(data_dir=tmp_path)
    db = open_database(settings)
    with pytest.raises(DatabaseInUseError) as err:
        open_database(settings)
    message = str(err.value)
    assert f"the embedded database is in use by PID {os.getpid()}" in message
    assert "use a mongodb:// URI for multi-process set-ups" in message
    close_database(db)
    close_database(open_database(settings))  # released on close


def test_lock_is_released_when_the_owner_dies(tmp_path: Path) -> None:
    child_code = textwrap.dedent(
        f"""
        import sys, time
        from qdash.db import open_database
        from qdash.settings import DatabaseSettings
        db = open_database(DatabaseSettings(data_dir={str(tmp_path)!r}))
        db["c"].insert_one({{"_id": "from-child"}})
        print("ready", flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", child_code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        while (line := child.stdout.readline()) and line.strip() != "ready":
            pass  # log lines before it
        assert line.strip() == "ready"
        with pytest.raises(DatabaseInUseError, match=f"in use by PID {child.pid}"):
            open_database(DatabaseSettings(data_dir=tmp_path))
    finally:
        child.kill()  # SIGKILL: no exit hook runs
        child.wait(timeout=10)
    db = open_database(DatabaseSettings(data_dir=tmp_path))
    assert db["c"].find_one({"_id": "from-child"}) == {"_id": "from-child"}
    close_database(db)
