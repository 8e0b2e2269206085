"""Tokenizer and recursive-descent parser for Upstash Vector's metadata filter language.

Grammar (keywords, operators and boolean literals are case-insensitive)::

    filter     := or_expr EOF
    or_expr    := and_expr ("OR" and_expr)*            # AND binds tighter than OR
    and_expr   := primary ("AND" primary)*
    primary    := "(" or_expr ")"
                | "HAS" ["NOT"] "FIELD" identifier
                | identifier comparison
    comparison := ("=" | "!=" | "<" | "<=" | ">" | ">=") literal
                | ["NOT"] "GLOB" string
                | ["NOT"] "IN" "(" literal ("," literal)* ")"
                | ["NOT"] "CONTAINS" literal
    literal    := string | number | "true" | "false"
    identifier := [a-zA-Z_][a-zA-Z_0-9.[\\]#-]*        # a.b, a[0], a[#-1]

Strings are single- or double-quoted; a backslash escapes the next character (so ``\\'``,
``\\"`` and ``\\\\`` stand for a quote and a backslash). Numbers are JSON-like decimals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

PathSegment = Union[str, int, tuple[str, int]]
"""A key, a zero-based index, or ``("#", k)`` meaning index ``len - k`` from the back."""
Literal = Union[str, int, float, bool]

KEYWORDS = frozenset({"AND", "OR", "NOT", "IN", "GLOB", "CONTAINS", "HAS", "FIELD"})
COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")


class FilterSyntaxError(ValueError):
    """The filter string is not valid; the message names the position."""


@dataclass(frozen=True)
class Path:
    """A metadata field path (``a.b[0]``)."""

    text: str
    segments: tuple[PathSegment, ...]


@dataclass(frozen=True)
class Compare:
    """``path <op> value``; ``value`` is a tuple for ``IN`` / ``NOT IN``."""

    path: Path
    op: str
    value: Literal | tuple[Literal, ...]


@dataclass(frozen=True)
class HasField:
    """``HAS FIELD path`` (or ``HAS NOT FIELD`` when ``negated``)."""

    path: Path
    negated: bool


@dataclass(frozen=True)
class BoolOp:
    """``AND`` / ``OR`` of two or more children."""

    op: str
    children: tuple[Expr, ...]


Expr = Union[Compare, HasField, BoolOp]


@dataclass(frozen=True)
class Token:
    kind: str  # IDENT KEYWORD BOOL STRING NUMBER OP LPAREN RPAREN COMMA EOF
    text: str
    value: object
    pos: int


_IDENT = re.compile(r"[a-zA-Z_][a-zA-Z_0-9.\[\]#-]*")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SEGMENT = re.compile(r"\.?([a-zA-Z_][a-zA-Z_0-9]*)|\[(\d+)\]|\[#-(\d+)\]")


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens; raises :class:`FilterSyntaxError` on a stray character."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "'\"":
            value, end = _read_string(text, i)
            tokens.append(Token("STRING", text[i:end], value, i))
            i = end
        elif ch in "()," or ch in "=<>!":
            i = _read_punct(text, i, tokens)
        elif ch.isdigit() or (ch in "-+." and i + 1 < n and (text[i + 1].isdigit() or ch != ".")):
            match = _NUMBER.match(text, i)
            if not match:
                raise FilterSyntaxError(f"invalid number at position {i}")
            raw = match.group()
            is_int = not any(c in raw for c in ".eE")
            tokens.append(Token("NUMBER", raw, int(raw) if is_int else float(raw), i))
            i = match.end()
        else:
            match = _IDENT.match(text, i)
            if not match:
                raise FilterSyntaxError(f"unexpected character {ch!r} at position {i}")
            word = match.group()
            upper = word.upper()
            if upper in KEYWORDS:
                tokens.append(Token("KEYWORD", word, upper, i))
            elif upper in ("TRUE", "FALSE"):
                tokens.append(Token("BOOL", word, upper == "TRUE", i))
            else:
                tokens.append(Token("IDENT", word, _parse_path(word, i), i))
            i = match.end()
    tokens.append(Token("EOF", "", None, n))
    return tokens


def _read_string(text: str, start: int) -> tuple[str, int]:
    quote, out, i = text[start], [], start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if i + 1 >= len(text):
                break
            out.append(text[i + 1])
            i += 2
        elif ch == quote:
            return "".join(out), i + 1
        else:
            out.append(ch)
            i += 1
    raise FilterSyntaxError(f"unterminated string literal starting at position {start}")


def _read_punct(text: str, i: int, tokens: list[Token]) -> int:
    ch = text[i]
    if ch in "(),":
        kind = {"(": "LPAREN", ")": "RPAREN", ",": "COMMA"}[ch]
        tokens.append(Token(kind, ch, ch, i))
        return i + 1
    two = text[i : i + 2]
    if two in ("!=", "<=", ">="):
        tokens.append(Token("OP", two, two, i))
        return i + 2
    if ch == "!":
        raise FilterSyntaxError(f"unexpected character '!' at position {i}")
    tokens.append(Token("OP", ch, ch, i))
    return i + 1


def _parse_path(word: str, pos: int) -> Path:
    segments: list[PathSegment] = []
    i = 0
    while i < len(word):
        match = _SEGMENT.match(word, i)
        if not match or (i == 0 and not match.group(1)) or (i > 0 and word[i] not in ".["):
            raise FilterSyntaxError(f"invalid identifier {word!r} at position {pos}")
        key, index, back = match.groups()
        if key is not None:
            segments.append(key)
        elif index is not None:
            segments.append(int(index))
        else:
            segments.append(("#", int(back)))
        i = match.end()
    return Path(word, tuple(segments))


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self, offset: int = 0) -> Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def is_keyword(self, word: str, offset: int = 0) -> bool:
        tok = self.peek(offset)
        return tok.kind == "KEYWORD" and tok.value == word

    def expect(self, kind: str, value: object = None) -> Token:
        tok = self.take()
        if tok.kind != kind or (value is not None and tok.value != value):
            wanted = value if value is not None else kind.lower()
            got = tok.text or "end of filter"
            raise FilterSyntaxError(f"expected {wanted} at position {tok.pos}, got {got!r}")
        return tok

    def parse(self) -> Expr:
        expr = self.or_expr()
        self.expect("EOF")
        return expr

    def or_expr(self) -> Expr:
        children = [self.and_expr()]
        while self.is_keyword("OR"):
            self.take()
            children.append(self.and_expr())
        return children[0] if len(children) == 1 else BoolOp("OR", tuple(children))

    def and_expr(self) -> Expr:
        children = [self.primary()]
        while self.is_keyword("AND"):
            self.take()
            children.append(self.primary())
        return children[0] if len(children) == 1 else BoolOp("AND", tuple(children))

    def primary(self) -> Expr:
        tok = self.peek()
        if tok.kind == "LPAREN":
            self.take()
            expr = self.or_expr()
            self.expect("RPAREN")
            return expr
        if self.is_keyword("HAS"):
            self.take()
            negated = self.is_keyword("NOT")
            if negated:
                self.take()
            self.expect("KEYWORD", "FIELD")
            return HasField(self.expect("IDENT").value, negated)  # type: ignore[arg-type]  # an IDENT token holds a path
        path: Path = self.expect("IDENT").value  # type: ignore[assignment]  # an IDENT token holds a path
        return self.comparison(path)

    def comparison(self, path: Path) -> Expr:
        tok = self.take()
        if tok.kind == "OP":
            return Compare(path, tok.text, self.literal())
        negated = tok.kind == "KEYWORD" and tok.value == "NOT"
        if negated:
            tok = self.take()
        prefix = "NOT " if negated else ""
        if tok.kind == "KEYWORD" and tok.value == "GLOB":
            pattern = self.expect("STRING").value
            return Compare(path, prefix + "GLOB", pattern)  # type: ignore[arg-type]  # a GLOB pattern is a str
        if tok.kind == "KEYWORD" and tok.value == "CONTAINS":
            return Compare(path, prefix + "CONTAINS", self.literal())
        if tok.kind == "KEYWORD" and tok.value == "IN":
            self.expect("LPAREN")
            values = [self.literal()]
            while self.peek().kind == "COMMA":
                self.take()
                values.append(self.literal())
            self.expect("RPAREN")
            return Compare(path, prefix + "IN", tuple(values))
        got = tok.text or "end of filter"
        raise FilterSyntaxError(
            f"expected an operator after {path.text!r} at position {tok.pos}, got {got!r}"
        )

    def literal(self) -> Literal:
        tok = self.take()
        if tok.kind in ("STRING", "NUMBER", "BOOL"):
            return tok.value  # type: ignore[return-value]  # a literal token holds a value
        got = tok.text or "end of filter"
        raise FilterSyntaxError(f"expected a literal at position {tok.pos}, got {got!r}")


def parse(text: str) -> Expr | None:
    """Parse a filter string; an empty or blank string means no filter (``None``)."""
    if not text or not text.strip():
        return None
    return _Parser(tokenize(text)).parse()


__all__ = [
    "BoolOp",
    "Compare",
    "Expr",
    "FilterSyntaxError",
    "HasField",
    "Path",
    "parse",
    "tokenize",
]
