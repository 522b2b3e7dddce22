"""``truc demo``: a seeded match between engine bots, told with the clients'
narration (the engine's events converted to ``truc.v1`` events)."""

from __future__ import annotations

import io
import re

from truc_client.engine_demo import play_demo


def told(seed: int, hands: int) -> str:
    out = io.StringIO()
    assert play_demo(seed=seed, max_hands=hands, out=out) == 0
    return out.getvalue()


def test_the_demo_tells_a_seeded_match_the_same_way_every_time() -> None:
    text = told(7, 2)
    assert text == told(7, 2)  # seeded: the same match, the same words
    assert text != told(8, 2)
    lines = text.splitlines()
    assert any(line.startswith("── hand 1 (manche 1):") for line in lines)
    assert any(line.startswith("── hand 2 ") for line in lines)
    assert any(re.fullmatch(r"   S\d\([AB]\) holds .+", line) for line in lines)
    assert any(re.fullmatch(r"S\d\([AB]\) plays \S+", line) for line in lines)
    assert re.fullmatch(r"\(\d+ actions, 2 hands, seed 7\)", lines[-1])
