"""Compare what benchvault stores from a contract capture with the tool's own truth.

Used by tests/test_contract_fixtures.py (every commit) and compat_doc.py (the compatibility
table).  Each check returns a `Report`: values compared, mismatches (field, have, truth).

Truths, never benchvault's own output:
- llama-bench ``-o md``: the same run's ``-oe json`` (``<case>.truth.json``); numbers compared
  as the table prints them (``avg ± stddev`` with 2 decimals, sizes ``%.2f MiB|GiB``, params
  ``%.2f M|B``).
- llama-bench ``-o csv|json|jsonl|sql``: the file read with the standard library's csv, json
  and sqlite3, every field exact.
- ``vllm bench serve`` stdout: the same run's ``--save-result`` JSON; the stdout prints 2
  decimals, integers as they are.
- ``vllm serve`` log: the server's own ``/metrics`` scrape (cache config, spec-decode counters)
  and the launch flags the contract run passed.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from benchvault.ingest.pipeline import expand_paths, ingest_paths
from benchvault.schemas.store import connect

MiB, GiB = 1024 ** 2, 1024 ** 3


@dataclass
class Report:
    capture: str
    compared: int = 0
    mismatches: list[tuple[str, object, object]] = field(default_factory=list)
    fields: set[str] = field(default_factory=set)

    def check(self, name: str, have, truth, equal=None) -> None:
        self.compared += 1
        self.fields.add(name.split("[")[-1].split(".")[-1])
        ok = equal(have, truth) if equal else have == truth
        if not ok:
            self.mismatches.append((name, have, truth))

    @property
    def ok(self) -> bool:
        return not self.mismatches


def ingest(path: Path) -> sqlite3.Connection:
    """A throwaway warehouse holding only ``path``: built in a scratch directory that is gone
    on return, copied into memory (a caller owns no file to clean up)."""
    with tempfile.TemporaryDirectory(prefix="contract-") as tmp:
        db = connect(Path(tmp) / "w.db")
        try:
            ingest_paths(db, expand_paths([path]), None)
            conn = sqlite3.connect(":memory:")
            db.conn.backup(conn)
        finally:
            db.close()
    conn.row_factory = sqlite3.Row
    return conn


def table(conn, name: str) -> list[dict]:
    out = []
    for r in conn.execute(f"SELECT * FROM {name} ORDER BY rowid"):
        row = {}
        for k in r.keys():
            v = r[k]
            if isinstance(v, str) and v[:1] in "[{":
                try:
                    v = json.loads(v)
                except ValueError:
                    pass
            row[k] = v
        out.append(row)
    return out


def unparsed(conn) -> list[dict]:
    return table(conn, "unparsed_blocks")


# ---------------------------------------------------------------- llama-bench

def printed_size(have, truth) -> bool:
    unit = MiB if truth < GiB else GiB
    return have is not None and f"{have / unit:.2f}" == f"{truth / unit:.2f}"


def printed_params(have, truth) -> bool:
    unit = 1e6 if truth < 1e9 else 1e9
    return have is not None and f"{have / unit:.2f}" == f"{truth / unit:.2f}"


def printed_2(have, truth) -> bool:
    return have is not None and f"{have:.2f}" == f"{truth:.2f}"


# Fields the markdown table (and its `build:` line) prints, with how to compare them.  A field
# only appears when the run varied it or it is always shown; `printed_fields` finds out which.
MD_EQUAL = {"avg_ts": printed_2, "stddev_ts": printed_2, "model_size": printed_size,
            "model_n_params": printed_params}
MD_ALWAYS = ["model_type", "model_size", "model_n_params", "backends", "n_prompt", "n_gen",
             "avg_ts", "stddev_ts", "build_commit", "build_number"]
MD_WHEN_COLUMN = {"threads": "n_threads", "fa": "flash_attn", "n_batch": "n_batch",
                  "n_ubatch": "n_ubatch", "type_k": "type_k", "type_v": "type_v",
                  "ngl": "n_gpu_layers"}


def md_columns(md: Path) -> list[str]:
    for line in md.read_text().splitlines():
        if line.startswith("|") and "model" in line:
            return [c.strip() for c in line.strip().strip("|").split("|")]
    return []


def flash_attn_value(truth):
    """-oe json prints flash_attn as true/false (old) or an int; the table prints 0/1 or on/off."""
    return int(truth) if isinstance(truth, bool) else truth


def check_llama_md(md: Path) -> Report:
    report = Report(md.name)
    truth = json.loads(md.with_name(md.stem + ".truth.json").read_text())
    conn = ingest(md)
    got = [r for r in table(conn, "llama_bench_results")]
    report.check("rows", len(got), len(truth))
    report.check("unparsed_blocks", len(unparsed(conn)), 0)
    cols = md_columns(md)
    wanted = MD_ALWAYS + [f for c, f in MD_WHEN_COLUMN.items() if c in cols]
    if "n_depth" in (truth[0] if truth else {}) and any(t.get("n_depth") for t in truth):
        wanted.append("n_depth")
    for i, (have, want) in enumerate(zip(got, truth)):
        for name in wanted:
            if name not in want:
                continue
            value = want[name]
            if name == "flash_attn":
                value = flash_attn_value(value)
            report.check(f"[{i}].{name}", have.get(name), value, MD_EQUAL.get(name))
    return report


def structured_truth(path: Path) -> list[dict]:
    kind = path.suffix[1:]
    if kind == "json":
        return json.loads(path.read_text())
    if kind == "jsonl":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if kind == "csv":
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    if kind == "sql":
        mem = sqlite3.connect(":memory:")
        mem.row_factory = sqlite3.Row
        mem.executescript(path.read_text())
        name = mem.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchone()[0]
        return [dict(r) for r in mem.execute(f"SELECT * FROM {name} ORDER BY rowid")]
    raise ValueError(path)


def same_value(have, truth) -> bool:
    """Exact, modulo the text/number form csv and sql give every field (and benchvault storing
    an empty string, `gpu_info` of a CPU build, as null)."""
    if truth == "" and have is None:
        return True
    if isinstance(truth, str) and not isinstance(have, str) and have is not None:
        if isinstance(have, bool):
            return truth.lower() in (("1", "true") if have else ("0", "false"))
        if isinstance(have, list):
            return " ".join(str(x) for x in have) == truth or json.dumps(have) == truth
        try:
            return float(truth) == float(have)
        except ValueError:
            return False
    if isinstance(truth, bool) or isinstance(have, bool):
        return (bool(have) == bool(truth)) if have is not None else False
    if isinstance(truth, (int, float)) and isinstance(have, (int, float)):
        return float(have) == float(truth)
    return have == truth


def check_llama_structured(path: Path) -> Report:
    report = Report(path.name)
    truth = structured_truth(path)
    conn = ingest(path)
    got = table(conn, "llama_bench_results")
    report.check("rows", len(got), len(truth))
    report.check("unparsed_blocks", len(unparsed(conn)), 0)
    for i, (have, want) in enumerate(zip(got, truth)):
        extra = have.get("extra") or {}
        for name, value in want.items():
            stored = have[name] if name in have and name not in ("extra",) else extra.get(name)
            report.check(f"[{i}].{name}", stored, value, same_value)
    return report


# ---------------------------------------------------------------- vllm bench serve

# save-result keys the stdout does not print (or prints elsewhere), so nothing to compare.
NOT_PRINTED = {"date", "endpoint_type", "label", "model_id", "tokenizer_id", "num_prompts",
               "request_rate", "burstiness", "max_concurrency", "backend", "request_goodput:",
               "input_lens", "output_lens", "ttfts", "itls", "errors", "generated_texts",
               "start_times", "itls", "mode"}
RUN_COLUMNS = {"completed", "failed", "duration", "total_input_tokens", "total_output_tokens",
               "request_throughput", "request_goodput", "output_throughput",
               "total_token_throughput", "max_output_tokens_per_s", "max_concurrent_requests",
               "input_throughput", "spec_decode_acceptance_rate",
               "spec_decode_acceptance_length", "spec_decode_num_drafts",
               "spec_decode_draft_tokens", "spec_decode_accepted_tokens"}
OPTIONAL = {"request_goodput", "max_concurrent_requests", "max_output_tokens_per_s",
            "input_throughput"}
STAT = re.compile(r"^(mean|median|std|p[\d.]+)_(ttft|tpot|itl|e2el)_ms$")


# save-result key -> serving_runs column, for what the client was asked to do.
CONTEXT = {"backend": "backend", "model_id": "model", "num_prompts": "num_prompts",
           "request_rate": "request_rate", "max_concurrency": "max_concurrency",
           "burstiness": "burstiness"}


def same_context(have, truth) -> bool:
    if truth in ("inf", float("inf")):
        return have in ("inf", float("inf"))
    if isinstance(truth, float) and isinstance(have, (int, float)):
        return float(have) == truth
    return have == truth


def printed_block(txt: Path) -> str:
    text = txt.read_text()
    start = text.find("=" * 10)
    return text[start:] if start >= 0 else text


def check_vllm_bench(txt: Path) -> Report:
    report = Report(txt.name)
    truth = json.loads(txt.with_name(txt.stem + ".truth.json").read_text())
    conn = ingest(txt)
    runs = table(conn, "serving_runs")
    report.check("runs", len(runs), 1)
    if not runs:
        return report
    run = runs[0]
    stats = {(s["stat"], s["metric"]): s["value_ms"]
             for s in table(conn, "latency_stats") if s["run_id"] == run["id"]}
    block = printed_block(txt)
    for key, value in truth.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value is None:
            continue
        m = STAT.match(key)
        if m:
            stat, metric = m.groups()
            if stat == "std":
                continue                       # in the JSON, never printed
            report.check(key, stats.get((stat, metric)), value,
                         printed_2 if isinstance(value, float) else None)
        elif key in RUN_COLUMNS:
            have = run.get(key)
            if have is None and key not in OPTIONAL:
                report.check(key, None, value)
                continue
            if have is None:
                continue                       # optional lines: checked by `printed_lines`
            report.check(key, have, value, printed_2 if isinstance(value, float) else None)
    rates = truth.get("spec_decode_per_position_acceptance_rates")
    if isinstance(rates, list):
        have = run.get("spec_decode_per_position_acceptance_rates") or []
        report.check("spec_decode_per_position_acceptance_rates", len(have), len(rates))
        for i, (h, t) in enumerate(zip(have, rates)):
            report.check(f"spec_decode_per_position_acceptance_rates[{i}]", h,
                         t * 100 if t <= 1 else t, printed_2)
    # The run's context, which benchvault reads from the command line / Namespace above it.
    for key, column in CONTEXT.items():
        if key in truth:
            report.check(key, run.get(column), truth[key], same_context)
    # Every `label: number` the block printed must be stored somewhere.
    numbers = re.findall(r"^([A-Za-z][^:\n]*?):\s+(-?[\d.]+)\s*$", block, re.M)
    report.check("printed lines stored", _stored_count(run, stats), len(numbers),
                 lambda have, want: have >= want)
    report.check("unparsed_blocks", len(unparsed(conn)), 0)
    return report


def _stored_count(run: dict, stats: dict) -> int:
    cols = [k for k in RUN_COLUMNS | {"max_concurrency", "request_rate", "spec_decode_acceptance_rate",
                                      "spec_decode_acceptance_length", "spec_decode_num_drafts",
                                      "spec_decode_draft_tokens", "spec_decode_accepted_tokens"}
            if run.get(k) is not None]
    extra = run.get("extra") or {}
    per_pos = run.get("spec_decode_per_position_acceptance_rates") or []
    return len(cols) + len(stats) + len(extra) + len(per_pos)


# ---------------------------------------------------------------- vllm serve log

def metrics(path: Path) -> dict[str, list[tuple[dict, float]]]:
    out: dict[str, list] = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^([\w:]+)(?:\{(.*)\})?\s+(\S+)$", line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return out


def check_vllm_server(log: Path, about: dict) -> Report:
    report = Report(log.name)
    truth = metrics(log.with_name(log.stem + ".metrics.txt"))
    conn = ingest(log)
    launches = table(conn, "server_launches")
    report.check("launches", len(launches), 1)
    if not launches:
        return report
    launch = launches[0]
    report.check("version", (launch.get("version") or "").split("+")[0], about["version"])
    report.check("max_model_len", launch.get("max_model_len"), 512)
    report.check("dtype", launch.get("dtype"), "bfloat16")
    info = (truth.get("vllm:cache_config_info") or [({}, 0)])[0][0]
    if info.get("num_gpu_blocks") and info["num_gpu_blocks"] != "None":
        blocks, block_size = int(info["num_gpu_blocks"]), int(info["block_size"])
        if launch.get("kv_cache_tokens") is not None or about["engine"] == "v1":
            report.check("kv_cache_tokens", launch.get("kv_cache_tokens"), blocks * block_size)
        if launch.get("gpu_blocks") is not None or about["engine"] == "v0":
            report.check("gpu_blocks", launch.get("gpu_blocks"), blocks)
    if about.get("spec"):
        spec = about["spec"]
        report.check("speculative_model", launch.get("speculative_model"), spec["method"])
        report.check("num_speculative_tokens", launch.get("num_speculative_tokens"),
                     spec["num_speculative_tokens"])
        rows = table(conn, "spec_decode_metrics")
        drafted = sum(v for _, v in truth.get("vllm:spec_decode_num_draft_tokens_total", []))
        accepted = sum(v for _, v in truth.get("vllm:spec_decode_num_accepted_tokens_total", []))
        if rows and about["engine"] == "v1":
            # V1 logs per-interval counts; the intervals logged add up to at most the counter.
            report.check("spec draft_tokens (sum of intervals <= counter)",
                         sum(r["draft_tokens"] or 0 for r in rows), drafted,
                         lambda have, want: 0 < have <= want)
            report.check("spec accepted_tokens (sum <= counter)",
                         sum(r["accepted_tokens"] or 0 for r in rows), accepted,
                         lambda have, want: have <= want)
    report.check("unparsed_blocks", len(unparsed(conn)), 0)
    return report


# ---------------------------------------------------------------- known findings

# Known benchvault bugs the contract runs found, outside the format modules this suite may fix:
# (fixture dir prefix, compared field) -> why.  A capture whose only mismatches are listed here
# is an expected failure; once fixed it simply passes, and its entry should be removed.
KNOWN: dict[tuple[str, str], str] = {
    # Empty since 2928afa fixed the two the first runs found (vLLM 0.32's 'WARNING: vllm bench
    # serve no longer sets temperature==0 ...' taken for the bench command, dropping the
    # command and Namespace; 'Restart vllm serve with --enable-scale-out' taken for a launch).
}


def known(fixture_dir: str, field: str) -> str | None:
    for (prefix, name), why in KNOWN.items():
        if fixture_dir.startswith(prefix) and field == name:
            return why
    return None


# ---------------------------------------------------------------- walking fixtures

def check_dir(path: Path) -> list[Report]:
    about = json.loads((path / "ABOUT.json").read_text())
    reports = []
    if about["tool"] == "llama.cpp":
        for md in sorted(path.glob("*.md")):
            reports.append(check_llama_md(md))
        for ext in ("csv", "json", "jsonl", "sql"):
            for f in sorted(path.glob(f"*.{ext}")):
                if f.name.endswith(".truth.json") or f.name == "ABOUT.json":
                    continue
                reports.append(check_llama_structured(f))
    elif about["tool"] == "vllm":
        for txt in sorted(path.glob("*.txt")):
            if txt.name.endswith(".metrics.txt"):
                continue
            reports.append(check_vllm_bench(txt))
        for log in sorted(path.glob("*server.log")):
            spec_about = dict(about, spec=about.get("spec") if log.name.startswith("spec") else None)
            reports.append(check_vllm_server(log, spec_about))
    return reports
