"""Read a saved log or note as clean text lines, one at a time.

Users' files are terminal captures and pasted notes: CRLF endings, ANSI colour codes, tqdm
redraws with bare carriage returns, mojibake (`Â±` for `±`), odd encodings.  This module turns
bytes into the text a person would have seen, streaming, so a 1 GB log never sits in memory.
"""

from __future__ import annotations

import codecs
import hashlib
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator


# CSI sequences (colours, cursor moves), OSC sequences (window titles) and two-byte escapes.
ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
SNIFF_BYTES = 8192
# What log collectors put before every line of a program's output: `docker logs -t` / GitHub
# Actions / Kubernetes RFC 3339 timestamps, `docker compose` service names (`bench-1  | `),
# `kubectl logs --prefix` (`[pod/vllm-0/vllm] `), a node's container log (CRI:
# `2025-09-01T10:00:00Z stdout F `).  Removed so a result block still starts its line; plain
# dates in prose (no `T`, no zone) are left alone.
# journald/syslog (`Nov 22 12:00:01 host vllm[123]: `) and `tee`-style stream tags
# (`[stdout] `) too; and a logging setup's own fields between bars, up to its level
# (loguru's `2025-01-05 10:00:00.123 | INFO     | app:main:42 - `, `2026-03-30 13:11:55 |
# gpu_model_runner | 140661262452544 | INFO : `).
COLLECTOR_PREFIX_RE = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?[ \t]*\|(?:[^|\n]{0,80}\|){0,3}"
    r"[ \t]*(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b[ \t]*(?:\|[^|\n]{0,80}?)?[ \t]*[-:|](?:[ \t]|$)"
    r"|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})"
    r"(?:[ \t]+(?:stdout|stderr)[ \t]+[FP])?(?:[ \t]|$)"
    r"|[\w.-]+[-_]\d+[ \t]+\|(?:[ \t]|$)"
    r"|\[pod/[^\]\s]+\](?:[ \t]|$)"
    r"|\[(?:stdout|stderr|out|err)\][ \t]?"
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} "
    r"[\w.-]+ [\w./@-]+(?:\[\d+\])?:(?: |$))")
SYSLOG_MONTH_INITIALS = "JFMASOND"
# A progress indicator that printed dots without a newline (`Loading....`) leaves them glued
# before the next log record: `...INFO 05-02 10:11:12 [executor_base.py:110] # npu blocks:`.
# Removed when a log level, a process tag or a dated prefix follows them, so the record starts
# its line again.
GLUED_DOTS_RE = re.compile(
    r"^\.+(?=(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)\b|\(\w[\w .\-]*pid=\d+\)"
    r"|\[\d{4}-\d{2}-\d{2}[ T])")


class UnreadableFile(Exception):
    """The file cannot be opened or read at all (missing, permission, a directory)."""


@dataclass
class ReadReport:
    """What the reader noticed about a file's bytes, for warnings with file:line."""

    encoding: str = "utf-8"
    binary: bool = False
    fallback_lines: list[int] = field(default_factory=list)
    # Told how many bytes each chunk read: a progress bar by bytes on a big file.
    on_bytes: Callable[[int], None] | None = None
    # Asked at the end of the bytes written so far, for a file still being written
    # (`ingest --watch`): it returns once more may be there (True: read on) or when the file is
    # to end here (False).  An unfinished last line waits for its end in the meantime.
    follow: Callable[[], bool] | None = None


def clean_line(text: str) -> str:
    """What a terminal would show for one captured line, without a collector's prefix."""
    return without_prefix(shown_line(text)).rstrip()


def shown_line(text: str) -> str:
    """What a terminal would show for one captured line, a collector's prefix included."""
    text = text.rstrip("\r\n")
    if "\r" in text:
        # A tqdm bar redraws itself with bare CRs: the last non-empty segment is what stayed.
        parts = [p for p in text.split("\r") if p.strip()]
        text = parts[-1] if parts else ""
    if "\x1b" in text:
        text = ANSI_RE.sub("", text)
    if not text.isascii():
        import ftfy  # here: most lines are ASCII and most runs need no ftfy at all

        text = ftfy.fix_text(text, unescape_html=False, uncurl_quotes=False).translate(SPACES)
    return text


