"""The time signal: the periods a question names, and how close a memory's date is to them.

:func:`time_windows` reads explicit and relative time expressions (English, rules only):

- dates: "October 13, 2023", "13 October 2023", "1 February, 2023", "2023-05-08";
- months: "May 2023", "in May" / "last May" (the latest such month before ``now``);
- years: "in 2022" (a four-digit year between 1900 and 2199);
- relative: "today", "yesterday", "this/last week|weekend|month|year",
  "N days|weeks|months|years ago".

Relative expressions are resolved against ``now`` (the time of the search).
:func:`time_score` is 1.0 for a memory observed inside a window and decays with the
distance outside it (scale: half the window, at least one day), so "on May 3" favours
May 3 most and its neighbours a little. :func:`recency_score` halves every ``half_life``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from memoweave.index.entities import MONTHS

_DAY = 86_400.0
_MONTH_RE = "|".join(MONTHS) + "|" + "|".join(m[:3] for m in MONTHS if m != "may")
_ORD = r"(?:st|nd|rd|th)?"
_MDY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}}){_ORD},?\s+(\d{{4}})\b", re.I)
_DMY = re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.I)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MY = re.compile(rf"\b({_MONTH_RE})\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.I)
_MONTH_ALONE = re.compile(rf"\b(?:in|during|since|last|this|of)\s+({_MONTH_RE})\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|since|of|year)\s+(19\d\d|2[01]\d\d)\b", re.I)
_AGO = re.compile(
    r"\b(\d{1,3}|a|an|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago\b", re.I
)
_RELATIVE = re.compile(
    r"\b(today|yesterday|(?:this|last|past|previous)\s+(?:week|weekend|month|year))\b", re.I
)
_WORD_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass(frozen=True)
class TimeWindow:
    """A period ``[start, end)`` as POSIX timestamps."""

    start: float
    end: float


def _month_number(name: str) -> int:
    name = name.lower().rstrip(".")
    for i, month in enumerate(MONTHS, start=1):
        if month == name or month[:3] == name:
            return i
    raise ValueError(name)


def _utc(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=timezone.utc)
    except ValueError:
        return None


def _month_window(year: int, month: int) -> TimeWindow | None:
    start = _utc(year, month, 1)
    end = _utc(year + month // 12, month % 12 + 1, 1)
    return TimeWindow(start.timestamp(), end.timestamp()) if start and end else None


def _day_window(year: int, month: int, day: int) -> TimeWindow | None:
    start = _utc(year, month, day)
    return TimeWindow(start.timestamp(), start.timestamp() + _DAY) if start else None


def _relative(phrase: str, now: datetime) -> TimeWindow | None:
    phrase = " ".join(phrase.lower().split())
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if phrase == "today":
        return TimeWindow(today.timestamp(), today.timestamp() + _DAY)
    if phrase == "yesterday":
        return TimeWindow(today.timestamp() - _DAY, today.timestamp())
    which, unit = phrase.split(" ")
    back = 0 if which == "this" else 1
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday() + 7 * back)
        start = monday + timedelta(days=5) if unit == "weekend" else monday
        end = monday + timedelta(days=7)
        return TimeWindow(start.timestamp(), end.timestamp())
    if unit == "month":
        month, year = today.month - back, today.year
        if month < 1:
            month, year = 12, year - 1
        return _month_window(year, month)
    first = _utc(today.year - back, 1, 1)
    after = _utc(today.year - back + 1, 1, 1)
    return TimeWindow(first.timestamp(), after.timestamp()) if first and after else None


def _ago(count: str, unit: str, now: datetime) -> TimeWindow:
    n = _WORD_NUMBERS.get(count.lower()) or int(count)
    days = {"day": 1, "week": 7, "month": 30.4, "year": 365.25}[unit.lower()] * n
    centre = now.timestamp() - days * _DAY
    half = max(_DAY, days * _DAY * 0.25)
    return TimeWindow(centre - half, centre + half)


def time_windows(text: str, now: datetime) -> list[TimeWindow]:
    """The periods ``text`` names (empty when it names none); see the module docstring."""
    if not isinstance(text, str) or not text:
        return []
    windows: list[TimeWindow | None] = []
    spans: list[tuple[int, int]] = []

    def free(m: re.Match[str]) -> bool:
        return all(m.end() <= a or m.start() >= b for a, b in spans)

    def take(m: re.Match[str], window: TimeWindow | None) -> None:
        spans.append((m.start(), m.end()))
        windows.append(window)

    for m in _ISO.finditer(text):
        take(m, _day_window(int(m.group(1)), int(m.group(2)), int(m.group(3))))
    for m in _MDY.finditer(text):
        if free(m):
            take(m, _day_window(int(m.group(3)), _month_number(m.group(1)), int(m.group(2))))
    for m in _DMY.finditer(text):
        if free(m):
            take(m, _day_window(int(m.group(3)), _month_number(m.group(2)), int(m.group(1))))
    for m in _MY.finditer(text):
        if free(m):
            take(m, _month_window(int(m.group(2)), _month_number(m.group(1))))
    for m in _MONTH_ALONE.finditer(text):
        if free(m):
            month = _month_number(m.group(1))
            year = now.year if month < now.month else now.year - 1
            take(m, _month_window(year, month))
    for m in _YEAR.finditer(text):
        if free(m):
            first, after = _utc(int(m.group(1)), 1, 1), _utc(int(m.group(1)) + 1, 1, 1)
            if first and after:
                take(m, TimeWindow(first.timestamp(), after.timestamp()))
    for m in _AGO.finditer(text):
        if free(m):
            take(m, _ago(m.group(1), m.group(2), now))
    for m in _RELATIVE.finditer(text):
        if free(m):
            take(m, _relative(m.group(1), now))
    return [w for w in windows if w is not None]


def time_score(observed_ts: float | None, windows: list[TimeWindow]) -> float:
    """1.0 inside a window, decaying with the distance outside it; 0.0 without a date."""
    if observed_ts is None or not windows:
        return 0.0
    best = 0.0
    for w in windows:
        if w.start <= observed_ts < w.end:
            return 1.0
        distance = w.start - observed_ts if observed_ts < w.start else observed_ts - w.end
        scale = max(_DAY, (w.end - w.start) / 2)
        best = max(best, math.exp(-distance / scale))
    return best


def recency_score(observed_ts: float | None, now: datetime, half_life_days: float) -> float:
    """``0.5 ** (age / half_life)``: 1.0 for a memory observed now; 0.0 without a date."""
    if observed_ts is None or half_life_days <= 0:
        return 0.0
    age_days = max(0.0, (now.timestamp() - observed_ts) / _DAY)
    return float(0.5 ** (age_days / half_life_days))
