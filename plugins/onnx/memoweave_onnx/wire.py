"""Reading the ONNX protobuf wire format (the ``onnx`` package is not a dependency): the
fields of a message, and a graph's inputs and output widths (:func:`graph_io`), which the
embedder needs before its onnxruntime session exists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LEN = 2  # wire type of length-delimited fields
GRAPH = 7  # ModelProto.graph
INITIALIZER = 5  # GraphProto.initializer
_G_INPUT, _G_OUTPUT = 11, 12  # GraphProto.input / .output (ValueInfoProto)
_V_NAME, _V_TYPE = 1, 2  # ValueInfoProto
_TYPE_TENSOR, _TENSOR_SHAPE, _SHAPE_DIM, _DIM_VALUE = 1, 2, 1, 1  # TypeProto ... Dimension
_T_NAME = 8  # TensorProto.name


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``buf[pos]`` and the position after it."""
    value, shift = 0, 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(buf: bytes, start: int = 0, end: int | None = None) -> list[tuple[int, int, Any, int]]:
    """``(number, wire_type, value, end)`` of each field in ``buf[start:end]`` (``end``: where
    the field's bytes end); a length-delimited value is its payload's ``(start, end)``."""
    end = len(buf) if end is None else end
    out: list[tuple[int, int, Any, int]] = []
    pos = start
    while pos < end:
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == LEN:
            size, pos = varint(buf, pos)
            value, pos = (pos, pos + size), pos + size
        elif wire in (1, 5):
            value, pos = None, pos + (8 if wire == 1 else 4)
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > end:
            raise ValueError("truncated message")
        out.append((number, wire, value, pos))
    return out


@dataclass(frozen=True)
class GraphIO:
    """What onnxruntime's ``get_inputs()`` / ``get_outputs()`` report, read from the bytes."""

    inputs: tuple[str, ...]
    """The graph's input names that are not initializers, in order."""
    output_width: int | None
    """The last dimension of the first output, ``None`` when it is symbolic or unknown."""


def graph_io(model: bytes) -> GraphIO | None:
    """The inputs and the first output's width of ``model``, or ``None`` when it cannot be
    parsed or has no output (the caller then asks the session)."""
    try:
        graphs = [v for n, w, v, _ in fields(model) if n == GRAPH and w == LEN]
        if len(graphs) != 1:
            return None
        graph = fields(model, *graphs[0])
        constants = {_name(model, v, _T_NAME) for n, w, v, _ in graph if n == INITIALIZER}
        inputs = [_name(model, v, _V_NAME) for n, w, v, _ in graph if n == _G_INPUT and w == LEN]
        outputs = [v for n, w, v, _ in graph if n == _G_OUTPUT and w == LEN]
        if not outputs:
            return None
        return GraphIO(tuple(i for i in inputs if i not in constants), _width(model, outputs[0]))
    except (ValueError, IndexError, UnicodeDecodeError):
        return None


def _child(buf: bytes, span: tuple[int, int], number: int) -> tuple[int, int] | None:
    """The payload span of the first length-delimited field ``number`` of a message."""
    return next((v for n, w, v, _ in fields(buf, *span) if n == number and w == LEN), None)


def _name(buf: bytes, span: tuple[int, int], number: int) -> str:
    found = _child(buf, span, number)
    return "" if found is None else buf[found[0] : found[1]].decode()


def _width(buf: bytes, value_info: tuple[int, int]) -> int | None:
    """The last dimension of a tensor-typed ValueInfoProto, if it is a number."""
    span = value_info
    for number in (_V_TYPE, _TYPE_TENSOR, _TENSOR_SHAPE):
        found = _child(buf, span, number)
        if found is None:
            return None
        span = found
    dims = [v for n, w, v, _ in fields(buf, *span) if n == _SHAPE_DIM and w == LEN]
    if not dims:
        return None
    value = [v for n, w, v, _ in fields(buf, *dims[-1]) if n == _DIM_VALUE and w == 0]
    return value[0] if value else None