# A page's no-break and typographic spaces are the blanks a terminal printed; zero-width marks
# (a word joiner, a byte-order mark a copy left at a line's start) are nothing.
SPACES = {**{ord(c): " " for c in "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
             "\u2008\u2009\u200a\u202f\u205f"},
          **{ord(c): None for c in "\u200b\u200c\u2060\ufeff"}}


# A line where without_prefix would look for a prefix, but for a `|` (take_plain's span holds
# none): its condition at every line start of a span.
MAY_BE_PREFIXED_RE = re.compile(rf"^(?:[0-9\[.]|[{SYSLOG_MONTH_INITIALS}].. )", re.M)


def without_prefix(text: str) -> str:
    """``text`` without a log collector's prefix (COLLECTOR_PREFIX_RE), asked only where one
    can start: a digit, `[`, a month and a space, a `|` near the start; then without progress
    dots glued before the record (GLUED_DOTS_RE), asked only where the line starts with `.`."""
    first = text[:1]
    if first.isdigit() or first == "[" or first in SYSLOG_MONTH_INITIALS and text[3:4] == " " \
            or "|" in text[:64]:
        text = COLLECTOR_PREFIX_RE.sub("", text, count=1)
    if text[:1] == ".":
        text = GLUED_DOTS_RE.sub("", text, count=1)
    return text


