"""Guard: the source uses only MongoDB features both the embedded store and MongoDB 7 support.

The list is the "Portable subset" of the embedded-store measurements (docs/data-layer.md): each of
these failed or misbehaved on mongomock-ng. A hit fails with file:line so the fix is obvious: rewrite
the query with the supported operators (e.g. ``$sort`` + ``$group`` with ``$first`` instead of
``$top``; ``find`` + ``list()`` instead of ``to_list()``).
"""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "qdash"

FORBIDDEN: dict[str, str] = {
    r"\$setWindowFields": "$setWindowFields",
    r"\$(top|bottom)N?\b": "$top/$bottom/$topN/$bottomN",
    r"\$(first|last|max|min)N\b": "$firstN/$lastN/$maxN/$minN",
    r"\$merge\b(?!Objects)": "$merge",
    r"\$text\b|pymongo\.TEXT\b|\(\s*[\"'][\w.$]+[\"']\s*,\s*[\"']text[\"']\s*\)": "$text / text indexes",
    r"\bcollation\s*=": "collation=",
    r"\.watch\(": "change streams (watch)",
    r"\bgridfs\b|\bGridFS\b": "GridFS",
    r"\b(db|database)\.aggregate\(": "Database.aggregate",
    r"\.to_list\(": "Cursor.to_list()",
    r"\.start_transaction\(|with_transaction\(": "transactions (isolation is not portable)",
}


def scan(root: Path) -> list[str]:
    """Every forbidden use under ``root`` as ``path:line: feature``."""
    hits: list[str] = []
    patterns = [(re.compile(p), name) for p, name in FORBIDDEN.items()]
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for pattern, name in patterns:
                if pattern.search(line):
                    hits.append(f"{path.relative_to(root.parent.parent)}:{number}: {name}")
    return hits


def test_source_stays_in_the_portable_subset() -> None:
    hits = scan(SRC)
    assert not hits, "MongoDB features outside the portable subset:\n" + "\n".join(hits)


def test_the_guard_catches_each_feature(tmp_path: Path) -> None:
    pkg = tmp_path / "src" / "qdash"
    pkg.mkdir(parents=True)
    samples = [
        '{"$setWindowFields": {}}',
        '{"$topN": {"n": 1}}',
        '{"$top": {}}',
        '{"$lastN": {}}',
        '{"$merge": "out"}',
        '{"$text": {"$search": "x"}}',
        'coll.create_index([("body", "text")])',
        "coll.find({}, collation=c)",
        "coll.watch()",
        "import gridfs",
        "db.aggregate([])",
        "cursor.to_list()",
        "session.start_transaction()",
    ]
    (pkg / "bad.py").write_text("\n".join(samples) + "\n", encoding="utf-8")
    (pkg / "good.py").write_text(
        '{"$mergeObjects": ["$a"], "$first": "$x", "$topology": 1}\nx = title.get("text")\n', encoding="utf-8"
    )
    hits = scan(pkg)
    assert [h.split(":")[1] for h in hits] == [str(i) for i in range(1, len(samples) + 1)]
    assert hits[0].startswith("src/qdash/bad.py:1: ")
