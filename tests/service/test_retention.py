"""A finished game is kept for its players: its keys get the finished-game TTL
(TRUC_FINISHED_GAME_TTL_SECONDS) instead of the idle TTL, and every player
can read the whole log, filtered for their seat, after the end."""

from __future__ import annotations

import redis

from truc_dev_redis import RedisServer
from truc_game.adapters.redis_keys import Keys

from .conftest import (
    SPECTATOR,
    TRUC_REFUSED_DEAL,
    auth,
    create_fixed_game,
    new_players,
    next_request,
    running_replica,
    stub,
    view_of,
)

IDLE_TTL = 600
FINISHED_TTL = 86_400


def ttl(db: redis.Redis, key: str) -> int:
    return int(db.ttl(key))  # type: ignore[arg-type]  # redis-py types sync and async as one


def test_a_finished_game_is_kept_for_the_finished_ttl_and_its_log_stays_readable(
    redis_server: RedisServer,
) -> None:
    db = redis.Redis.from_url(redis_server.url)
    with running_replica(
        redis_server.url,
        TRUC_GAME_TTL_SECONDS=str(IDLE_TTL),
        TRUC_FINISHED_GAME_TTL_SECONDS=str(FINISHED_TTL),
    ) as replica:
        client = stub(replica.address)
        players = new_players()
        tokens = [auth(p) for p in players]
        name = create_fixed_game(
            client,
            players,
            deals=[TRUC_REFUSED_DEAL] * 8,
            start_scores=(22, 22),
            start_manches=(1, 1),
        ).name
        keys = Keys(name.removeprefix("games/"))
        actions = 0
        view = view_of(client, name, SPECTATOR)
        while view.HasField("to_act"):
            assert 0 < ttl(db, keys.game) <= IDLE_TTL  # while it is played: the idle TTL
            request, token = next_request(client, name, tokens)
            view = client.SubmitAction(request, metadata=token).game
            actions += 1
            assert actions < 100
        assert view.finished
        for key in (keys.game, keys.log):
            assert IDLE_TTL < ttl(db, key) <= FINISHED_TTL
        for seat, token in enumerate(tokens):
            final = view_of(client, name, token)
            assert final.finished and final.seat == seat
            played = [e for e in final.events if e.HasField("card_played")]
            assert len(played) == actions  # the whole log, from the first action
            assert [e.version for e in final.events] == sorted(e.version for e in final.events)
    db.close()
