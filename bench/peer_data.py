"""What ``peer.py`` and its workers share: the synthetic corpus, the layouts, the vector
cache and the statistics. Pure standard library (plus numpy for the cache), so the mem0
worker can import it from its own venv.

The corpus is deterministic (seed ``SEED``): short third-person memories built from
templates ("Maya adopted a beagle named Pixel in May 2021."), each with the question a
user would ask about it ("What pet did Maya adopt?"). Texts are unique, so no system's
duplicate detection drops any of them. A *layout* says how many scopes and memories per
scope a run holds: ``single`` puts ``size`` memories in one scope, ``scopes`` spreads
``scopes x per_scope`` memories over that many users, drawing each user's memories from
the same pool (a text appears in several scopes, never twice in one).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from add_cost_data import percentile

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
CACHE = RESULTS / "cache"
SEED = 20240601
CORPUS_VERSION = 1
POOL_MAX = 100_000
"""Distinct facts at most in one run (the scopes layout reuses them across scopes)."""
BATCH = 100
"""Messages per ``add`` call in the bulk fill and the batched ingest."""

_NAMES = (
    "Maya Liam Noah Emma Olivia Ava Sophia Isabella Mia Amelia Harper Evelyn Abigail Emily "
    "Ella Elizabeth Camila Luna Sofia Avery Mila Aria Scarlett Penelope Layla Chloe Victoria "
    "Madison Eleanor Grace Nora Riley Zoey Hannah Hazel Lily Ellie Violet Lillian Zoe Stella "
    "Aurora Natalie Emilia Everly Leah Aubrey Willow Addison Lucy Audrey Bella Nova Brooklyn "
    "Paisley Savannah Claire Skylar Isla Genesis Naomi Elena Caroline Eliana Anna Maya Valentina "
    "Ruby Kennedy Ivy Ariana Aaliyah Cora Madelyn Alice Kinsley Hailey Gabriella Allison Gianna "
    "Serenity Samantha Sarah Autumn Quinn Eva Piper Sophie Sadie Delilah Josephine Nevaeh "
    "Adeline Arya Emery Lydia Clara Vivian Madeline Peyton Julia Rylee Oliver Elijah James "
    "William Benjamin Lucas Henry Theodore Jack Levi Alexander Jackson Mateo Daniel Michael "
    "Mason Sebastian Ethan Logan Owen Samuel Jacob Asher Aiden John Joseph Wyatt David Leo Luke "
    "Julian Hudson Grayson Matthew Ezra Gabriel Carter Isaac Jayden Luca Anthony Dylan Lincoln "
    "Thomas Maverick Elias Josiah Charles Caleb Christopher Ezekiel Miles Jaxon Isaiah Andrew "
    "Joshua Nathan Nolan Adrian Cameron Santiago Eli Aaron Ryan Angel Cooper Waylon Easton Kai "
    "Christian Landon Colton Roman Axel Brooks Jonathan Robert Jameson Ian Everett Greyson"
).split()
_CITIES = (
    "Berlin Paris Lisbon Madrid Rome Vienna Prague Warsaw Dublin Oslo Stockholm Helsinki "
    "Copenhagen Amsterdam Brussels Zurich Geneva Munich Hamburg Milan Naples Seville Porto Krakow "
    "Budapest Athens Istanbul Cairo Nairobi Lagos Accra Toronto Montreal Vancouver Seattle "
    "Portland Denver Austin Chicago Boston Atlanta Miami Phoenix Tucson Lima Bogota Quito "
    "Santiago Tokyo Osaka Kyoto Seoul Busan Taipei Manila Hanoi Bangkok Jakarta Sydney "
    "Melbourne Auckland Wellington Reykjavik Tallinn Riga Vilnius Ljubljana Zagreb Sofia"
).split()
_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_PETS = "beagle poodle terrier kitten parrot hamster rabbit tortoise corgi husky goldfish".split()
_PET_NAMES = "Pixel Mochi Biscuit Luna Pepper Ziggy Nugget Olive Maple Tofu Bean Rocket".split()
_JOBS = (
    "nurse teacher architect pilot baker carpenter chemist designer engineer florist "
    "journalist lawyer librarian mechanic musician pharmacist photographer plumber surgeon "
    "translator veterinarian welder accountant barista"
).split()
_FOODS = "peanuts shellfish gluten lactose eggs soy sesame strawberries kiwi mustard".split()
_HOBBIES = (
    "pottery chess climbing salsa dancing birdwatching knitting woodworking calligraphy "
    "sailing fencing archery beekeeping origami gardening surfing skiing painting"
).split()
_INSTRUMENTS = "violin cello piano guitar drums flute saxophone trumpet harp ukulele".split()
_SPORTS = "marathon triathlon half-marathon cycling race swim meet chess tournament".split(" ")
_BOOKS = (
    "Dune|Middlemarch|Beloved|Ulysses|Persuasion|Rebecca|Emma|Hamlet|Walden|Dracula|Frankenstein"
).split("|")
_RELATIONS = "sister brother mother father cousin grandmother best friend partner".split(" ")

# (memory template, question template); fields are filled from the lists above.
_TEMPLATES: tuple[tuple[str, str], ...] = (
    (
        "{name} adopted a {pet} named {pet_name} in {month} {year}.",
        "What pet did {name} adopt?",
    ),
    ("{name} works as a {job} in {city}.", "What is {name}'s job?"),
    ("{name} moved to {city} in {month} {year}.", "Where did {name} move to?"),
    ("{name} is allergic to {food}.", "What is {name} allergic to?"),
    ("{name} took up {hobby} with a {relation} in {year}.", "What hobby did {name} take up?"),
    ("{name} has played the {instrument} since {year}.", "What instrument does {name} play?"),
    ("{name} ran a {sport} in {city} in {month} {year}.", "What race did {name} run?"),
    ("{name}'s favourite book is {book}.", "What is {name}'s favourite book?"),
    ("{name} visited a {relation} in {city} in {month} {year}.", "Who did {name} visit?"),
    ("{name} is saving money for a trip to {city}.", "Where does {name} want to travel?"),
)


@dataclass(frozen=True)
class Layout:
    """``scopes`` users with ``per_scope`` memories each (``scopes == 1``: one scope)."""

    scopes: int
    per_scope: int

    @property
    def total(self) -> int:
        return self.scopes * self.per_scope

    @property
    def label(self) -> str:
        if self.scopes == 1:
            return f"{self.per_scope:,} in one scope"
        return f"{self.scopes:,} scopes x {self.per_scope:,}"

    @property
    def key(self) -> str:
        return f"{self.scopes}x{self.per_scope}"

    @classmethod
    def parse(cls, text: str) -> Layout:
        """``"100000"`` (one scope) or ``"10000x100"`` (scopes x memories per scope)."""
        scopes, _, per = text.partition("x")
        return cls(1, int(scopes)) if not per else cls(int(scopes), int(per))


@dataclass(frozen=True)
class Fact:
    """One memory of the corpus and the question it answers."""

    text: str
    question: str


def corpus(n: int) -> list[Fact]:
    """The first ``n`` facts of the deterministic corpus (unique texts)."""
    rng = random.Random(SEED)
    seen: set[str] = set()
    out: list[Fact] = []
    while len(out) < n:
        memory, question = _TEMPLATES[rng.randrange(len(_TEMPLATES))]
        fields = {
            "name": rng.choice(_NAMES),
            "city": rng.choice(_CITIES),
            "month": rng.choice(_MONTHS),
            "year": str(rng.randrange(1995, 2025)),
            "pet": rng.choice(_PETS),
            "pet_name": rng.choice(_PET_NAMES),
            "job": rng.choice(_JOBS),
            "food": rng.choice(_FOODS),
            "hobby": rng.choice(_HOBBIES),
            "instrument": rng.choice(_INSTRUMENTS),
            "sport": rng.choice(_SPORTS),
            "book": rng.choice(_BOOKS),
            "relation": rng.choice(_RELATIONS),
        }
        text = memory.format(**fields)
        if text in seen:  # a longer name list would make this rarer, not impossible
            text = f"{text[:-1]}, {fields['relation']} {rng.choice(_NAMES)} says."
            if text in seen:
                continue
        seen.add(text)
        out.append(Fact(text, question.format(**fields)))
    return out


def pool_size(layout: Layout) -> int:
    """How many distinct facts a layout draws from (all of them for one scope)."""
    return layout.per_scope if layout.scopes == 1 else min(layout.total, POOL_MAX)


def scope_id(index: int) -> str:
    """The ``user_id`` of scope ``index``."""
    return f"user-{index:05d}"


def scope_members(layout: Layout, pool: int, scope: int) -> list[int]:
    """Indices (into the pool) of the memories of ``scope``: a seeded sample per scope."""
    if layout.scopes == 1:
        return list(range(layout.per_scope))
    rng = random.Random(SEED * 31 + scope)
    return rng.sample(range(pool), layout.per_scope)


def fill_batches(layout: Layout, pool: int, batch: int) -> Iterator[tuple[str, list[int]]]:
    """``(user_id, pool indices)`` batches that load the whole layout."""
    for scope in range(layout.scopes):
        members = scope_members(layout, pool, scope)
        for lo in range(0, len(members), batch):
            yield scope_id(scope), members[lo : lo + batch]


def queries(layout: Layout, facts: Sequence[Fact], n: int) -> list[tuple[str, str]]:
    """``n`` (user_id, question) pairs about memories the layout holds."""
    rng = random.Random(SEED + 7)
    out = []
    for _ in range(n):
        scope = rng.randrange(layout.scopes)
        member = rng.choice(scope_members(layout, len(facts), scope))
        out.append((scope_id(scope), facts[member].question))
    return out


def fresh_texts(n: int, tag: str) -> list[str]:
    """``n`` texts no layout holds (for the timed ingest): the corpus beyond the pool."""
    return [f"{f.text[:-1]} ({tag})." for f in corpus(POOL_MAX + n)[POOL_MAX:]]


def phase_texts(
    layout: Layout, pool: int, plan: Plan, tag: str
) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """What the timed phases ask and write: ``plan.queries + 5`` questions about
    ``layout`` (:func:`queries`, facts from a pool of ``pool``), the fresh texts of the
    timed ingest and those of the searches after a write (:func:`fresh_texts`), made in a
    child process.

    Each is drawn from a corpus of ~100k facts. Made in the measured process, the few
    strings kept would keep the corpus's memory: Python's small-object heap frees a 1 MiB
    block only when nothing in it is alive, and the 205 questions of a run kept 26 of the
    28 blocks the 100k-fact corpus had filled (26 MiB, measured as the system's RSS)."""
    args = [layout.key, pool, plan.queries + 5, plan.single + plan.batches * BATCH]
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import peer_data; "
        "print(json.dumps(peer_data._phase_texts(*json.loads(sys.argv[2]))))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(BENCH), json.dumps([*args, plan.queries // 4, tag])],
        capture_output=True,
        text=True,
        check=True,
    )
    asked, new, extra = json.loads(proc.stdout)
    return [(user, question) for user, question in asked], new, extra


