"""An offline Upstash Vector emulator: a local REST server speaking the service's protocol.

It lets the plugin's tests (and your application's) run the real ``upstash-vector`` SDK
without network access. Only the standard library is used.
"""

from memoweave_upstash.emulator.filter_eval import glob_match, matches
from memoweave_upstash.emulator.filter_parser import FilterSyntaxError, parse
from memoweave_upstash.emulator.server import UpstashEmulator
from memoweave_upstash.emulator.store import EmulatedIndex, ServiceError

__all__ = [
    "EmulatedIndex",
    "FilterSyntaxError",
    "ServiceError",
    "UpstashEmulator",
    "glob_match",
    "matches",
    "parse",
]
