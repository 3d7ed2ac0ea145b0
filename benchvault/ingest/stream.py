"""A big file parsed by a worker process of its own while this one stores its rows.

The worker is forked before the file is opened; its items come back in batches through a
pipe, packed (packing.pack), the writer storing one batch while the worker parses the next.
When the writer keeps up and waits for batches, the worker leaves some of the blocks it cut
for the writer to build (:class:`Share`): on a log of result blocks the worker is the slower
side, on a log of new runs the writer is.
"""

from __future__ import annotations

import os
import pickle
import time
from typing import Any, Callable, Iterator

from .parse import build_deferred
from .packing import pack, unpack
from ..reading.lines import ReadReport

# Items per message, and bytes read between messages when a stretch of a log yields no item:
# the bar moves on a 1 GB log of prose while the worker reads it.
BATCH_ITEMS = 256
PROGRESS_BYTES = 8 << 20


class Share:
    """Which blocks the worker leaves to the writer: every ``EVERY[level]``-th (0: none).
    The level goes up after a batch the writer took at once (it was waiting for it) and down
    after one the worker had to wait to hand over (the writer was still busy)."""

    EVERY = (0, 8, 4, 3, 2)
    WAITED = 0.002      # seconds a hand-over may take when the writer is already waiting

    def __init__(self) -> None:
        self.level = 0
        self.count = 0

    def __call__(self) -> bool:
        every = self.EVERY[self.level]
        if not every:
            return False
        self.count += 1
        return self.count % every == 0

    def handed_over(self, seconds: float) -> None:
        if seconds > self.WAITED:
            self.level = max(0, self.level - 1)
        else:
            self.level = min(len(self.EVERY) - 1, self.level + 1)


class WorkerLost(Exception):
    """The worker died (killed, out of memory) or sent what cannot be read back: the file is
    read again in this process."""


def streamed(parse: Callable[[ReadReport, Callable[[], bool]], Iterator[Any]],
             report: ReadReport) -> "Stream":
    """The items of ``parse(report, defer)`` as a worker process forked now yields them, in
    order; the blocks ``defer`` said to leave are built here (ingest.build_deferred).

    ``report`` receives the worker's progress (``on_bytes``) as batches arrive and its
    findings (encoding, binary, lines not UTF-8) at the end.  An exception in the worker is
    raised here after the items before it, as if ``parse`` had run here; a worker that dies
    raises :class:`WorkerLost`.  Closing the iterator early stops the worker.
    """
    import multiprocessing

    # Forked here, not at the first item: before the caller starts threads (the file's hash).
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_produce, args=(parse, sender, receiver), daemon=True)
    process.start()
    sender.close()
    return Stream(process, receiver, report)


class Stream:
    """A worker's items as they arrive (iterate once); ``close()`` stops the worker."""

    def __init__(self, process, receiver, report: ReadReport):
        self.process, self.receiver, self.report = process, receiver, report

    def __iter__(self) -> Iterator[Any]:
        try:
            while True:
                try:
                    kind, read, payload, items = self._message()
                except (EOFError, OSError, pickle.UnpicklingError, AttributeError,
                        ImportError) as exc:
                    raise WorkerLost(f"the parsing worker stopped: "
                                     f"{exc or type(exc).__name__}") from None
                if read and self.report.on_bytes is not None:
                    self.report.on_bytes(read)
                yield from build_deferred(items)
                if kind == "end":
                    self.report.encoding, self.report.binary, self.report.fallback_lines = \
                        payload
                    return
                if kind == "error":
                    raise payload
        finally:
            self.close()

    def _message(self) -> tuple[str, int, Any, list[Any]]:
        """(kind, bytes read, payload, items): a header, then the packed items."""
        kind, read, payload = pickle.loads(self.receiver.recv_bytes())
        return kind, read, payload, unpack(self.receiver.recv_bytes())

    def close(self) -> None:
        self.receiver.close()
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()


def _produce(parse: Callable[[ReadReport, Callable[[], bool]], Iterator[Any]],
             sender, receiver) -> None:
    """The worker: ``parse`` run with the items sent in batches (see :func:`streamed`)."""
    # The reading end, inherited through fork: closed, so that the pipe breaks (and this
    # process ends) when the writer is gone -- else, killed, it would leave this one blocked
    # for ever on a full pipe that it holds open itself.
    receiver.close()
    batch: list[Any] = []
    read = [0]
    share = Share()

    def send(kind: str, payload: Any = None) -> None:
        try:
            header = pickle.dumps((kind, read[0], payload))
        except Exception:        # an exception that cannot be pickled: its text
            header = pickle.dumps((kind, read[0], RuntimeError(
                f"{type(payload).__name__}: {payload}")))
        items = pack(batch)
        started = time.perf_counter()
        sender.send_bytes(header)
        sender.send_bytes(items)
        share.handed_over(time.perf_counter() - started)
        batch.clear()
        read[0] = 0

    def on_bytes(n: int) -> None:
        read[0] += n
        if read[0] >= PROGRESS_BYTES:
            send("items")

    report = ReadReport(on_bytes=on_bytes)
    try:
        for item in parse(report, share):
            batch.append(item)
            if len(batch) >= BATCH_ITEMS:
                send("items")
        send("end", (report.encoding, report.binary, report.fallback_lines))
    except BrokenPipeError:      # the writer stopped reading (an error there, or Ctrl-C)
        pass
    except BaseException as exc:  # noqa: BLE001 - raised again in the writer
        send("error", exc)
    finally:
        sender.close()
        os._exit(0)
