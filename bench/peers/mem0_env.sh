#!/usr/bin/env bash
# Make sure bench/.venv-mem0 exists with mem0ai 2.2.1, then print its python.
# mem0 lives in its own venv (its pins conflict with ours); a .pth file lends it the main
# venv's torch and sentence-transformers, after its own packages. No network at run time.
set -euo pipefail
bench="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$bench/.." && pwd)"
venv="$bench/.venv-mem0"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import mem0" 2>/dev/null; then
    python3 -m venv "$venv" >&2
    site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    main_site="$("$root/.venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    echo "$main_site" > "$site/zz_main_venv.pth"
    "$venv/bin/pip" install -q -c "$root/constraints.txt" mem0ai==2.2.1 >&2
fi
echo "$venv/bin/python"
