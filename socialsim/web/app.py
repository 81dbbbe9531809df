"""The browser front end's ASGI app (Starlette): the host page, the seat pages and their API.

Pages are plain HTML/JS/CSS from package data; what a seat page draws of a game comes from the
game's view module (its ``BOARD`` script, served in ``/boards.js``), so no page names a game. Every API request and socket is authorised:
the host's requests with the host token (printed by ``socialsim serve``), a seat's with that
seat's token, compared in constant time; anything else is 403, whichever seat or session it
names. Answers are checked with the game's own rules before the agent gets them (422 with the
reason), bodies over :data:`MAX_BODY` bytes are refused (413), slower than :data:`BODY_SECONDS`
(408) or nested deeper than :data:`MAX_DEPTH` (400), and every response forbids inline script
(CSP), so nothing a person types can run in another person's page. An uploaded experiment may
set only what :mod:`socialsim.web.uploads` allows (422 naming the key, before anything it names
is imported or read); checking it and starting a game run off the event loop, at most
:data:`CHECKS_AT_ONCE` at a time and ``check_seconds`` each (422 beyond), so no session waits.
Join links name ``url`` (``serve --url``), else the address the host's request reached. Each
session's game plays in a thread of its own (:meth:`~socialsim.web.sessions.Session.start`), so
an agent that computes for long stalls no other session and no page; a seat holds at most
:data:`MAX_SOCKETS_PER_SEAT` live sockets (one more is refused, 1008).

| method | path                                          | who   | what                         |
|--------|-----------------------------------------------|-------|------------------------------|
| GET    | ``/``, ``/seat``                              | all   | the pages (tokens ride in the URL fragment, never sent) |
| GET    | ``/boards.js``                                | all   | every game's seat board (its view module's script) |
| GET    | ``/api/experiments``                          | host  | offered experiments, seats   |
| POST   | ``/api/experiments/check``                    | host  | ``{upload: TOML}`` -> its game, seats |
| POST   | ``/api/sessions``                             | host  | ``{experiment or upload, humans, seed?}`` -> join links |
| GET    | ``/api/sessions/{sid}/seats/{seat}/state``    | seat  | what the seat may see now    |
| GET    | ``/api/sessions/{sid}/seats/{seat}/keywords`` | seat  | the keywords (the team only) |
| POST   | ``/api/sessions/{sid}/seats/{seat}/answer``   | seat  | ``{answer: {field: text}}``  |
| GET    | ``/api/sessions/{sid}/seats/{seat}/transcript`` | seat | once over: what it could see |
| WS     | ``/api/sessions/{sid}/seats/{seat}/live?token=`` | seat | the state, pushed on change |

With a study (``serve --study``), its participants' page, lobby and monitor routes too
(:mod:`socialsim.web.study_routes`); its games are sessions like the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from socialsim.agents.human.agent import board_scripts, view_module
from socialsim.bus import Message, audience_of
from socialsim.config import ConfigError, resolve_seats
from socialsim.web.sessions import (
    IDLE_TIMEOUT,
    Session,
    Sessions,
    new_token,
    read_upload,
    same_token,
)

MAX_BODY = 16 * 1024
MAX_DEPTH = 32  # JSON nesting: every request of the pages needs three levels at most
BODY_SECONDS = 10.0
CHECK_SECONDS = 20.0
CHECKS_AT_ONCE = 2
MAX_SOCKETS_PER_SEAT = 8  # a seat's page holds one live socket; a person may open a few tabs
STATIC = Path(str(resources.files("socialsim.web") / "static"))
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class Refused(Exception):
    """A request answered with ``status`` and ``{"error": reason}``; raised anywhere in a
    route, answered by its guard (:func:`create_app`'s ``host_route`` / ``seat_route``)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def refuse(status: int, reason: str) -> JSONResponse:
    return JSONResponse({"error": reason}, status_code=status)


async def read_json(request: Request) -> Any:
    """The request's JSON body: at most :data:`MAX_BODY` bytes (413 beyond), within
    :data:`BODY_SECONDS` (408), nested at most :data:`MAX_DEPTH` deep (400), JSON (400)."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise Refused(413, f"at most {MAX_BODY} bytes")
    body = b""
    try:
        async with asyncio.timeout(BODY_SECONDS):
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY:
                    raise Refused(413, f"at most {MAX_BODY} bytes")
    except TimeoutError:
        raise Refused(408, f"the body must arrive within {BODY_SECONDS:g} s") from None
    except ClientDisconnect:
        raise Refused(400, "the body was cut short") from None
    if json_depth(body) > MAX_DEPTH:
        raise Refused(400, f"the JSON is nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(body or b"null")
    except (ValueError, RecursionError):
        raise Refused(400, "the body must be JSON") from None


def json_depth(body: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets in strings not counted),
    found without parsing it."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif byte in b"]}":
            depth -= 1
    return deepest


def bearer(request: Request) -> str | None:
    value = request.headers.get("authorization", "")
    return value[7:] if value.lower().startswith("bearer ") else None


def create_app(
    results: Path,
    host_token: str,
    max_sessions: int = 200,
    idle_timeout: float | None = IDLE_TIMEOUT,
    url: str | None = None,
    offered: Sequence[str | os.PathLike] = (),
    check_seconds: float = CHECK_SECONDS,
    max_sockets_per_seat: int = MAX_SOCKETS_PER_SEAT,
    study=None,
    monitor_token: str | None = None,
) -> Starlette:
    """The app; ``idle_timeout`` seconds without an answer to a move ends a session (``None``
    or 0: wait for ever); ``url``: the address people reach (``https://host.example:8443``),
    else the one the host's request named; ``offered``: the operator's experiment files, offered
    beside the bundled ones (they may name models and servers, which an upload may not);
    ``study`` (a :class:`socialsim.study.Study`): also its participants' page, lobby and
    monitor (:mod:`socialsim.web.study_routes`), the monitor behind ``monitor_token`` (a token
    of its own, so the experimenter's page starts no games; default: a new one)."""
    sessions = Sessions(results, max_sessions, idle_timeout, offered)
    lobby = None
    if study is not None:
        from socialsim.web.lobby import Lobby

        lobby = Lobby(study, sessions)
    sockets: dict[tuple[str, str], int] = {}  # (session, seat) -> its open live sockets
    checks = asyncio.Semaphore(CHECKS_AT_ONCE)

    async def off_loop(function, *args):
        """``function(*args)`` in a thread, at most :data:`CHECKS_AT_ONCE` at a time, given
        ``check_seconds``; a :class:`ConfigError` is a 422. A thread past its time finishes
        unseen (uploads are capped, so it ends) and holds its place until then."""
        try:
            await asyncio.wait_for(checks.acquire(), check_seconds)
        except TimeoutError:
            raise Refused(503, "the server is busy checking other experiments; try again") from None
        future = asyncio.ensure_future(asyncio.to_thread(function, *args))
        future.add_done_callback(
            lambda done: (checks.release(), done.cancelled() or done.exception())
        )
        try:
            return await asyncio.wait_for(asyncio.shield(future), check_seconds)
        except TimeoutError:
            raise Refused(
                422,
                f"the experiment could not be checked within {check_seconds:g} s; make it smaller",
            ) from None
        except (ConfigError, RecursionError) as error:
            raise Refused(422, str(error) or "nested too deeply") from None

    def seat_of(sid: str, seat: str, token: str | None) -> tuple[Session, Any] | None:
        session = sessions.by_id.get(sid)
        console = session.seat_of(seat, token) if session else None
        return (session, console) if console else None

    def host_route(handler):
        """The host's routes: the host token or 403; a :class:`Refused` answered."""

        async def route(request: Request) -> Response:
            if not same_token(bearer(request), host_token):
                return refuse(403, "the host token is needed")
            try:
                return await handler(request)
            except Refused as refused:
                return refuse(refused.status, refused.reason)

        return route

    def seat_route(handler):
        """A seat's routes: ``handler(request, session, console)`` with the seat's own token,
        or 403 whichever seat or session the path names; a :class:`Refused` answered."""

        async def route(request: Request) -> Response:
            p = request.path_params
            found = seat_of(p["sid"], p["seat"], bearer(request))
            if found is None:
                return refuse(403, "this token is not this seat's")
            try:
                return await handler(request, *found)
            except Refused as refused:
                return refuse(refused.status, refused.reason)

        return route

    async def page(request: Request) -> Response:
        name = "seat.html" if request.url.path == "/seat" else "host.html"
        return FileResponse(STATIC / name, headers=HEADERS)

    boards_js = board_scripts()  # every game's seat board, from its view module

    async def boards(request: Request) -> Response:
        return Response(boards_js, media_type="text/javascript", headers=HEADERS)

    @host_route
    async def experiments(request: Request) -> Response:
        listing = await asyncio.to_thread(sessions.offered)  # the first reading builds agents
        return JSONResponse({"experiments": listing}, headers=HEADERS)

    @host_route
    async def check_upload(request: Request) -> Response:
        body = await read_json(request)
        return JSONResponse(
            await off_loop(checked, body.get("upload") if isinstance(body, dict) else None)
        )

    @host_route
    async def create(request: Request) -> Response:
        body = await read_json(request)
        if not isinstance(body, dict):
            raise Refused(400, "expected {experiment, humans, seed?}")
        plan = await off_loop(
            sessions.plan,
            body.get("experiment"),
            body.get("humans"),
            body.get("seed"),
            body.get("upload", ""),
        )
        try:  # the manifest names the git commit (a subprocess) and is fsynced: off the loop too
            session = await asyncio.to_thread(sessions.open, plan)
        except ConfigError as error:
            raise Refused(422, str(error)) from None
        session.start()
        base = url or str(request.base_url).rstrip("/")
        links = {
            seat: f"{base}/seat#session={session.id}&seat={seat}&token={token}"
            for seat, token in session.tokens.items()
        }
        seats = {s: spec["kind"] for s, spec in session.spec.seats.items()}
        return JSONResponse(
            {"session": session.id, "links": links, "seats": seats, "results": str(session.out)},
            headers=HEADERS,
        )

    def state_of(session: Session, console) -> dict[str, Any]:
        return {
            "session": session.id,
            "seat": console.seat,
            "game": session.game,
            "board": session.view.BOARD,
            "version": console.version,
            "idle_timeout": session.idle_timeout,
            **console.state,
        }

    @seat_route
    async def state(request: Request, session: Session, console) -> Response:
        return JSONResponse(state_of(session, console), headers=HEADERS)

    @seat_route
    async def keywords(request: Request, session: Session, console) -> Response:
        if console.seat not in session.view.KEYWORD_SEATS:
            raise Refused(403, "this seat does not see the keywords")
        view = console.state.get("view") or {}
        return JSONResponse({"keywords": view.get("keywords", [])}, headers=HEADERS)

    @seat_route
    async def transcript(request: Request, session: Session, console) -> Response:
        if session.record is None:
            raise Refused(409, "the transcript is shown once the game is over")
        return JSONResponse({"messages": visible(session, console.seat)}, headers=HEADERS)

    @seat_route
    async def answer(request: Request, session: Session, console) -> Response:
        body = await read_json(request)
        if not isinstance(body, dict) or not isinstance(body.get("answer"), dict):
            raise Refused(400, "expected {answer: {field: text}}")
        try:
            await console.give(body["answer"])
        except LookupError as error:
            raise Refused(409, str(error)) from None
        except ValueError as error:
            raise Refused(422, str(error)) from None
        return JSONResponse({"ok": True}, headers=HEADERS)

    async def live(websocket: WebSocket) -> None:
        p = websocket.path_params
        found = seat_of(p["sid"], p["seat"], websocket.query_params.get("token"))
        if found is None:
            await websocket.close(code=1008)  # before accept: the handshake gets a 403
            return
        session, console = found
        key = (session.id, console.seat)
        if sockets.get(key, 0) >= max_sockets_per_seat:
            await websocket.close(code=1008)  # a seat's page needs one; a few tabs are fine
            return
        sockets[key] = sockets.get(key, 0) + 1
        try:
            await _live(websocket, session, console)
        finally:
            sockets[key] -= 1
            if not sockets[key]:
                del sockets[key]

    async def _live(websocket: WebSocket, session: Session, console) -> None:
        await websocket.accept()
        closed = asyncio.ensure_future(_until_closed(websocket))
        try:
            while not closed.done():
                version = console.version
                state = state_of(session, console)
                await websocket.send_json(state)
                if state["status"] == "over":
                    break  # nothing changes after the end: the page stops showing "live"
                change = asyncio.ensure_future(console.wait_change(version, 25.0))
                await asyncio.wait({change, closed}, return_when=asyncio.FIRST_COMPLETED)
                change.cancel()
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            closed.cancel()
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            await websocket.close(code=1000)

    async def headers(request, call_next):
        response = await call_next(request)
        for key, value in HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    routes = [
        Route("/", page),
        Route("/seat", page),
        Route("/boards.js", boards),
        Route("/api/experiments", experiments),
        Route("/api/sessions", create, methods=["POST"]),
        Route("/api/experiments/check", check_upload, methods=["POST"]),
        Route("/api/sessions/{sid}/seats/{seat}/state", state),
        Route("/api/sessions/{sid}/seats/{seat}/keywords", keywords),
        Route("/api/sessions/{sid}/seats/{seat}/answer", answer, methods=["POST"]),
        Route("/api/sessions/{sid}/seats/{seat}/transcript", transcript),
        WebSocketRoute("/api/sessions/{sid}/seats/{seat}/live", live),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    if lobby is not None:
        from socialsim.web.study_routes import study_routes

        monitor = monitor_token or new_token()
        routes[-1:-1] = study_routes(lobby, monitor, STATIC, HEADERS, read_json, Refused)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        sessions.resume()  # the unfinished sessions of an earlier server, from their journals
        forming = None
        if lobby is not None:
            lobby.resume()  # its participants and games as an earlier server left them
            forming = asyncio.ensure_future(lobby.run())
        yield
        if forming is not None:
            forming.cancel()
            lobby.flush()
        await asyncio.to_thread(sessions.stop)  # each game at its next step, logging nothing

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.sessions = sessions
    app.state.lobby = lobby
    from starlette.middleware.base import BaseHTTPMiddleware

    app.add_middleware(BaseHTTPMiddleware, dispatch=headers)
    return app


def checked(upload: Any) -> dict[str, Any]:
    """What the host page shows of an upload that passes: its name, game and seats."""
    experiment, game = read_upload(upload)
    seats = list(resolve_seats(experiment.cells[0][1]))
    offered = view_module(game).offered_seat(seats)
    return {"name": experiment.name, "game": game, "seats": seats, "offered_seat": offered}


def visible(session: Session, seat: str) -> list[dict[str, Any]]:
    """The messages of the finished game that ``seat`` could see (the bus's audiences), as
    ``{turn, kind, payload}``: even after the end, nobody reads another seat's private ones."""
    record = session.record
    agents = list(session.spec.seats)
    rules = next((m["payload"] for m in record.messages if m["kind"] == "rules"), {})
    teams = rules.get("teams") or {}  # the bus's teams, as the game's rules message names them
    out = []
    for data in record.messages:
        if seat in audience_of(Message.from_json(data), agents, teams):
            out.append({"turn": data["turn"], "kind": data["kind"], "payload": data["payload"]})
    return out


async def _until_closed(websocket: WebSocket) -> None:
    """Read (and drop) what the page sends until it goes; a seat's page only listens."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
