"""Which baseline row compares with which candidate row, and what differs between them.

Two rows pair when they ran the same test and agree on every setting the user did not choose
the sides by: a printed or defaulted value pairs only with an equal one, an unknown one with
any value (not under ``strict``).  ``match`` (the user's --match) names the only settings that
must agree; the others may differ.  Where a row could pair with several, it pairs with the
closest (fewest settings differing, then fewest unknown): an unknown never outranks a known
equal value.  Whatever differs between paired rows, or is unknown on one side, is said
(``differences``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .settings import settings_of, shown

# Fields whose values name the model (the model is always said when it differs); choosing the
# sides by one of them frees them all (a quantization is part of the model's name).
MODEL_FIELDS = ("model", "model_type", "model_filename", "quantization")


def pairing_fields(layout, frame: pd.DataFrame) -> list[str]:
    """The settings rows pair on: the layout's configuration fields (llama-bench: the model
    file too) and the test."""
    from .experiments import LLAMA_BENCH, TEST_FIELDS

    extra = ("model_filename",) if layout is LLAMA_BENCH else ()
    return [f for f in dict.fromkeys((*layout.fields, *extra, *TEST_FIELDS)) if f in frame]


@dataclass
class Pair:
    base: object                    # index label of the baseline row
    cand: object                    # index label of the candidate row
    differs: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


@dataclass
class Matching:
    pairs: list[Pair]
    fields: list[str]                              # the settings compared
    base: pd.DataFrame                             # settings of the baseline rows (text/None)
    cand: pd.DataFrame

    def values(self, name: str) -> list[tuple[str | None, str | None]]:
        return [(self.base.at[p.base, name], self.cand.at[p.cand, name]) for p in self.pairs]


def match_rows(base: pd.DataFrame, cand: pd.DataFrame, fields: list[str], table: str, *,
               chosen: set[str] = frozenset(), match: list[str] | None = None,
               strict: bool = False, tests: tuple[str, ...] = ("test",)) -> Matching:
    """Pair ``base`` rows with ``cand`` rows on ``fields`` (``chosen`` ones left free)."""
    b = settings_of(base, fields, table)
    c = settings_of(cand, fields, table)
    if chosen & set(MODEL_FIELDS):
        # Models chosen apart: their names, quantizations and the engine a model's format
        # runs on (a GGUF file on llama.cpp) differ with them, and are said.
        chosen = set(chosen) | set(MODEL_FIELDS) | {"engine"}
    free = set(chosen)
    if match:
        free |= {f for f in fields if f not in match and f not in tests}
    # Rows are looked up by the test and every setting that must be equal and that every row
    # of both sides knows: only rows alike on those are compared setting by setting.
    exact = [f for f in fields if f in tests or
             (f not in free and not (f in chosen and f not in MODEL_FIELDS)
              and b[f].notna().all() and c[f].notna().all())]
    if "model" in exact:
        exact.remove("model")            # one model as two engines name it may pair
    candidates: dict[tuple, list] = {}
    for ci, key in zip(c.index, c[exact].itertuples(index=False, name=None)):
        candidates.setdefault(key, []).append(ci)
    scored = []
    for bi, key in zip(b.index, b[exact].itertuples(index=False, name=None)):
        for ci in candidates.get(key, []):
            pair = _pair(b.loc[bi], c.loc[ci], fields, free, chosen, strict)
            if pair is not None:
                pair.base, pair.cand = bi, ci
                scored.append(pair)
    best_b: dict = {}
    best_c: dict = {}
    for p in scored:
        score = (len(p.differs), len(p.unknown))
        best_b[p.base] = min(best_b.get(p.base, score), score)
        best_c[p.cand] = min(best_c.get(p.cand, score), score)
    pairs = [p for p in scored if (len(p.differs), len(p.unknown)) == best_b[p.base]
             == best_c[p.cand]]
    return Matching(pairs, fields, b, c)


def _pair(b: pd.Series, c: pd.Series, fields: list[str], free: set[str], chosen: set[str],
          strict: bool) -> Pair | None:
    pair = Pair(None, None)
    for name in fields:
        if name in chosen and name not in MODEL_FIELDS:
            continue
        bv, cv = b[name], c[name]
        if bv is None and cv is None:
            continue
        if bv is None or cv is None:
            if strict:
                return None
            pair.unknown.append(name)
        elif bv != cv:
            if strict and name not in chosen:
                return None
            if name not in free and not (name == "model" and _named_apart(bv, cv)):
                return None
            pair.differs.append(name)
    return pair


def _named_apart(a: str, b: str) -> bool:
    """One model as two engines name it (`meta-llama/Llama-2-7b-chat-hf` and
    `/models/Llama-2-7b-chat-hf.f16.gguf`): the same family, no two quantizations named.  The
    pair is said; a quantization both name and that differs (a field of its own) still keeps
    them apart."""
    from ..experiments.configs import model_family, quantization_in

    family = model_family(a)
    if family is None or family != model_family(b):
        return False
    qa, qb = quantization_in(a), quantization_in(b)
    return qa is None or qb is None or qa == qb


def differences(matching: Matching, skip: set[str] = frozenset()) -> dict[str, list]:
    """Each field that differs on some pair, or is unknown on one side: its (baseline,
    candidate) values per pair."""
    out = {}
    for name in matching.fields:
        if name in skip:
            continue
        values = matching.values(name)
        if any(bv != cv for bv, cv in values):
            out[name] = values
    return out


def note(name: str, header: str, values: list[tuple[str | None, str | None]]) -> str:
    """`fa: off vs auto`, `fa: off vs unknown, on vs unknown`."""
    seen = list(dict.fromkeys((bv, cv) for bv, cv in values if bv != cv))
    return f"{header}: " + ", ".join(f"{shown(name, bv)} vs {shown(name, cv)}"
                                     for bv, cv in seen)


def sides_line(base: pd.DataFrame, cand: pd.DataFrame, fields: list[str], table: str,
               header, names: tuple[str, str] = ("the baseline", "the candidate")) -> str:
    """One line naming what each side has, field by field where the two differ: `no
    comparable rows: the baseline has model llama ?B Q8_0, test pp512; the candidate ...`."""
    b = settings_of(base, fields, table)
    c = settings_of(cand, fields, table)
    parts: list[list[str]] = [[], []]
    for name in fields:
        if name in ("n_prompt", "n_gen", "n_depth"):
            continue                     # the test names them
        bs = list(dict.fromkeys(shown(name, v) for v in b[name]))
        cs = list(dict.fromkeys(shown(name, v) for v in c[name]))
        if set(bs) == set(cs):
            continue
        for side, got in zip(parts, (bs, cs)):
            listed = ", ".join(got[:6]) + (f" (+{len(got) - 6})" if len(got) > 6 else "")
            side.append(f"{header(name)} {listed}")
    if not parts[0] and not parts[1]:
        return "no comparable rows"
    return (f"no comparable rows: {names[0]} has {'; '.join(parts[0]) or 'rows'}; "
            f"{names[1]} has {'; '.join(parts[1]) or 'rows'}")
