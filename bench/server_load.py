"""Load on one ``memoweave serve`` process: 16 clients, mixed search/add, for 60 s.

The server runs the embedded stack (Qdrant Edge + ONNX int8 MiniLM) under a temporary
home, with a scripted LLM that answers every extraction after 200 ms (awaited, like an
async SDK), and one API key per client granted its own user. Phases:

1. seed: every client's user gets ``--seed`` memories (``infer=false``);
2. idle: one client, sequential searches over HTTP (the per-request cost of the server);
3. load: ``--clients`` clients for ``--seconds``, each request a search with probability
   ``--search-share``, else an add (``infer=true``: one 200 ms LLM call);
4. in-process: the server stopped, ``AsyncMemory`` opens the same home and runs the same
   sequential searches (what HTTP adds is the difference with phase 2).

Only 127.0.0.1 is used; every loop is bounded in count and time. Prints a table and saves
``bench/results/server_load.json``.

    .venv/bin/python bench/server_load.py                    # 16 clients, 60 s
    .venv/bin/python bench/server_load.py --seconds 10       # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
TOPICS = ["Lisbon", "Berlin", "cello", "sardines", "marathon", "Python", "gardening",
          "jazz", "chess", "sailing", "Kyoto", "pottery", "cycling", "tea", "opera"]  # fmt: skip
TEMPLATES = [
    "I have lived in {t} for three years.",
    "My favourite hobby is {t}.",
    "I started learning {t} last spring.",
    "My sister also loves {t}.",
    "I spend most weekends on {t}.",
    "I wrote a short blog post about {t}.",
]
QUERIES = ["where do I live", "what is my hobby", "what did I start learning",
           "what does my sister like", "weekend plans", "what did I write about"]  # fmt: skip


def _key(i: int) -> str:
    return f"bench-client-{i:02d}-0123456789abcdef"


def _config(home: Path, clients: int) -> Path:
    keys = "".join(
        f"    - {{name: client-{i}, key: {_key(i)}, grant: {{user_id: [user-{i}]}}}}\n"
        for i in range(clients)
    )
    path = home / "bench.yaml"
    path.write_text(f"server:\n  log_format: json\n  keys:\n{keys}", encoding="utf-8")
    return path


# -- the server process -------------------------------------------------------------------


def serve(config: Path, port: int, llm_ms: float) -> None:
    """Run the REST server with the scripted LLM (the ``--serve`` mode of this script)."""
    from memoweave_server.app import create_app
    from memoweave_server.run import serve_asgi
    from memoweave_server.service import MemoryService

    from memoweave.config import MemoryConfig
    from memoweave.testing.doubles import ScriptedLLM

    rng = random.Random(7)

    def extract(messages: Any) -> dict[str, Any]:
        fact = rng.choice(TEMPLATES).format(t=rng.choice(TOPICS))
        return {"memories": [{"text": fact}]}

    llm = ScriptedLLM(default=extract, latency_s=llm_ms / 1000)
    loaded = MemoryConfig.from_yaml(config)
    service = MemoryService.from_config(loaded, llm=llm)
    serve_asgi(create_app(service, loaded.server, close_on_shutdown=True), "127.0.0.1", port)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_server(config: Path, home: Path, port: int, llm_ms: float) -> subprocess.Popen:
    env = {**os.environ, "MEMOWEAVE_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(config), "--port", str(port),
         "--llm-ms", str(llm_ms)],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).close()
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise SystemExit((home / "server.log").read_text()) from None
            time.sleep(0.25)


# -- clients ------------------------------------------------------------------------------


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _seed(base: str, clients: int, per_user: int) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        for i in range(clients):
            for j in range(per_user):
                text = TEMPLATES[j % len(TEMPLATES)].format(t=TOPICS[(i + j) % len(TOPICS)])
                body = {"messages": text, "user_id": f"user-{i}", "infer": False}
                response = await http.post("/memories", json=body, headers={"X-API-Key": _key(i)})
                response.raise_for_status()


def _sequential_http(port: int, count: int) -> list[float]:
    """One keep-alive connection (stdlib ``http.client``, the lightest client), one search
    at a time: what a request costs on top of the search itself."""
    times: list[float] = []
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"X-API-Key": _key(0), "Content-Type": "application/json"}
    try:
        for n in range(count):
            body = {"query": QUERIES[n % len(QUERIES)], "user_id": "user-0", "top_k": 10}
            start = time.perf_counter()
            connection.request("POST", "/search", body=json.dumps(body), headers=headers)
            response = connection.getresponse()
            payload = response.read()
            times.append((time.perf_counter() - start) * 1000)
            if response.status != 200:
                raise SystemExit(f"search failed: {response.status} {payload[:200]!r}")
    finally:
        connection.close()
    return times


async def _load(base: str, clients: int, seconds: float, search_share: float) -> dict[str, Any]:
    import httpx

    latencies: dict[str, list[float]] = {"search": [], "add": []}
    errors: dict[str, int] = {}
    stop_at = time.monotonic() + seconds

    async def client(i: int) -> None:
        rng = random.Random(i)
        headers = {"X-API-Key": _key(i)}
        async with httpx.AsyncClient(base_url=base, timeout=60, headers=headers) as http:
            while time.monotonic() < stop_at:
                if rng.random() < search_share:
                    route = "search"
                    body: dict[str, Any] = {"query": rng.choice(QUERIES), "user_id": f"user-{i}"}
                    call = http.post("/search", json=body)
                else:
                    route = "add"
                    text = rng.choice(TEMPLATES).format(t=rng.choice(TOPICS))
                    body = {"messages": [{"role": "user", "content": text}], "user_id": f"user-{i}"}
                    call = http.post("/memories", json=body)
                start = time.perf_counter()
                try:
                    response = await call
                    ok = response.status_code == 200
                    label = str(response.status_code)
                except httpx.HTTPError as exc:
                    ok, label = False, type(exc).__name__
                latencies[route].append((time.perf_counter() - start) * 1000)
                if not ok:
                    errors[f"{route} {label}"] = errors.get(f"{route} {label}", 0) + 1

    started = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    elapsed = time.perf_counter() - started
    return {"latencies": latencies, "errors": errors, "elapsed_s": elapsed}


async def _in_process(home: Path, count: int) -> list[float]:
    from memoweave.memory import AsyncMemory

    times: list[float] = []
    async with AsyncMemory(None) as memory:
        for n in range(count):
            start = time.perf_counter()
            await memory.search(QUERIES[n % len(QUERIES)], user_id="user-0", top_k=10)
            times.append((time.perf_counter() - start) * 1000)
    return times


# -- report -------------------------------------------------------------------------------


def _row(name: str, values: list[float], seconds: float | None = None) -> str:
    rate = f"{len(values) / seconds:8.1f}" if seconds else "       -"
    return (f"| {name:<32} | {len(values):>6} | {rate} | {_pct(values, 0.5):8.2f} | "
            f"{_pct(values, 0.95):8.2f} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--search-share", type=float, default=0.75)
    parser.add_argument("--llm-ms", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=50, help="memories per user before load")
    parser.add_argument("--sequential", type=int, default=200, help="idle searches")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, args.llm_ms)
        return

    with tempfile.TemporaryDirectory(prefix="memoweave-server-load-") as scratch:
        home = Path(scratch)
        config = _config(home, args.clients)
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        server = _start_server(config, home, port, args.llm_ms)
        try:
            asyncio.run(_seed(base, args.clients, args.seed))
            idle = _sequential_http(port, args.sequential)
            load = asyncio.run(_load(base, args.clients, args.seconds, args.search_share))
        finally:
            server.terminate()
            server.wait(timeout=60)
        os.environ["MEMOWEAVE_HOME"] = str(home)
        inproc = asyncio.run(_in_process(home, args.sequential))

    lat = load["latencies"]
    total = sum(len(v) for v in lat.values())
    load_avg = os.getloadavg()
    print(f"\n{args.clients} clients, {args.seconds:.0f} s, {args.search_share:.0%} search, "
          f"scripted LLM {args.llm_ms:.0f} ms, embedded stack (Qdrant Edge + ONNX), "
          f"{args.seed} memories per user; load average {load_avg[0]:.1f}\n")  # fmt: skip
    print("| phase / route                    |   reqs |    req/s |  p50 ms |  p95 ms |")
    print("|---|---:|---:|---:|---:|")
    print(_row("load: search", lat["search"], load["elapsed_s"]))
    print(_row("load: add (LLM 200 ms)", lat["add"], load["elapsed_s"]))
    print(_row("load: all", lat["search"] + lat["add"], load["elapsed_s"]))
    print(_row("idle: HTTP search (1 client)", idle))
    print(_row("in-process AsyncMemory search", inproc))
    gap = _pct(idle, 0.5) - _pct(inproc, 0.5)
    print(f"\nerrors: {sum(load['errors'].values())} {load['errors'] or ''}")
    print(f"search p50 over HTTP - in process: {gap:+.2f} ms (target: within 5 ms)")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "server_load.json"
    out.write_text(json.dumps({
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "load_average": load_avg,
        "throughput_rps": total / load["elapsed_s"],
        "errors": load["errors"],
        "routes": {r: {"count": len(v), "p50_ms": _pct(v, 0.5), "p95_ms": _pct(v, 0.95)}
                   for r, v in lat.items()},
        "idle_http_search": {"p50_ms": _pct(idle, 0.5), "p95_ms": _pct(idle, 0.95)},
        "in_process_search": {"p50_ms": _pct(inproc, 0.5), "p95_ms": _pct(inproc, 0.95),
                              "mean_ms": statistics.fmean(inproc)},
        "http_minus_in_process_p50_ms": gap,
    }, indent=2))  # fmt: skip
    print(f"saved {out}")


if __name__ == "__main__":
    main()
