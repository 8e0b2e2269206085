"""The core's side indexes at scale: BM25 + entity signal of one search, warm and right
after a write, with N memories in one scope (the peer corpus, no model, no store).

One search = ``KeywordIndex.scores`` (top 50), the BM25 of two other candidates
(``score_of``, as the retriever asks for the dense hits) and ``EntityIndex.match`` of the
hits. Phases: warm; right after a write of this connection (applied to the caches in
place); right after a write of another connection to the same scope (the cache is read
again) and to another scope (it is not).

    nice .venv/bin/python bench/index_scale.py --sizes 10000,100000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_data import corpus, load_average

from memoweave.index.entities import extract_entities
from memoweave.index.entity_index import EntityIndex
from memoweave.index.keyword_index import KeywordDoc, KeywordIndex
from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope

USER = Scope.of(user_id="u", operation="bench")


class Side:
    """One connection to the history file and its two indexes."""

    def __init__(self, path: Path) -> None:
        self.history = HistoryStore(path)
        self.keyword, self.entities = KeywordIndex(self.history), EntityIndex(self.history)

    def write(self, docs: list[KeywordDoc]) -> None:
        with self.history.transaction() as conn:
            self.keyword.upsert(conn, docs)
            self.entities.upsert(conn, docs)

    def search(self, query: str) -> None:
        scored = self.keyword.scores(query, USER, statuses=["active"], limit=50)
        ids = [i for i, _ in scored.hits]
        scored.score_of([*ids, "m1", "m2"])
        self.entities.match(extract_entities(query), USER, ids, ["active"])


def p50(runs: list[tuple[float, float]]) -> str:
    """``wall (cpu)`` medians in ms."""
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    return f"{wall:.1f} ({cpu:.1f})"


def timed(fn: Callable[[], None]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return 1000 * (time.perf_counter() - wall), 1000 * (time.process_time() - cpu)


def measure(n: int, queries: int) -> dict[str, str]:
    """Every phase at ``n`` memories in one scope."""
    facts = corpus(n + 3 * queries)
    home = Path(tempfile.mkdtemp(prefix="index-scale-"))
    side, other = Side(home / "history.db"), Side(home / "history.db")
    docs = [KeywordDoc(f"m{i}", f.text, "u", None, None, "active") for i, f in enumerate(facts)]
    for lo in range(0, n, 1000):
        side.write(docs[lo : min(lo + 1000, n)])
    asked = [f.question for f in facts[:queries]]
    extra = iter(docs[n:])
    for q in asked[:5]:
        side.search(q)
    out = {"warm": p50([timed(lambda q=q: side.search(q)) for q in asked])}
    phases: dict[str, Callable[[KeywordDoc], None]] = {
        "after this connection's write": lambda d: side.write([d]),
        "after another connection's write, same scope": lambda d: other.write([d]),
        "after another connection's write, other scope": lambda d: other.write(
            [KeywordDoc(d.memory_id, d.text, "someone-else", None, None, "active")]
        ),
    }
    for name, write in phases.items():
        runs = []
        for q in asked:
            write(next(extra))
            runs.append(timed(lambda q=q: side.search(q)))
        out[name] = p50(runs)
    side.history.close()
    other.history.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma list of scope sizes")
    parser.add_argument("--queries", type=int, default=100, help="searches per phase")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    start = load_average()
    results = {n: measure(n, args.queries) for n in sizes}
    print("| one search, p50 ms wall (CPU) | " + " | ".join(f"{n:,}" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for phase in results[sizes[0]]:
        print(f"| {phase} | " + " | ".join(results[n][phase] for n in sizes) + " |")
    print(f"\nload average at start {start}, at end {load_average()}")


if __name__ == "__main__":
    main()
