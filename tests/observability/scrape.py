"""Reading what a service exposes: its Prometheus endpoint and its JSON log lines."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterable
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from truc_rules import DECK


class Samples:
    """One scrape of a ``/metrics`` endpoint."""

    def __init__(self, url: str) -> None:
        with urllib.request.urlopen(url, timeout=5) as reply:
            text = reply.read().decode()
        self._samples = [
            (sample.name, sample.labels, sample.value)
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        ]
        self.names = {name for name, _, _ in self._samples}

    def value(self, name: str, **labels: str) -> float:
        """The sum of the samples named ``name`` whose labels include ``labels``."""
        assert name in self.names, f"no series {name}"
        return sum(
            value
            for found, have, value in self._samples
            if found == name and all(have.get(k) == v for k, v in labels.items())
        )


def json_lines(text: str) -> list[dict[str, Any]]:
    """Every line of a log parsed as a JSON object (fails on any other line)."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            parsed = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"line {number} is not JSON: {line!r}") from exc
        assert isinstance(parsed, dict), f"line {number} is not an object: {line!r}"
        lines.append(parsed)
    return lines


_CARD_TEXTS = {str(card) for card in DECK}
_WORD = re.compile(r"[A-Za-z0-9]+")


def cards_named(line: str, ids: Iterable[str]) -> set[str]:
    """The cards written in ``line`` in rules.md notation (``7Sw``) or as enum names,
    once the ids in ``ids`` (random: they could spell a card) are taken out."""
    for known in ids:
        line = line.replace(known, " ")
    found = {word for word in _WORD.findall(line) if word in _CARD_TEXTS}
    if "Card." in line or "PlayCard" in line:
        found.add("(a Card object)")
    return found
