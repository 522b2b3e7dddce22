"""``truc scenario --via HOST:PORT``: play scenario files through a running game service.

The service must run with the test flag (``TRUC_ALLOW_FIXED_DEALS=1``) and a
JWT secret known to this command (``--secret``, else ``TRUC_JWT_SECRET``, else
the development key). Each scenario becomes a game of its rule set with fixed
deals and one fresh player per seat; every action is a ``SubmitAction`` with the token of the
seat's player; a refusal is read from the ``FAILED_PRECONDITION`` status's
``ErrorInfo.reason``. The result object is built from a spectator's
``GetGame``, so it must equal the engine's (:func:`truc_rules.scenario.run_scenario`).
"""

from __future__ import annotations

import uuid
from typing import Final

import grpc
from truc.v1 import game_pb2, game_service_pb2, game_service_pb2_grpc

from truc_protocol.convert import action_to_proto, card_to_proto, options_to_proto
from truc_protocol.status import reason_of
from truc_protocol.tokens import issue_token
from truc_rules.registry import seat_count
from truc_rules.scenario import (
    MancheRecord,
    Rejection,
    Scenario,
    ScenarioError,
    ScenarioResult,
    ScenarioRun,
    check_expectations,
    initial_state,
)
from truc_rules.truc_y_flou.constants import TEAM_NAMES

__all__ = ["run_scenario_via"]

_TEAM: Final = {game_pb2.TEAM_A: TEAM_NAMES[0], game_pb2.TEAM_B: TEAM_NAMES[1]}


def _bearer(secret: str, player: str, role: str = "player") -> tuple[tuple[str, str | bytes]]:
    return (("authorization", "Bearer " + issue_token(secret, player, role=role)),)


def run_scenario_via(scenario: Scenario, channel: grpc.Channel, *, secret: str) -> ScenarioRun:
    """Play one scenario (:func:`truc_client.scenarios.parse_scenario`) through the
    service behind ``channel``."""
    setup = scenario.setup
    initial_state(setup)  # the engine's checks of the whole start position and every deal
    tag = uuid.uuid4().hex[:10]
    seats = seat_count(setup.options)
    players = [f"scenario-{tag}-{seat}" for seat in range(seats)]
    tokens = [_bearer(secret, p) for p in players]
    lobby = _bearer(secret, "scenario-lobby", "lobby")
    spectator = _bearer(secret, "scenario-spectator", "spectator")
    deals = [
        game_pb2.Deal(
            hands=[game_pb2.Hand(cards=[card_to_proto(c) for c in hand]) for hand in deal]
        )
        for deal in setup.deals
    ]
    if not deals:
        raise ScenarioError(
            "deals", "a scenario played through the service needs at least one deal"
        )
    request = game_service_pb2.CreateGameRequest(
        players=players,
        options=options_to_proto(setup.options),
        fixed_deals=deals,
        start_scores=game_pb2.Score(team_a=setup.scores[0], team_b=setup.scores[1]),
        start_manches=game_pb2.Score(team_a=setup.manches[0], team_b=setup.manches[1]),
        fixed_draws=[card_to_proto(c) for pair in setup.draws or () for c in pair],
    )
    if setup.dealer is not None:
        request.dealer = setup.dealer
    client = game_service_pb2_grpc.GameServiceStub(channel)
    try:
        game = client.CreateGame(request, metadata=lobby).name
    except grpc.RpcError as exc:
        assert isinstance(exc, grpc.Call)
        raise ScenarioError(
            "", f"the service refused the scenario's game: {exc.details()}"
        ) from None
    rejected: list[Rejection] = []
    problems: list[str] = []
    for index, step in enumerate(scenario.actions):
        refusal: str | None = None
        if not 0 <= step.seat < seats:
            refusal = "NOT_YOUR_TURN"  # no such seat, so never the one expected to act
        else:
            try:
                client.SubmitAction(
                    game_service_pb2.SubmitActionRequest(
                        name=game, action=action_to_proto(step.action), request_id=f"{tag}-{index}"
                    ),
                    metadata=tokens[step.seat],
                )
            except grpc.RpcError as exc:
                assert isinstance(exc, grpc.Call)
                if exc.code() != grpc.StatusCode.FAILED_PRECONDITION:
                    raise ScenarioError(
                        f"actions[{index}]",
                        f"the service answered {exc.code().name}: {exc.details()}",
                    ) from None
                refusal = reason_of(exc)
        if refusal is not None:
            rejected.append(Rejection(index, refusal))
            if step.rejected != refusal:
                problems.append(
                    f"actions[{index}] (seat {step.seat} {step.action}) was refused {refusal}"
                    + (f", expected {step.rejected}" if step.rejected else "")
                )
        elif step.rejected is not None:
            problems.append(
                f"actions[{index}] (seat {step.seat} {step.action}) was accepted, "
                f"expected refusal {step.rejected}"
            )
    view = client.GetGame(game_service_pb2.GetGameRequest(name=game), metadata=spectator).game
    result = ScenarioResult(
        name=scenario.name,
        # A finished view shows the last manche's final scores; the scenario
        # format, as the engine's own result, records the 0-0 after it.
        scores=(0, 0) if view.finished else (view.scores.team_a, view.scores.team_b),
        manches=(view.manches.team_a, view.manches.team_b),
        history=tuple(
            MancheRecord(_TEAM[h.winner], (h.scores.team_a, h.scores.team_b)) for h in view.history
        ),
        hands_played=view.hands_played,
        to_act=view.to_act if view.HasField("to_act") else None,
        finished=view.finished,
        winner=_TEAM.get(view.winner),
        rejected=tuple(rejected),
    )
    problems.extend(check_expectations(result, scenario.expect))
    return ScenarioRun(result, tuple(problems))