def sniff_encoding(head: bytes) -> tuple[str, bool]:
    """(encoding, is_binary) from the first bytes of a file."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig", False
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", False
    if b"\x00" in head:
        # UTF-16 without a BOM shows a NUL in every other byte of ASCII text.
        even, odd = head[0::2], head[1::2]
        if odd and odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
            return "utf-16-le", False
        if even and even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
            return "utf-16-be", False
        return "binary", True
    return "utf-8", False


class LineSource:
    """(line number, cleaned text) for every line of a file, 1-based, read in large chunks.

    ``skip_inert()`` moves past the lines ahead that hold no prefilter marker (see
    prefilter.py), counting them, so that a reader with nothing open can jump to the next
    line that matters without decoding the ones between.
    """

    CHUNK = 1 << 20   # small enough that the prefilter and the line count read it from cache

    def __init__(self, path: Path, report: ReadReport | None = None, prefilter=None):
        self.report = report if report is not None else ReadReport()
        self.prefilter = prefilter
        try:
            self.fh = open(path, "rb", buffering=0)  # whole chunks: no buffer under them
        except OSError as exc:
            raise UnreadableFile(f"{path}: {exc.strerror or exc}") from exc
        head = self.fh.read(SNIFF_BYTES)
        self.report.encoding, self.report.binary = sniff_encoding(head)
        self.fh.seek(0)
        self.encoding = "utf-8" if self.report.encoding == "utf-8-sig" else self.report.encoding
        self.utf16 = self.report.encoding.startswith("utf-16")
        self.utf16_lines = codecs.getreader(self.report.encoding)(self.fh, errors="replace") \
            if self.utf16 else None
        self.buf = b""
        self.pos = 0                  # offset in buf of the next line
        self.lineno = 1               # number of the next line
        self.cut = 0                  # what the last line's collector prefix took (__next__)
        self.candidates: list[int] = []
        self.next_candidate = 0       # index into candidates
        self.eof = self.report.binary
        self.first = True
        self.end = 0                  # buf[:end] holds whole lines; the rest is read again

    def __iter__(self) -> "LineSource":
        return self

    def close(self) -> None:
        self.fh.close()

    def _load(self) -> bool:
        """Read the next chunk of whole lines into ``buf[:end]``; False at the end of the file."""
        if self.eof:
            return False
        data = self.fh.read(self.CHUNK)
        while not data and self._written_on():
            data = self.fh.read(self.CHUNK)
        if not data:
            self.eof = True
            return False
        end = data.rfind(b"\n") + 1
        while not end:  # one line longer than a chunk: read on
            more = self.fh.read(self.CHUNK)
            if not more:
                if self._written_on():
                    continue
                end = len(data)  # the last line, without its newline
                break
            found = more.rfind(b"\n")
            data += more
            end = len(data) - len(more) + found + 1 if found >= 0 else 0
        if end < len(data):
            self.fh.seek(end - len(data), 1)  # the unfinished line is read with the next chunk
        if self.first and data.startswith(codecs.BOM_UTF8):
            # Cut, not stepped over: the first line must start at 0 for the prefilter.
            data, end = data[len(codecs.BOM_UTF8):], end - len(codecs.BOM_UTF8)
        self.first = False
        self.pos = 0
        self.buf, self.end = data, end
        if self.report.on_bytes is not None:
            self.report.on_bytes(end)
        self.candidates = self.prefilter.candidates(data, end) if self.prefilter else []
        self.next_candidate = 0
        return True

    def _written_on(self) -> bool:
        """At the end of the bytes written so far: may more be read (ReadReport.follow)?"""
        return self.report.follow is not None and self.report.follow()

    def __next__(self) -> tuple[int, str]:
        if self.utf16:
            text = next(self.utf16_lines)
        else:
            if self.pos >= self.end and not self._load():
                raise StopIteration
            end = self.buf.find(b"\n", self.pos, self.end)
            end = self.end if end < 0 else end + 1
            raw, self.pos = self.buf[self.pos:end], end
            try:
                text = raw.decode(self.encoding)
            except UnicodeDecodeError:
                # Not UTF-8: Latin-1 never fails, and ftfy repairs what it can afterwards.
                self.report.fallback_lines.append(self.lineno)
                text = raw.decode("latin-1")
        lineno, self.lineno = self.lineno, self.lineno + 1
        shown = shown_line(text)
        cleaned = without_prefix(shown)
        # How much of the line as printed its collector's prefix took: a terminal that wrapped
        # the line counted it (reading/wrap.py).
        self.cut = len(shown) - len(cleaned)
        return lineno, cleaned.rstrip()

    def _candidate_ahead(self) -> int:
        """Offset of the first candidate line at or after the position (``end`` if none)."""
        candidates, i = self.candidates, self.next_candidate
        while i < len(candidates) and candidates[i] < self.pos:
            i += 1
        self.next_candidate = i
        return candidates[i] if i < len(candidates) else self.end

    def take_plain(self, prepare: Callable[[str], str], is_end: Callable[[str], object],
                   room: int) -> tuple[list[tuple[int, str]], bool]:
        """The lines from here that hold no marker, in the chunk read, each cleaned and passed
        through ``prepare``; it stops after the first that ``is_end`` accepts (True), at the
        next candidate line or the end of the chunk, or after ``room`` lines (False)."""
        lines: list[tuple[int, str]] = []
        if self.prefilter is None or self.utf16:
            return lines, False
        stop = self._candidate_ahead()
        buf, pos, lineno, encoding = self.buf, self.pos, self.lineno, self.encoding
        # The usual case, a block's body lines that need no cleaning beyond their ends, is
        # decoded and split at once (the same lines as below, at half the cost).
        span = buf[pos:stop].decode(encoding)
        if "\r" not in span and "\x1b" not in span and "|" not in span:
            # No line of the span can carry a collector's prefix (one search, not a test a line).
            bare = MAY_BE_PREFIXED_RE.search(span) is None
            for text in span.split("\n")[:max(room, 0)]:
                if pos >= stop:
                    break
                pos += len(text) + 1
                text = prepare(text.rstrip() if bare else without_prefix(text).rstrip())
                lines.append((lineno, text))
                lineno += 1
                if is_end(text):
                    self.pos, self.lineno = min(pos, stop), lineno
                    return lines, True
            self.pos, self.lineno = min(pos, stop), lineno
            return lines, False
        ended = False
        while pos < stop and len(lines) < room:
            newline = buf.find(b"\n", pos, stop)
            after = stop if newline < 0 else newline + 1
            # A marker-free line is ASCII (the prefilter takes every other), so it decodes.
            text = prepare(clean_line(buf[pos:after].decode(encoding)))
            lines.append((lineno, text))
            pos, lineno = after, lineno + 1
            if is_end(text):
                ended = True
                break
        self.pos, self.lineno = pos, lineno
        return lines, ended

    def take_records(self, take: Callable[[int, str, Callable[[], str | None]], bool]) -> None:
        """Offer ``take`` the candidate lines from here, each cleaned, with the inert lines
        between them skipped, until it refuses one (left to be read next) or the chunk ends.
        ``take(lineno, text, peek)``: ``peek()`` is the line after (None: not in this chunk)."""
        if self.prefilter is None or self.utf16:
            return
        while True:
            line_at = self._candidate_ahead()
            if line_at >= self.end:
                return
            text, after = self._cleaned_at(line_at)
            if text is None:
                return      # __next__ reads it, noting the Latin-1 fallback
            lineno = self.lineno + self.buf.count(b"\n", self.pos, line_at)

            def peek(after: int = after) -> str | None:
                return self._cleaned_at(after)[0] if after < self.end else None

            if not take(lineno, text, peek):
                self.pos, self.lineno = line_at, lineno
                return
            self.pos, self.lineno = after, lineno + 1

    def _cleaned_at(self, start: int) -> tuple[str | None, int]:
        """(the cleaned line at ``start`` of the chunk, or None if it is not UTF-8, and
        where the next line starts)."""
        newline = self.buf.find(b"\n", start, self.end)
        after = self.end if newline < 0 else newline + 1
        try:
            return clean_line(self.buf[start:after].decode(self.encoding)), after
        except UnicodeDecodeError:
            return None, after

    def skip_inert(self) -> None:
        """Move to the next line that holds a marker (or to the end), counting lines."""
        if self.prefilter is None or self.utf16:
            return
        while True:
            target = self._candidate_ahead()
            if target > self.pos:
                self.lineno += self.buf.count(b"\n", self.pos, target)
                self.pos = target
            if target < self.end or not self._load():
                return


def iter_lines(path: Path, report: ReadReport | None = None) -> Iterator[tuple[int, str]]:
    """Yield (line number, cleaned text) for every line of ``path``; 1-based numbers."""
    source = LineSource(path, report)
    try:
        yield from source
    finally:
        source.close()


def file_digest(path: Path) -> tuple[str, int]:
    """(sha256 hex, size in bytes), read in 1 MiB chunks."""
    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
    except OSError as exc:
        raise UnreadableFile(f"{path}: {exc.strerror or exc}") from exc
    return digest.hexdigest(), size


class FileDigest:
    """``file_digest(path)`` computed in a thread (hashlib lets go of the GIL while it hashes,
    so on a second core it costs the reader nothing).  A small file is hashed at once: a
    thread would cost more than its hash."""

    INLINE_BYTES = 1 << 20

    def __init__(self, path: Path, size: int | None = None):
        self._outcome: tuple[str, int] | UnreadableFile | None = None
        self._thread: threading.Thread | None = None
        if size is not None and size < self.INLINE_BYTES:
            self._run(path)
            return
        self._thread = threading.Thread(target=self._run, args=(path,), daemon=True)
        self._thread.start()

    def _run(self, path: Path) -> None:
        try:
            self._outcome = file_digest(path)
        except UnreadableFile as exc:
            self._outcome = exc

    def result(self, wait_only: bool = False) -> tuple[str, int]:
        if self._thread is not None:
            self._thread.join()
        if isinstance(self._outcome, UnreadableFile) and not wait_only:
            raise self._outcome
        return self._outcome  # type: ignore[return-value]
