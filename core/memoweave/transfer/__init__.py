"""Moving memories in and out: memoweave's versioned JSONL export format, and imports
from it and from a mem0 installation (see docs/migrating-from-mem0.md)."""

from memoweave.transfer.export import ExportReport, export_jsonl
from memoweave.transfer.importer import ImportReport, LineError, import_jsonl
from memoweave.transfer.records import FORMAT, VERSION

__all__ = [
    "FORMAT",
    "VERSION",
    "ExportReport",
    "ImportReport",
    "LineError",
    "export_jsonl",
    "import_jsonl",
]
