"""memoweave-onnx: the ``onnx`` embedder (all-MiniLM-L6-v2 int8 on onnxruntime, no torch).

Importing this package imports neither onnxruntime nor numpy; the provider does when it
is created (see :mod:`.plugin`).
"""

from __future__ import annotations

__version__ = "0.1.0"
