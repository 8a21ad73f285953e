"""What a PromQL expression reads: its metric selectors and the labels it groups by.

A small tokenizer, not a parser: Prometheus itself parses every expression in the live
check (``/api/v1/format_query`` first, so the text scanned here is in Prometheus's own
canonical form). Identifiers followed by ``(`` (or an aggregation's ``by``/``without``)
are functions and aggregations; the label lists of ``by``, ``without``, ``on``,
``ignoring``, ``group_left`` and ``group_right`` are labels; the other identifiers,
keywords aside, are metric names, each with the matchers of the braces that follow it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Matcher", "Selector", "grouping_labels", "selectors", "substitute"]

_TOKEN = re.compile(
    r"""(?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)"""
    r"""|(?P<braces>\{(?:"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|[^}"'])*\})"""
    r"""|(?P<number>\d[\w.]*|\.\d[\w.]*)"""
    r"""|(?P<ident>[a-zA-Z_:][\w:]*)"""
    r"""|(?P<space>\s+)"""
    r"""|(?P<other>.)""",
    re.S,
)
_MATCHER = re.compile(r"""(\w+)\s*(=~|!~|!=|=)\s*("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')""")
_GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
_KEYWORDS = {"bool", "and", "or", "unless", "offset", "inf", "nan", "atan2"} | _GROUPING
_VARIABLE = re.compile(r"\$\{(\w+)(?::[\w]+)?\}|\[\[(\w+)\]\]|\$(\w+)")


@dataclass(frozen=True)
class Matcher:
    label: str
    op: str
    value: str  # as written, quotes included

    def __str__(self) -> str:
        return f"{self.label}{self.op}{self.value}"


@dataclass(frozen=True)
class Selector:
    metric: str
    matchers: tuple[Matcher, ...]

    def presence(self) -> str:
        """A selector that returns series when the metric exists as this one reads it:
        its equality matchers as they are (``job="rackem-table"``, ``le="0.25"``: values
        that must exist), and only the presence of the labels it matches otherwise
        (``grpc_code!="OK"`` is empty on a healthy run, but ``grpc_code`` must exist)."""
        kept = [f'__name__="{self.metric}"']
        for matcher in self.matchers:
            if matcher.op == "=":
                kept.append(str(matcher))
            else:
                kept.append(f'{matcher.label}=~".+"')
        return "{" + ", ".join(kept) + "}"


def _tokens(expr: str) -> list[tuple[str, str]]:
    out = []
    for found in _TOKEN.finditer(expr):
        kind = found.lastgroup
        assert kind is not None
        if kind != "space":
            out.append((kind, found.group()))
    return out


def _scan(expr: str) -> tuple[list[Selector], list[str]]:
    tokens = _tokens(expr)
    found: list[Selector] = []
    grouped: list[str] = []
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        following = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
        if kind == "ident" and text in _GROUPING and following == ("other", "("):
            j = i + 2
            while j < len(tokens) and tokens[j] != ("other", ")"):
                if tokens[j][0] == "ident" and text != "without":
                    grouped.append(tokens[j][1])
                j += 1
            i = j + 1
            continue
        call = following == ("other", "(") or following in (("ident", "by"), ("ident", "without"))
        if kind == "ident" and not call and text not in _KEYWORDS:
            matchers: tuple[Matcher, ...] = ()
            if following[0] == "braces":
                matchers = tuple(Matcher(*m) for m in _MATCHER.findall(following[1]))
                i += 1
            found.append(Selector(text, matchers))
        elif kind == "braces":
            raise ValueError(f"a selector without a metric name: {text} in {expr}")
        i += 1
    return found, grouped


def selectors(expr: str) -> list[Selector]:
    """Every metric selector of ``expr``, in order (repeats included)."""
    return _scan(expr)[0]


def grouping_labels(expr: str) -> list[str]:
    """The labels of ``expr``'s ``by``, ``on``, ``ignoring`` and ``group_*`` lists."""
    return _scan(expr)[1]


def substitute(expr: str, values: dict[str, str]) -> str:
    """Grafana's variables (``$name``, ``${name}``, ``${name:format}``, ``[[name]]``)
    replaced by ``values``; ``KeyError`` for one it has no value for."""

    def value(found: re.Match[str]) -> str:
        name = next(group for group in found.groups() if group)
        return values[name]

    return _VARIABLE.sub(value, expr)
