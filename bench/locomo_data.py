"""LoCoMo loading and recall scoring, shared by ``locomo_recall.py`` and the peer scripts.

Pure standard library, so a peer running in another virtualenv can import it too.
Layout: see ``../shared/bench/locomo/README.md``.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path


def _shared_data() -> Path:
    """``shared/bench/locomo/locomo-dev.json`` beside the nearest ancestor that has it (the
    repository's parent for a clone, its grandparent for a worktree under ``wt/``)."""
    relative = Path("shared", "bench", "locomo", "locomo-dev.json")
    here = Path(__file__).resolve()
    for folder in here.parents:
        if (folder / relative).is_file():
            return folder / relative
    return here.parents[2] / relative


DEFAULT_DATA = _shared_data()
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
"""LoCoMo's category numbers as the released data uses them: category 2 questions are the
"When did ..." ones, category 1 the multi-evidence ones, category 3 the commonsense
("Would X likely ...") ones (the paper lists the categories in another order)."""
KS = (5, 10, 20)


@dataclass(frozen=True)
class Turn:
    """One dialogue turn, as stored: ``text`` is "Speaker: words [shared image: caption]"."""

    conversation: str
    dia_id: str
    speaker: str
    text: str
    observed_at: datetime
    session: int


@dataclass(frozen=True)
class Fact:
    """One session observation: a short distilled fact and the turns it cites."""

    conversation: str
    text: str
    evidence: tuple[str, ...]
    observed_at: datetime
    session: int


@dataclass(frozen=True)
class Question:
    """One scored question (categories 1-4 with evidence)."""

    conversation: str
    question: str
    evidence: tuple[str, ...]
    category: int


def parse_session_date(value: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023"."""
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y")


def load(path: Path | str = DEFAULT_DATA) -> list[dict]:
    """The raw conversations."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def turns(data: Iterable[dict]) -> Iterator[Turn]:
    """Every turn of every conversation, in order."""
    for sample in data:
        conv = sample["conversation"]
        numbers = sorted(
            int(k.split("_")[1]) for k in conv if k.startswith("session_") and k.count("_") == 1
        )
        for n in numbers:
            when = parse_session_date(conv[f"session_{n}_date_time"])
            for turn in conv[f"session_{n}"]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shared image: {turn['blip_caption']}]"
                yield Turn(sample["sample_id"], turn["dia_id"], turn["speaker"], text, when, n)


def facts(data: Iterable[dict]) -> Iterator[Fact]:
    """Every session observation of every conversation (both speakers), in order."""
    for sample in data:
        conv = sample["conversation"]
        for key, by_speaker in sample.get("observation", {}).items():
            n = int(key.split("_")[1])
            when = parse_session_date(conv[f"session_{n}_date_time"])
            for entries in by_speaker.values():
                for text, cited in entries:
                    ids = (cited,) if isinstance(cited, str) else tuple(cited)
                    ids = tuple(i.strip() for i in ids if i.strip())
                    yield Fact(sample["sample_id"], text, ids, when, n)


def questions(data: Iterable[dict]) -> Iterator[Question]:
    """Questions of categories 1-4 that have evidence."""
    for sample in data:
        for qa in sample["qa"]:
            if qa.get("category") in CATEGORIES and qa.get("evidence"):
                evidence = tuple(e.strip() for e in qa["evidence"] if e.strip())
                if evidence:
                    yield Question(sample["sample_id"], qa["question"], evidence, qa["category"])


def score(question: Question, ranked_dia_ids: Sequence[str]) -> dict[str, float]:
    """recall@k (share of evidence ids in the top k) and all-evidence hit at each k."""
    return score_cited(question, [(i,) for i in ranked_dia_ids])


def score_cited(question: Question, ranked: Sequence[Sequence[str]]) -> dict[str, float]:
    """recall@k and all-evidence hit at each k, where each ranked memory cites turn ids
    (one for a stored turn, those it cites for a fact): the evidence found is what the
    top k memories cite."""
    out: dict[str, float] = {}
    wanted = set(question.evidence)
    for k in KS:
        found = wanted & {i for cited in ranked[:k] for i in cited}
        out[f"recall@{k}"] = len(found) / len(wanted)
        out[f"all@{k}"] = float(found == wanted)
    return out


def summarise(rows: Sequence[tuple[Question, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Mean metrics overall and per category name."""
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for question, metrics in rows:
        groups["overall"].append(metrics)
        groups[CATEGORIES[question.category]].append(metrics)
    return {
        name: {"n": float(len(ms)), **{k: statistics.fmean(m[k] for m in ms) for k in ms[0]}}
        for name, ms in groups.items()
    }


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
