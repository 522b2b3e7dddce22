"""The route table and path templates (google/api/http.proto), without a server."""

from __future__ import annotations

import pytest
from truc.v1 import game_service_pb2, lobby_service_pb2

from truc_gateway.errors import GatewayError
from truc_gateway.routes import PathTemplate, TemplateError, most_specific, route_table
from truc_gateway.transcode import build_request, message_dict


def test_every_rpc_of_both_services_has_a_route() -> None:
    table = {(r.http_method, r.template.text): r.method.full_name for r in route_table()}
    assert table == {
        ("POST", "/v1/games"): "truc.v1.GameService.CreateGame",
        ("GET", "/v1/{name=games/*}"): "truc.v1.GameService.GetGame",
        ("POST", "/v1/{name=games/*}:submitAction"): "truc.v1.GameService.SubmitAction",
        ("GET", "/v1/{name=games/*}:watch"): "truc.v1.GameService.WatchGame",
        ("GET", "/v1/{open.name=games/*}:play"): "truc.v1.GameService.Play",  # WebSocket
        ("GET", "/v1/{name=games/*}:replay"): "truc.v1.GameService.GetReplay",
        ("POST", "/v1/guests:signIn"): "truc.v1.LobbyService.SignInGuest",
        ("POST", "/v1/tickets"): "truc.v1.LobbyService.CreateTicket",
        ("POST", "/v1/{name=tickets/*}:confirm"): "truc.v1.LobbyService.ConfirmTicket",
        ("GET", "/v1/{name=tickets/*}"): "truc.v1.LobbyService.GetTicket",
        ("POST", "/v1/{name=tickets/*}:cancel"): "truc.v1.LobbyService.CancelTicket",
        ("GET", "/v1/{name=tickets/*}:watch"): "truc.v1.LobbyService.WatchTicket",
        ("GET", "/v1/games"): "truc.v1.LobbyService.ListGames",
        ("POST", "/v1/streamTokens"): "truc.v1.LobbyService.CreateStreamToken",
        ("GET", "/v1/liveGames"): "truc.v1.LobbyService.ListLiveGames",
        ("POST", "/v1/{name=games/*}:spectate"): "truc.v1.LobbyService.CreateSpectatorGrant",
    }
    for service in (game_service_pb2, lobby_service_pb2):
        for descriptor in service.DESCRIPTOR.services_by_name.values():
            assert len(descriptor.methods) == sum(
                r.service == descriptor.full_name for r in route_table()
            )


def test_the_new_routes_share_the_games_paths_without_ambiguity() -> None:
    routes = route_table()
    for path, methods in {
        "/v1/games/g:replay": {("GET", "GameService", "GetReplay")},
        "/v1/games/g:spectate": {("POST", "LobbyService", "CreateSpectatorGrant")},
        "/v1/liveGames": {("GET", "LobbyService", "ListLiveGames")},
        "/v1/games": {
            ("GET", "LobbyService", "ListGames"),
            ("POST", "GameService", "CreateGame"),
        },
    }.items():
        found = {
            (r.http_method, r.service.rsplit(".", 1)[1], r.method.name)
            for r, _ in most_specific(routes, path)
        }
        assert found == methods, path
    replay = next(r for r in routes if r.method.name == "GetReplay")
    request = build_request(
        replay, {"name": "games/g"}, [("page_size", "5"), ("asSpectator", "true")], b""
    )
    assert isinstance(request, game_service_pb2.GetReplayRequest)
    assert (request.name, request.page_size, request.as_spectator) == ("games/g", 5, True)
    assert not replay.streaming and replay.body == ""
    spectate = next(r for r in routes if r.method.name == "CreateSpectatorGrant")
    assert spectate.body == "*"  # a JSON body, {}, is optional
    grant = build_request(spectate, {"name": "games/g"}, [], b"")
    assert isinstance(grant, lobby_service_pb2.CreateSpectatorGrantRequest)
    assert grant.name == "games/g"


def test_templates_match_raw_paths_and_decode_variables() -> None:
    template = PathTemplate.parse("/v1/{name=games/*}:submitAction")
    assert template.match("/v1/games/g-1:submitAction") == {"name": "games/g-1"}
    assert template.match("/v1/games/a%20b:submitAction") == {"name": "games/a b"}
    assert template.match("/v1/games/a/b:submitAction") is None
    assert template.match("/v1/games/g-1") is None
    deep = PathTemplate.parse("/v1/{parent=shelves/*}/books/{book.id}/{rest=**}")
    assert deep.match("/v1/shelves/s/books/7/x/y") == {
        "parent": "shelves/s",
        "book.id": "7",
        "rest": "x/y",
    }
    for bad in ("v1/x", "/v1/{name=games/*", "/v1/{9=x}", "/v1/a b", "/v1/x:"):
        with pytest.raises(TemplateError):
            PathTemplate.parse(bad)


def test_a_verb_is_never_read_as_part_of_a_name() -> None:
    routes = route_table()
    [(watch, variables)] = most_specific(routes, "/v1/games/g:watch")
    assert watch.method.name == "WatchGame" and variables == {"name": "games/g"}
    assert {r.method.name for r, _ in most_specific(routes, "/v1/games/g")} == {"GetGame"}


def test_requests_are_assembled_from_body_query_path_and_last_event_id() -> None:
    routes = {r.method.name: r for r in route_table()}
    submit = build_request(
        routes["SubmitAction"],
        {"name": "games/g"},
        [],
        b'{"name": "games/other", "action": {"call": "CALL_TRUC"}, "request_id": "r"}',
    )
    assert isinstance(submit, game_service_pb2.SubmitActionRequest)
    assert (submit.name, submit.request_id, submit.action.call) == ("games/g", "r", 15)
    watch = build_request(
        routes["WatchGame"], {"name": "games/g"}, [("afterVersion", "4")], b"", "9"
    )
    assert isinstance(watch, game_service_pb2.WatchGameRequest)
    assert watch.after_version == 9  # Last-Event-ID wins over the query
    with pytest.raises(GatewayError) as refused:
        build_request(routes["GetGame"], {"name": "games/g"}, [], b"{}")
    assert refused.value.http_status == 400
    with pytest.raises(GatewayError):
        build_request(routes["WatchGame"], {"name": "games/g"}, [("name", "x")], b"")
    assert message_dict(game_service_pb2.WatchGameResponse())["version"] == "0"
