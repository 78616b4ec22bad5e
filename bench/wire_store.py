"""Wire-protocol store vs the in-process embedded client: p50 latency of the calls an API makes.

Run: ``python bench/wire_store.py [--docs 5000] [--repeat 300]``. Both sides use the same persistent
embedded store code (journal on, in a temporary directory); the wire side adds a pymongo client, a
loopback socket, BSON both ways and a thread per connection. Prints p50 per operation and the
wire/in-process ratio measured in this run; docs/data-layer.md quotes it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# tests.support (the test doubles the wheel does not ship) is importable from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pymongo import MongoClient
from pymongo.database import Database

from qdash.db import close_database, open_database
from qdash.logging import configure_logging
from qdash.settings import DatabaseSettings
from tests.support.wire_store import WireServer


def _document(i: int) -> dict[str, Any]:
    return {"_id": f"q{i}", "project_id": "p", "qid": str(i % 64), "value": i * 0.5, "note": "x" * 200}


def _p50_ms(call: Callable[[int], object], repeat: int) -> float:
    times = []
    for i in range(repeat):
        started = time.perf_counter()
        call(i)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def measure(db: Database[dict[str, Any]], docs: int, repeat: int) -> dict[str, float]:
    coll = db["bench"]
    coll.insert_many([_document(i) for i in range(docs)])
    return {
        "find_one by _id": _p50_ms(lambda i: coll.find_one({"_id": f"q{i % docs}"}), repeat),
        "insert_one": _p50_ms(lambda i: coll.insert_one({"_id": f"new{i}", "value": i}), repeat),
        "find 1,000 documents": _p50_ms(
            lambda _: list(coll.find({"project_id": "p"}).limit(1000)), max(repeat // 10, 5)
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    configure_logging("WARNING", False)
    with tempfile.TemporaryDirectory() as tmp:
        local = open_database(DatabaseSettings(name="bench", data_dir=Path(tmp) / "local"))
        try:
            in_process = measure(local, args.docs, args.repeat)
        finally:
            close_database(local)
        server = WireServer("127.0.0.1", 0)
        server.start(open_database(DatabaseSettings(name="bench", data_dir=Path(tmp) / "wire")))
        client: MongoClient[dict[str, Any]] = MongoClient(server.uri, tz_aware=True)
        try:
            wire = measure(client["bench"], args.docs, args.repeat)
        finally:
            client.close()
            server.close()
    print(f"{'operation':<22} {'in-process p50':>15} {'wire p50':>10} {'ratio':>7}")
    for name, local_ms in in_process.items():
        print(f"{name:<22} {local_ms:>12.3f} ms {wire[name]:>7.3f} ms {wire[name] / local_ms:>6.1f}x")


if __name__ == "__main__":
    main()
