"""The recorded responses in ``tests/data/recorded`` are the upstream files, byte for byte.

``tests/data/recorded-blobs.txt`` holds each file's git blob id, which is the id of the same file at the upstream
commit named in ``tests/data/NOTICE.md``; an edit (a re-indent, an editor's line endings) or a file added without its
source fails here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.fixtures import RECORDED_DIR

BLOB_LIST = RECORDED_DIR.parent / "recorded-blobs.txt"


def git_blob_id(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def test_every_recorded_file_is_listed_with_its_upstream_blob_id() -> None:
    listed = dict(reversed(line.split("  ", 1)) for line in BLOB_LIST.read_text(encoding="utf-8").splitlines())
    present = {path.relative_to(RECORDED_DIR).as_posix(): path for path in RECORDED_DIR.rglob("*") if path.is_file()}
    assert sorted(present) == sorted(listed)
    changed = [rel for rel, path in present.items() if git_blob_id(path) != listed[rel]]
    assert changed == []
