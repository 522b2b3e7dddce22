"""Finding Valkey's incremental AOF file from its manifest, and cutting its tail off."""

from __future__ import annotations

from pathlib import Path

import pytest

from truc_chaos.aof import AofSampler, incremental_file, truncate_to

pytestmark = pytest.mark.unit


def test_the_last_incremental_file_of_the_manifest_is_the_one_cut(tmp_path: Path) -> None:
    folder = tmp_path / "appendonlydir"
    folder.mkdir()
    (folder / "appendonly.aof.manifest").write_text(
        "file appendonly.aof.1.base.rdb seq 1 type b\n"
        "file appendonly.aof.1.incr.aof seq 1 type h\n"
        "file appendonly.aof.2.incr.aof seq 2 type i\n"
    )
    incr = folder / "appendonly.aof.2.incr.aof"
    incr.write_bytes(b"0123456789")
    assert incremental_file(tmp_path) == incr
    sampler = AofSampler(tmp_path)
    first = sampler.sample()
    assert first is not None and first.size == 10
    incr.write_bytes(b"0123456789abcdef")
    assert sampler.before(first.at, incr.name) == first
    assert truncate_to(incr, first.size) == 16
    assert incr.read_bytes() == b"0123456789"
    assert truncate_to(incr, 99) == 10  # never grows a file
    assert incr.stat().st_size == 10


def test_no_manifest_no_file(tmp_path: Path) -> None:
    assert incremental_file(tmp_path) is None
    assert AofSampler(tmp_path).sample() is None
