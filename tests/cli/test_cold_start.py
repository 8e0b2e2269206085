"""What a new ``memoweave search`` process loads: the sync read path only.

Each test runs the real command line in a new interpreter on the embedded default stack
(Qdrant Edge + the onnx embedder under a temporary ``MEMOWEAVE_HOME``), then reports the
modules it imported. A cold start pays for every module it imports, so the ones a search
never uses must stay out: asyncio and the async API, the HTTP client of ``--server``,
PyYAML without a config file, the write path, the transfer, server and demo code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memoweave.plugins import load_registry

NOT_LOADED_BY_SEARCH = (
    "asyncio",
    "concurrent.futures",
    "yaml",
    "urllib.request",
    "difflib",
    "email.parser",  # package versions come from METADATA's header block, not a full parse
    "memoweave.memory.async_api",
    "memoweave.runtime.batching",
    "memoweave.remote",
    "memoweave.transfer",
    "memoweave.demo",
    "memoweave.cli.write_cmds",
    "memoweave.memory.actions",  # the write path: imported by the first write
    "memoweave.memory.add_context",
    "memoweave.memory.messages",
    "memoweave.memory.strategies",
    "memoweave.memory.write_plan",
    "memoweave.memory.writer",
    "memoweave_server.app",
    "memoweave_server.commands",
    "memoweave_mcp.commands",
    "memoweave_mcp.tools",
)

_RUN_CLI = """
import json, os, sys
from memoweave.cli.main import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    sys.stdout.flush()
    print(json.dumps({"modules": sorted(sys.modules),
                      "openblas": os.environ.get("OPENBLAS_NUM_THREADS")}), file=sys.stderr)
"""


def _default_stack_installed() -> bool:
    registry = load_registry()
    return {"qdrant", "onnx"} <= {
        info.name for kind in ("vector_store", "embedder") for info in registry.list(kind)
    }


pytestmark = pytest.mark.skipif(
    not _default_stack_installed(), reason="the default stack (qdrant, onnx) is not installed"
)


def _cli(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[str, dict]:
    """Run ``memoweave <args>`` in a new interpreter; its output and what it loaded."""
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    environ.update({"MEMOWEAVE_HOME": str(home), "HF_HUB_OFFLINE": "1", **(env or {})})
    done = subprocess.run(
        [sys.executable, "-c", _RUN_CLI, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environ,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cold") / "home"
    _cli(path, "add", "Maya plays the cello", "--user-id", "maya", "--no-infer")
    return path


def test_a_search_loads_only_the_sync_read_path(home: Path) -> None:
    out, report = _cli(home, "search", "What does Maya play?", "--user-id", "maya", "--json")
    assert json.loads(out)["results"][0]["memory"] == "Maya plays the cello"
    loaded = set(report["modules"])
    assert {"memoweave.memory.api", "memoweave_qdrant.store", "memoweave_onnx.embedder"} <= loaded
    assert sorted(loaded & set(NOT_LOADED_BY_SEARCH)) == []
    assert not [m for m in loaded if m.startswith(("memoweave.transfer.", "memoweave.demo."))]


def test_the_check_sees_a_lazily_imported_module(home: Path, tmp_path: Path) -> None:
    """A config file does bring PyYAML in (the report is not blind to lazy imports)."""
    config = tmp_path / "memoweave.yaml"
    config.write_text("retrieval: {}\n", encoding="utf-8")
    out, report = _cli(home, "search", "cello", "--user-id", "maya", "--config", str(config))
    assert "Maya plays the cello" in out
    assert "yaml" in report["modules"]


def test_the_command_line_runs_openblas_on_one_thread_unless_told(home: Path) -> None:
    _, report = _cli(home, "search", "cello", "--user-id", "maya", "--json")
    assert report["openblas"] == "1"
    _, report = _cli(
        home, "search", "cello", "--user-id", "maya", "--json", env={"OPENBLAS_NUM_THREADS": "2"}
    )
    assert report["openblas"] == "2"


def test_the_async_api_still_imports_from_the_package() -> None:
    code = (
        "import sys, memoweave; from memoweave import AsyncMemory, Memory; "
        "from memoweave.memory import AsyncMemory as Again; "
        "assert AsyncMemory is Again and AsyncMemory.__name__ == 'AsyncMemory'; "
        "print('memoweave.memory.async_api' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
    missing = subprocess.run(
        [sys.executable, "-c", "import memoweave; memoweave.NoSuchThing"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "has no attribute 'NoSuchThing'" in missing.stderr


_CONSOLE_SCRIPT = """
import atexit, sys, threading, time
class Teardown:
    def __del__(self):
        print("interpreter teardown ran", file=sys.stderr)
kept = Teardown()  # freed only by the interpreter's teardown
atexit.register(lambda: print("atexit ran", file=sys.stderr))
import memoweave.cli.main as cli
if sys.argv[1] == "--thread":  # a thread still working when the command has finished
    sys.argv.pop(1)
    finished, command = threading.Event(), cli.main
    def main_then_signal():
        try:
            command()
        finally:
            finished.set()
    cli.main = main_then_signal
    def late():
        finished.wait()
        time.sleep(1.0)
        print("thread finished", file=sys.stderr)
    threading.Thread(target=late).start()
