"""Read a saved log or note as clean text lines, one at a time.

Users' files are terminal captures and pasted notes: CRLF endings, ANSI colour codes, tqdm
redraws with bare carriage returns, mojibake (`Â±` for `±`), odd encodings.  This module turns
bytes into the text a person would have seen, streaming, so a 1 GB log never sits in memory.
"""

from __future__ import annotations

import codecs
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

import ftfy

# CSI sequences (colours, cursor moves), OSC sequences (window titles) and two-byte escapes.
ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
SNIFF_BYTES = 8192
# What log collectors put before every line of a program's output: `docker logs -t` / GitHub
# Actions / Kubernetes RFC 3339 timestamps, `docker compose` service names (`bench-1  | `),
# `kubectl logs --prefix` (`[pod/vllm-0/vllm] `).  Removed so a result block still starts its
# line; plain dates in prose (no `T`, no zone) are left alone.
COLLECTOR_PREFIX_RE = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})[ \t]"
    r"|[\w.-]+[-_]\d+[ \t]+\|[ \t]"
    r"|\[pod/[^\]\s]+\][ \t])")


class UnreadableFile(Exception):
    """The file cannot be opened or read at all (missing, permission, a directory)."""


@dataclass
class ReadReport:
    """What the reader noticed about a file's bytes, for warnings with file:line."""

    encoding: str = "utf-8"
    binary: bool = False
    fallback_lines: list[int] = field(default_factory=list)


def clean_line(text: str) -> str:
    """What a terminal would show for one captured line."""
    text = text.rstrip("\r\n")
    if "\r" in text:
        # A tqdm bar redraws itself with bare CRs: the last non-empty segment is what stayed.
        parts = [p for p in text.split("\r") if p.strip()]
        text = parts[-1] if parts else ""
    if "\x1b" in text:
        text = ANSI_RE.sub("", text)
    if not text.isascii():
        text = ftfy.fix_text(text, unescape_html=False, uncurl_quotes=False)
    if text[:1].isdigit() or text[:1] == "[" or "|" in text[:64]:
        text = COLLECTOR_PREFIX_RE.sub("", text, count=1)
    return text.rstrip()


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


def _decoded_lines(fh: BinaryIO, encoding: str, report: ReadReport) -> Iterator[str]:
    if encoding.startswith("utf-16"):
        reader = codecs.getreader(encoding)(fh, errors="replace")
        for line in reader:
            yield line
        return
    for lineno, raw in enumerate(fh, 1):
        try:
            yield raw.decode(encoding)
        except UnicodeDecodeError:
            # Not UTF-8: Latin-1 never fails, and ftfy repairs what it can afterwards.
            report.fallback_lines.append(lineno)
            yield raw.decode("latin-1")


def iter_lines(path: Path, report: ReadReport | None = None) -> Iterator[tuple[int, str]]:
    """Yield (line number, cleaned text) for every line of ``path``; 1-based numbers."""
    report = report if report is not None else ReadReport()
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise UnreadableFile(f"{path}: {exc.strerror or exc}") from exc
    with fh:
        head = fh.read(SNIFF_BYTES)
        report.encoding, report.binary = sniff_encoding(head)
        if report.binary:
            return
        fh.seek(0)
        for lineno, text in enumerate(_decoded_lines(fh, report.encoding, report), 1):
            yield lineno, clean_line(text)


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
