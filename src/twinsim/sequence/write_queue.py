"""`WriteQueue`: a sequence's file writes on a small thread pool, overlapping the simulation.

Writes are queued in batches (a camera frame's four images, one file of a stream with its own
files); at most `MAX_BATCHES_IN_FLIGHT` batches are pending, so memory stays flat over long
runs, and a failed write is raised by the next wait for room and again by `drain`, so a
caller that goes on after it still cannot finish the sequence as complete.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

#: Batches whose files may be queued or being written at once; the caller waits beyond this.
MAX_BATCHES_IN_FLIGHT = 4

#: One write: a function, then its arguments, run on the pool.
Task = tuple[Any, ...]


class WriteQueue:
    """File writes on a thread pool (OpenCV and file I/O release the GIL), batch by batch."""

    def __init__(self, workers: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="seq-io")
        self._in_flight: deque[list[Future[None]]] = deque()
        self._failure: Exception | None = None

    def submit(self, tasks: Iterable[Task]) -> None:
        """Queue one batch of writes, first waiting for room (re-raising an earlier failure)."""
        while len(self._in_flight) >= MAX_BATCHES_IN_FLIGHT:
            self._finish_oldest()
        self._in_flight.append([self._pool.submit(*task) for task in tasks])

    def drain(self) -> None:
        """Wait for every queued write, raising the first failure (even one raised before)."""
        while self._in_flight:
            self._finish_oldest()
        if self._failure is not None:
            raise self._failure

    def shut_down(self) -> list[BaseException]:
        """Let queued writes finish and stop the pool; the failures, for the caller to log."""
        pending = [f for batch in self._in_flight for f in batch]
        self._in_flight.clear()
        wait(pending)
        self._pool.shutdown(wait=True)
        return [exc for exc in (f.exception() for f in pending) if exc is not None]

    def _finish_oldest(self) -> None:
        """Wait for the oldest batch, keeping its failure for `drain`."""
        try:
            for future in self._in_flight.popleft():
                future.result()
        except Exception as exc:
            self._failure = self._failure or exc
            raise
