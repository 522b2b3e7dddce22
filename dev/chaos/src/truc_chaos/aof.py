"""Redis's append-only file, seen from outside: where it is, how big it was when,
and cutting its tail off as an operating-system crash would.

Valkey 8 keeps a multi-part AOF in ``appendonlydir/``: a base file, incremental
files and a manifest naming them (``file appendonly.aof.1.incr.aof seq 1 type i``).
Writes are appended to the last incremental file; with ``appendfsync everysec``
they reach the page cache at once but the disk only about once a second, so a
crash of the machine (not of the process: the page cache survives a SIGKILL)
loses the last second or so. :class:`AofSampler` records the size of that file
every ~100 ms; :func:`truncate_to` cuts it back to the size it had at an earlier
instant, which is what the disk would hold after a crash at that instant. The
server is then restarted with ``aof-load-truncated yes`` (a command cut in the
middle is dropped), and automatic rewrites are off (one incremental file for the
whole run, so one file to cut).
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AOF_DIR", "AofSample", "AofSampler", "Truncation", "incremental_file", "truncate_to"]

AOF_DIR = "appendonlydir"
_MANIFEST_SUFFIX = ".manifest"
_KEEP_SECONDS = 120.0


@dataclass(frozen=True, slots=True)
class AofSample:
    at: float
    """``time.time()`` just before the size was read."""
    file: str
    size: int


@dataclass(frozen=True, slots=True)
class Truncation:
    """One simulated crash: what was cut, and the window it stands for."""

    killed_at: float
    """When Redis was killed (``time.time()``)."""
    cut_to_at: float
    """The instant the AOF was cut back to (the sample's time)."""
    file: str
    size_before: int
    size_after: int
    back_at: float = 0.0
    """When Redis answered again (0: not known). Nothing is written between the kill
    and then, so an answer that arrives in that time was written before the kill."""

    @property
    def ends_at(self) -> float:
        """The latest instant an acknowledgement of a write the cut dropped can arrive."""
        return self.back_at if self.back_at else self.killed_at + 5.0

    @property
    def window_ms(self) -> float:
        """The writes of this many milliseconds before the kill were dropped."""
        return (self.killed_at - self.cut_to_at) * 1000

    @property
    def dropped_bytes(self) -> int:
        return self.size_before - self.size_after


def incremental_file(directory: Path) -> Path | None:
    """The AOF file writes go to now (the last incremental file of the manifest)."""
    folder = directory / AOF_DIR
    try:
        manifests = [p for p in folder.iterdir() if p.name.endswith(_MANIFEST_SUFFIX)]
    except OSError:
        return None
    if not manifests:
        return None
    last: tuple[int, str] | None = None
    for line in manifests[0].read_text(errors="replace").splitlines():
        fields = line.split()
        values = dict(zip(fields[::2], fields[1::2], strict=False))
        if values.get("type") == "i" and "file" in values:
            seq = int(values.get("seq", "0"))
            if last is None or seq >= last[0]:
                last = (seq, values["file"])
    return None if last is None else folder / last[1]


def truncate_to(path: Path, size: int) -> int:
    """Cut ``path`` back to ``size`` bytes (never grows it); the size it had."""
    before = path.stat().st_size
    if size < before:
        os.truncate(path, size)
    return before


class AofSampler:
    """A thread recording the incremental AOF file's size every ``interval`` seconds."""

    def __init__(self, directory: Path, *, interval: float = 0.1) -> None:
        self.directory = directory
        self.interval = interval
        self._samples: list[AofSample] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="aof-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
            self._thread = None

    def sample(self) -> AofSample | None:
        at = time.time()
        path = incremental_file(self.directory)
        if path is None:
            return None
        try:
            size = path.stat().st_size
        except OSError:
            return None
        found = AofSample(at, path.name, size)
        with self._lock:
            self._samples.append(found)
            cutoff = at - _KEEP_SECONDS
            if self._samples[0].at < cutoff:
                keep = bisect.bisect_left([s.at for s in self._samples], cutoff)
                del self._samples[:keep]
        return found

    def before(self, instant: float, file: str) -> AofSample | None:
        """The last sample of ``file`` taken at or before ``instant``."""
        with self._lock:
            found = [s for s in self._samples if s.file == file and s.at <= instant]
        return found[-1] if found else None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()