def _phase_texts(
    key: str, pool: int, n_asked: int, n_new: int, n_extra: int, tag: str
) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """:func:`phase_texts`'s child."""
    asked = queries(Layout.parse(key), corpus(pool), n_asked)
    return asked, fresh_texts(n_new, tag), fresh_texts(n_extra, f"{tag} after")


def cache_path(n: int, model: str) -> Path:
    """Where the vectors of the first ``n`` facts embedded by ``model`` are cached."""
    return CACHE / f"corpus-v{CORPUS_VERSION}-{model}-{n}.npy"


def load_vectors(n: int, model: str) -> Any:
    """The cached vectors of the first ``n`` facts (any cache at least that large), or
    ``None``."""
    import numpy as np

    if not CACHE.exists():
        return None
    prefix = f"corpus-v{CORPUS_VERSION}-{model}-"
    for path in sorted(CACHE.glob(prefix + "*.npy"), key=lambda p: int(p.stem.split("-")[-1])):
        if int(path.stem.split("-")[-1]) >= n:
            return np.load(path, mmap_mode="r")[:n]
    return None


# -- measurements ----------------------------------------------------------------------------


def tree_rss_mb(pid: int | None = None) -> float:
    """Resident memory of ``pid`` (default: this process) and its descendants, in MiB."""
    pid = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    total_kb, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except OSError:
            pass
    return total_kb / 1024


