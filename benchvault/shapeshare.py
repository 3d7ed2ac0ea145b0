"""A many-file ingest's worker processes share the shapes their memos learn (reading/memo.py).

Each worker reads some of the notes; alone, each would learn every shape again -- the grammar
run two or three times on the first text of each shape, in every worker (most of what a
worker spends beyond what one process spends on the same notes).  So a worker appends what
it learnt while reading a file to one file all the workers hold open, and before its next
file takes in what the others appended there.  That file is an unlinked temporary file,
made before the workers are forked (they inherit it open): nothing is left on disk, whatever
happens to them.  Records are a length and a pickle, appended with O_APPEND (one write each,
never interleaved); a reader leaves a record it sees only part of for next time.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import struct
import tempfile

from .reading import memo

_LENGTH = struct.Struct("<I")


class Exchange:
    """The shared file; made in the writer, used by the workers forked after it (closed
    when the last of them lets it go)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(buffering=0)
        self.fd = self._file.fileno()
        fcntl.fcntl(self.fd, fcntl.F_SETFL, fcntl.fcntl(self.fd, fcntl.F_GETFL) | os.O_APPEND)
        self.read_to = 0

    def close(self) -> None:
        self._file.close()

    def send(self) -> None:
        """Append what this process learnt since it last sent."""
        learnt = memo.take_learnt()
        if learnt:
            body = pickle.dumps((os.getpid(), learnt), protocol=pickle.HIGHEST_PROTOCOL)
            os.write(self.fd, _LENGTH.pack(len(body)) + body)

    def receive(self) -> None:
        """Take in what the other workers appended since this one last looked."""
        new = os.fstat(self.fd).st_size - self.read_to
        if new <= 0:
            return
        data, at, me = os.pread(self.fd, new, self.read_to), 0, os.getpid()
        while at + _LENGTH.size <= len(data):
            (length,) = _LENGTH.unpack_from(data, at)
            end = at + _LENGTH.size + length
            if end > len(data):
                break           # still being written
            sender, learnt = pickle.loads(data[at + _LENGTH.size:end])
            if sender != me:
                memo.adopt(learnt)
            at = end
        self.read_to += at


# The exchange this process takes part in (see join).
joined: Exchange | None = None


def join(exchange: Exchange) -> None:
    """Take part in ``exchange`` (the writer, and each worker as it starts): record what the
    memos learn, to send it."""
    global joined
    joined = exchange
    memo.record_learnt()


def leave() -> None:
    """Take part no more (the writer, once its workers are gone)."""
    global joined
    joined = None
    memo.stop_recording()
