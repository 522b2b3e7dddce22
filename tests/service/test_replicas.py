"""Two replicas on one Redis serve one game: calls alternate between them."""

from __future__ import annotations

from truc.v1 import game_pb2, game_service_pb2

from .conftest import Replica, bearer, create_game, new_players, stub


def test_a_game_played_with_calls_alternating_between_replicas_ends(
    replicas: list[Replica],
) -> None:
    clients = [stub(r.address) for r in replicas]
    players = new_players()
    name = create_game(clients[0], players).name
    tokens = [bearer(p) for p in players]
    view = clients[1].GetGame(game_service_pb2.GetGameRequest(name=name), metadata=tokens[0]).game
    assert view.phase == game_pb2.PHASE_DRAW
    steps = 0
    while not view.finished:
        seat = view.to_act
        client = clients[steps % 2]
        mine = client.GetGame(
            game_service_pb2.GetGameRequest(name=name), metadata=tokens[seat]
        ).game
        assert mine.etag == view.etag
        moves = [
            a for a in mine.legal_actions if a.WhichOneof("kind") not in ("signal", "directive")
        ]
        plays = [a for a in moves if a.WhichOneof("kind") == "play_card"]
        action = (
            plays[0] if plays else moves[-1] if mine.prompt == game_pb2.PROMPT_TURN else moves[0]
        )
        response = clients[(steps + 1) % 2].SubmitAction(
            game_service_pb2.SubmitActionRequest(
                name=name, action=action, etag=mine.etag, request_id=f"step-{steps}"
            ),
            metadata=tokens[seat],
        )
        assert int(response.game.etag) == int(mine.etag) + 1
        view = response.game
        steps += 1
        assert steps < 3000
    final = clients[0].GetGame(game_service_pb2.GetGameRequest(name=name), metadata=tokens[1]).game
    assert final.finished and final.winner in (game_pb2.TEAM_A, game_pb2.TEAM_B)
    assert max(final.manches.team_a, final.manches.team_b) == 2
    assert int(final.etag) == steps + 1