def peak_rss_mb() -> float:
    """Peak resident memory of this process (ru_maxrss), in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def disk_mb(path: Path) -> float:
    """Bytes allocated under ``path`` (files only), in MiB."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):  # a file removed while walking
                total += os.stat(os.path.join(root, name)).st_blocks * 512
    return total / 2**20


@dataclass
class Timer:
    """Wall and process-CPU milliseconds and major page faults (pages read from disk)
    of each timed call."""

    wall: list[float]
    cpu: list[float]
    major_faults: list[int]

    @classmethod
    def new(cls) -> Timer:
        return cls([], [], [])

    def time(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
        start, cpu = time.perf_counter(), time.process_time()
        out = fn(*args, **kwargs)
        self.wall.append((time.perf_counter() - start) * 1000)
        self.cpu.append((time.process_time() - cpu) * 1000)
        self.major_faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_majflt - faults)
        return out

    def summary(self, prefix: str) -> dict[str, float]:
        return {
            f"{prefix}_p50_ms": percentile(self.wall, 50),
            f"{prefix}_p95_ms": percentile(self.wall, 95),
            f"{prefix}_cpu_p50_ms": percentile(self.cpu, 50),
            f"{prefix}_major_faults": statistics.fmean(self.major_faults or [0]),
            f"{prefix}_n": len(self.wall),
        }


