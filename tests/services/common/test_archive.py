"""The archive: rows by kind and key, expiring by the wall clock, on disk across opens."""

from __future__ import annotations

from pathlib import Path

from services.common.archive import Archive, data_file


def test_rows_read_back_until_they_expire_and_are_purged() -> None:
    now = [1_000]
    archive = Archive(clock=lambda: now[0])
    archive.put_many([("t", "a", "one", 2_000), ("t", "b", "two", None), ("k", "a", "x", 5_000)])
    assert archive.get("t", "a") == ("one", 2_000)
    assert archive.get("k", "a") == ("x", 5_000)  # kinds are apart
    now[0] = 2_000
    assert archive.get("t", "a") is None
    assert archive.get("t", "b") == ("two", None)
    now[0] = 6_000
    assert archive.purge() == 1 and archive.count("k") == 0
    archive.delete("t", "b")
    assert archive.get("t", "b") is None


def test_a_file_keeps_its_rows_for_the_next_open(tmp_path: Path) -> None:
    path = data_file(str(tmp_path / "made" / "here"), "tables")
    assert path.endswith("tables.sqlite3") and Path(path).parent.is_dir()
    first = Archive(path)
    first.put("t", "a", "kept", None)
    first.close()
    assert Archive(path).get("t", "a") == ("kept", None)
    assert data_file("", "tables") == ":memory:"