cli.run()
"""


def _console(
    home: Path, *args: str, script: str = _CONSOLE_SCRIPT
) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "MEMOWEAVE_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environ,
    )


def test_the_console_script_skips_the_teardown_not_the_output(home: Path) -> None:
    done = _console(home, "search", "cello", "--user-id", "maya", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["memory"] == "Maya plays the cello"
    assert "atexit ran" in done.stderr
    assert "interpreter teardown ran" not in done.stderr
    failed = _console(home, "search", "cello", "--json")  # no scope: a usage error
    assert failed.returncode == 2
    assert "error[validation_error]" in failed.stderr and "atexit ran" in failed.stderr


def test_the_console_script_exits_normally_while_a_thread_runs(home: Path) -> None:
    """The thread's work is not cut short (os._exit would end it mid-sleep)."""
    done = _console(home, "--thread", "search", "cello", "--user-id", "maya", "--json")
    assert done.returncode == 0 and "Maya plays the cello" in done.stdout, done.stderr
    assert "thread finished" in done.stderr, done.stderr
    assert "interpreter teardown ran" in done.stderr


def test_only_a_builtin_command_skips_the_teardown(home: Path) -> None:
    """A plugin's command (or no command) exits the usual way: its buffers and
    finalisers are not memoweave's to skip."""
    from memoweave.cli.main import _builtin_command

    assert _builtin_command(["search", "x", "--user-id", "u"])
    assert _builtin_command(["add", "--help"])
    assert not _builtin_command(["serve", "--port", "8000"])  # a plugin's command
    assert not _builtin_command(["--version"])
    assert not _builtin_command([])
    done = _console(home, "--version")
    assert done.returncode == 0 and "version" in done.stdout, done.stderr
    assert "interpreter teardown ran" in done.stderr


def test_the_console_script_is_run() -> None:
    from importlib.metadata import entry_points

    (script,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "memoweave"]
    assert script.value == "memoweave.cli.main:run"


_BUILT_AT_REGISTRATION = """
import json
from memoweave.plugins import load_registry
registry = load_registry()
plugins = registry.list()  # the built-in providers too
def built():
    return sorted(f"{i.kind}:{i.name}" for i in plugins if i.config_model.__pydantic_complete__)
before = built()
registry.validate_config("vector_store", "qdrant", {})
print(json.dumps({"plugins": len(plugins), "before": before, "after": built()}))
"""


def test_registering_the_plugins_builds_none_of_their_config_models() -> None:
    """Config models are built on first validation (``defer_build``), so a process pays
    only for the providers it configures."""
    done = subprocess.run(
        [sys.executable, "-c", _BUILT_AT_REGISTRATION], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["plugins"] >= 4 and report["before"] == []
    assert report["after"] == ["vector_store:qdrant"]


_CORE_MODELS = """
import json
import memoweave
from memoweave.config.base import ConfigModel
def built():
    seen, stack = [], list(ConfigModel.__subclasses__())
    while stack:
        model = stack.pop()
        stack.extend(model.__subclasses__())
        if model.__pydantic_complete__:
            seen.append(model.__name__)
    return sorted(seen)
at_import = built()
from memoweave.config import MemoryConfig
MemoryConfig()
print(json.dumps({"at_import": at_import, "after": built()}))
"""


def test_importing_memoweave_builds_no_config_model() -> None:
    """The core's config models are built on first validation too (``defer_build``): an
    import builds none, the default configuration builds the ones it validates."""
    done = subprocess.run(
        [sys.executable, "-c", _CORE_MODELS], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["at_import"] == []
    assert {"MemoryConfig", "RetrievalConfig", "ServerConfig"} <= set(report["after"])


_REPORTS_CLOSES = """
import sys
import memoweave_qdrant.edge_shard as edge
close = edge.LoadedShard.close
def reported(self):
    if self._shard is not None:
        print("shard closed, changed" if self.unflushed else "shard closed", file=sys.stderr)
    close(self)
edge.LoadedShard.close = reported
"""


_REPORTS_EXIT_HINT = """
import sys
import memoweave_qdrant.edge_engine as edge
hint = edge.EdgeEngine.expect_exit
def reported(self):
    print("told the process exits", file=sys.stderr)
    hint(self)
edge.EdgeEngine.expect_exit = reported
"""


def test_the_console_script_tells_the_store_the_process_exits(home: Path) -> None:
    """Before its command the console script tells the vector store that the process ends
    after it (``VectorStore.expect_exit``); the command line run as a library call (``main``)
    does not, and both find the same memories."""
    hinted = _console(
        home,
        "search",
        "cello",
        "--user-id",
        "maya",
        "--json",
        script=_REPORTS_EXIT_HINT + _CONSOLE_SCRIPT,
    )
    assert hinted.returncode == 0, hinted.stderr
    assert "told the process exits" in hinted.stderr
    plain = _console(
        home, "search", "cello", "--user-id", "maya", "--json", script=_REPORTS_EXIT_HINT + _RUN_CLI
    )
    assert plain.returncode == 0, plain.stderr
    assert "told the process exits" not in plain.stderr
    assert json.loads(hinted.stdout)["results"] == json.loads(plain.stdout)["results"]


def test_the_console_script_leaves_an_unwritten_shard_to_the_exit(home: Path) -> None:
    """A search's store is not closed (Qdrant Edge's close syncs every mapped file): the
    exit releases it, the next process finds everything; a write's store is closed
    (flushed) before the exit as ever."""
    script = _REPORTS_CLOSES + _CONSOLE_SCRIPT

    def console(*args: str) -> subprocess.CompletedProcess[str]:
        return _console(home, *args, script=script)

    added = console("add", "Maya moved to Lisbon", "--user-id", "maya", "--no-infer")
    assert added.returncode == 0, added.stderr
    assert "shard closed, changed" in added.stderr
    for _ in range(2):  # the second one opens what the first left to its exit
        done = console("search", "Where did Maya move?", "--user-id", "maya", "--json")
        assert done.returncode == 0, done.stderr
        assert "shard closed" not in done.stderr
        assert "interpreter teardown ran" not in done.stderr
        assert json.loads(done.stdout)["results"][0]["memory"] == "Maya moved to Lisbon"