def cold_start(cmd: list[str], env: dict[str, str], runs: int) -> dict[str, Any]:
    """Median wall seconds of ``cmd`` (a new process that prints a search result)."""
    walls, error = [], None
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        walls.append(time.perf_counter() - start)
        if proc.returncode != 0 or '"results"' not in proc.stdout:
            error = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            break
    if error:
        return {"cold_start_error": error}
    return {"cold_start_s": statistics.median(walls), "cold_start_runs": len(walls)}


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, default=_default) + "\n", encoding="utf-8")


def _default(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    return str(value)


def reached(layout: Layout, filled: int) -> Layout:
    """The layout actually loaded when a time cap stopped the fill after ``filled``."""
    if filled >= layout.total:
        return layout
    if layout.scopes == 1:
        return Layout(1, max(1, filled))
    return Layout(max(1, filled // layout.per_scope), layout.per_scope)


# -- the phases every system runs ------------------------------------------------------------


class System(Protocol):
    """What ``run_phases`` drives: one open system under test."""

    def add(self, texts: list[str], user_id: str) -> None:
        """``add(infer=False)`` of one user message per text, in one call."""

    def search(self, query: str, user_id: str) -> Any:
        """A top-10 search of ``user_id``'s memories (query embedding included)."""

    def infer_add(self, exchange: Any, user_id: str) -> dict[str, float]:
        """One ``add(infer=True)`` with the scripted LLM; ``add_cost``'s row."""

    def close(self) -> None:
        """Release the system (and its home's locks)."""


@dataclass(frozen=True)
class Plan:
    """How much of each phase to run."""

    single: int = 200
    batches: int = 10
    queries: int = 200
    infer: int = 30
    time_cap: float = 0.0
    data: Path | None = None


def run_phases(
    system: System,
    layout: Layout,
    facts: list[Fact],
    plan: Plan,
    tag: str,
    fill_vectors: dict[str, Any],
    *,
    prefilled: dict[str, Any] | None = None,
    after_fill: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[dict[str, Any], Layout, tuple[str, str]]:
    """Fill ``layout``, then time ingest, searches and inferred adds; returns the figures,
    the layout reached (a time cap may stop the fill early) and the last query asked.

    ``facts`` (the corpus of ``layout``'s pool; empty with ``prefilled``) and
    ``fill_vectors`` (text -> cached vector, the system's embedder reads it) are emptied
    after the fill and the texts of the timed phases come from :func:`phase_texts`, so
    the RSS measured later is the system's, not the cache's or the corpus's (~30 MiB at
    100k).
    ``prefilled``: the fill figures of a home the system already holds (a saved fill, see
    ``peer.py --filled``); the fill is skipped. ``after_fill`` gets the fill figures once
    the fill is done, before anything is timed (it may save the home)."""
    out: dict[str, Any] = {}
    if prefilled is not None:
        out.update(prefilled)
    else:
        out.update(_fill(system, layout, facts, plan))
        if after_fill is not None:
            after_fill(dict(out))
    eff = reached(layout, out["filled"])
    facts.clear()
    fill_vectors.clear()
    gc.collect()  # unmaps the vector cache once nothing views it
    asked, new, extra = phase_texts(eff, pool_size(layout), plan, tag)

    single = Timer.new()
    for i, text in enumerate(new[: plan.single]):
        single.time(system.add, [text], scope_id(i % eff.scopes))
    batched = Timer.new()
    for b in range(plan.batches):
        chunk = new[plan.single + b * BATCH : plan.single + (b + 1) * BATCH]
        batched.time(system.add, chunk, scope_id(b % eff.scopes))
    out.update(_ingest_figures(single, batched))

    searches = Timer.new()
    for n, (user, question) in enumerate(asked):
        if n < 5:  # warm-up, not timed
            system.search(question, user)
        else:
            searches.time(system.search, question, user)
    out.update(searches.summary("search"))

    # a chat app's steady state: every search follows a write to the same scope
    after_write = Timer.new()
    for text, (user, question) in zip(extra, asked[5:], strict=False):
        system.add([text], user)
        after_write.time(system.search, question, user)
    out.update(after_write.summary("search_after_write"))

    if plan.infer and plan.data is not None and plan.data.exists():
        from add_cost_data import load_exchanges, summarize

        _, exchanges = load_exchanges(plan.data, None)
        rows = [system.infer_add(ex, scope_id(0)) for ex in exchanges[: plan.infer]]
        out.update({f"infer_{k}": v for k, v in summarize(rows).items()})
    out["rss_mb"] = tree_rss_mb()
    out["peak_rss_mb"] = peak_rss_mb()
    return out, eff, asked[-1]


def _fill(system: System, layout: Layout, facts: Sequence[Fact], plan: Plan) -> dict[str, Any]:
    """Load ``layout`` through ``system.add``, 100 messages per call (``plan.time_cap``
    may stop it early); the fill figures."""
    out: dict[str, Any] = {}
    filled, started = 0, time.perf_counter()
    for user, members in fill_batches(layout, len(facts), BATCH):
        if plan.time_cap and time.perf_counter() - started > plan.time_cap:
            out["fill_capped_after_s"] = plan.time_cap
            break
        system.add([facts[i].text for i in members], user)
        filled += len(members)
    out["filled"] = filled
    out["fill_per_s"] = filled / (time.perf_counter() - started)
    return out


def _ingest_figures(single: Timer, batched: Timer) -> dict[str, float]:
    """Memories/s and ms per memory of both ingest modes."""
    one = sum(single.wall) / max(1, len(single.wall))
    many = sum(batched.wall) / max(1, len(batched.wall) * BATCH)
    return {
        "ingest_single_ms": one,
        "ingest_single_per_s": 1000 / one if one else 0.0,
        "ingest_batch_ms": many,
        "ingest_batch_per_s": 1000 / many if many else 0.0,
        "ingest_single_n": len(single.wall),
        "ingest_batch_n": len(batched.wall) * BATCH,
    }


def plan_arguments(parser: Any) -> None:
    """The worker options that make a :class:`Plan` (shared by both workers)."""
    parser.add_argument("--system")
    parser.add_argument("--layout", type=Layout.parse)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--single", type=int, default=200, help="one-memory adds timed")
    parser.add_argument("--batches", type=int, default=10, help="100-message adds timed")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--infer", type=int, default=30, help="infer=True adds timed")
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--time-cap", type=float, default=0, help="seconds for the fill")
    parser.add_argument("--data", type=Path, help="LoCoMo file (the infer=True exchanges)")
    parser.add_argument("--tmp", type=Path, default=None, help="where homes are created")
    parser.add_argument(
        "--filled", type=Path, default=None, help="folder of saved fills (memoweave only)"
    )


def plan_of(args: Any) -> Plan:
    return Plan(args.single, args.batches, args.queries, args.infer, args.time_cap, args.data)
