"""The routes of a study (``socialsim serve --study FILE``): the participants' page and API,
and the experimenter's monitor. The participants' games are ordinary sessions: their seat
pages and API are the app's own (:mod:`socialsim.web.app`).

Every participant request carries the participant's token (``Authorization: Bearer``), and
every monitor request the monitor's own token (printed by ``serve --study``; not the host's),
else 403; the body only answers the stage the participant is at (409 at another stage), and nothing
in a request names a file, an endpoint or code: the pages are the study's Markdown, rendered
with raw HTML off (markdown-it-py), the games the study's experiments.

| method | path                          | who         | what                                  |
|--------|-------------------------------|-------------|---------------------------------------|
| GET    | ``/study``                    | all         | the participants' page                |
| GET    | ``/api/study/info``           | all         | the study's name, the panel's parameter |
| POST   | ``/api/study/arrive``         | all         | ``{panel_id}`` -> ``{participant, token}`` (429 past ``arrivals_per_minute`` from one address) |
| GET    | ``/api/study/me``             | participant | the stage and what it shows            |
| POST   | ``/api/study/consent``        | participant | ``{agree: bool}``                     |
| POST   | ``/api/study/instructions``   | participant | read: on to the quiz                  |
| POST   | ``/api/study/quiz``           | participant | ``{answers: [choice, ...]}``          |
| POST   | ``/api/study/leave``          | participant | leave (a game goes on with the filler) |
| GET    | ``/monitor``                  | all         | the experimenter's page               |
| GET    | ``/api/study/monitor``        | monitor     | participants by stage, games, pay     |
| GET    | ``/api/study/export``         | monitor     | ``participants.csv``                  |
| POST   | ``/api/study/monitor``        | monitor     | ``{paused?: bool, end?: true}``       |
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from markdown_it import MarkdownIt
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from socialsim.config import ConfigError
from socialsim.web.lobby import Lobby, Participant
from socialsim.web.sessions import same_token

#: raw HTML in a page is shown as text; links are checked by markdown-it (no javascript:)
MARKDOWN = MarkdownIt("commonmark", {"html": False})


def page_html(text: str) -> str:
    return MARKDOWN.render(text)


class ArrivalLimit:
    """At most ``per_minute`` arrivals from one client address in any 60 seconds (0: no limit):
    a script at the public link cannot fill the study or tilt its assignment from one address.
    ``clock`` is ``time.monotonic`` but in tests."""

    WINDOW = 60.0
    MAX_ADDRESSES = 100_000  # past it, addresses with no arrival in the window are forgotten

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic):
        self.per_minute = per_minute
        self.clock = clock
        self.seen: dict[str, deque[float]] = {}

    def wait(self, address: str) -> float:
        """0 if an arrival from ``address`` is let in now (and counted), else the seconds until
        one is."""
        if not self.per_minute:
            return 0.0
        now = self.clock()
        if len(self.seen) >= self.MAX_ADDRESSES:
            self.seen = {a: q for a, q in self.seen.items() if q and q[-1] > now - self.WINDOW}
        times = self.seen.setdefault(address, deque())
        while times and times[0] <= now - self.WINDOW:
            times.popleft()
        if len(times) >= self.per_minute:
            return times[0] + self.WINDOW - now
        times.append(now)
        return 0.0


def study_routes(
    lobby: Lobby,
    monitor_token: str,
    static,
    headers: dict[str, str],
    read_json: Callable[[Request], Awaitable[Any]],
    refused: type[Exception],
) -> list[Route]:
    """The study's routes; ``read_json`` and ``refused`` are the app's (its body bounds and its
    refusal, answered here as ``{"error": reason}``)."""
    study = lobby.study
    pages = {name: page_html(text) for name, text in study.pages.items()}

    def answer(data: Any, status: int = 200) -> JSONResponse:
        return JSONResponse(data, status_code=status, headers=headers)

    def guarded(handler, host: bool = False):
        async def route(request: Request) -> Response:
            value = request.headers.get("authorization", "")
            token = value[7:] if value.lower().startswith("bearer ") else None
            if host:
                if not same_token(token, monitor_token):
                    return answer({"error": "the monitor's token is needed"}, 403)
                found = None
            else:
                found = lobby.find(token)
                if found is None:
                    return answer({"error": "this token is not a participant's"}, 403)
            try:
                return await handler(request, found)
            except refused as error:
                return answer({"error": error.reason}, error.status)
            except LookupError as error:
                return answer({"error": str(error).strip("'\"")}, 409)
            except ConfigError as error:
                return answer({"error": str(error)}, 422)

        return route

    async def body_of(request: Request) -> dict[str, Any]:
        body = await read_json(request)
        return body if isinstance(body, dict) else {}

    async def study_page(request: Request) -> Response:
        return FileResponse(static / "study.html", headers=headers)

    async def monitor_page(request: Request) -> Response:
        return FileResponse(static / "monitor.html", headers=headers)

    async def info(request: Request) -> Response:
        return answer(
            {"study": study.description or study.name, "id_parameter": study.id_parameter}
        )

    limit = ArrivalLimit(study.arrivals_per_minute)

    async def arrive(request: Request) -> Response:
        wait = limit.wait(request.client.host if request.client else "")
        if wait:
            seconds = max(1, math.ceil(wait))
            return JSONResponse(
                {
                    "error": f"too many arrivals from your address (at most "
                    f"{limit.per_minute} a minute); try again in {seconds} seconds"
                },
                status_code=429,
                headers={**headers, "Retry-After": str(seconds)},
            )
        body = await read_json(request)
        panel_id = body.get("panel_id", "") if isinstance(body, dict) else ""
        try:
            person = lobby.arrive(panel_id)
        except ConfigError as error:
            return answer({"error": str(error)}, 422)
        return answer({"participant": person.id, "token": person.token})

    async def me(request: Request, person: Participant) -> Response:
        return answer(state_of(person))

    async def consent(request: Request, person: Participant) -> Response:
        body = await body_of(request)
        lobby.consent(person, body.get("agree") is True)
        return answer(state_of(person))

    async def instructions(request: Request, person: Participant) -> Response:
        lobby.read_instructions(person)
        return answer(state_of(person))

    async def quiz(request: Request, person: Participant) -> Response:
        body = await body_of(request)
        lobby.answer_quiz(person, body.get("answers"))
        return answer(state_of(person))

    async def leave(request: Request, person: Participant) -> Response:
        lobby.leave(person)
        return answer(state_of(person))

    async def monitor(request: Request, _: None) -> Response:
        return answer(lobby.monitor())

    async def control(request: Request, _: None) -> Response:
        body = await body_of(request)
        if isinstance(body.get("paused"), bool):
            lobby.paused = body["paused"]
        if body.get("end") is True:
            lobby.ended = True
        return answer(lobby.monitor())

    async def export(request: Request, _: None) -> Response:
        return Response(lobby.csv_text(), media_type="text/csv", headers=headers)

    def state_of(person: Participant) -> dict[str, Any]:
        opening = person.stage == "playing" and person.game is None  # its game being opened
        state: dict[str, Any] = {
            "participant": person.id,
            "study": study.description or study.name,
            "stage": "starting" if opening else person.stage,
            "games": study.games,
            "games_played": len(person.games),
        }
        if person.stage == "consent":
            state["page"] = pages.get("consent", "<p>Do you agree to take part?</p>")
        elif person.stage == "instructions":
            state["page"] = pages.get("instructions", "<p>You will play a game.</p>")
        elif person.stage == "quiz":
            state["quiz"] = [
                {"question": q.question, "choices": list(q.choices)} for q in study.quiz
            ]
            state["wrong"] = person.quiz_wrong
            state["attempts"] = person.quiz_attempts
            state["max_attempts"] = study.max_quiz_attempts
        elif person.stage == "lobby":
            waited = time.monotonic() - (person.waiting_since or time.monotonic())
            state["waited"] = round(waited)
            state["wait_cap"] = study.wait_seconds
            state["paused"] = lobby.paused
        elif person.stage == "playing" and person.game is not None:
            session, seat = person.game
            state["seat"] = {"session": session.id, "seat": seat, "token": session.tokens[seat]}
        elif person.stage in ("done", "dropped"):
            state["reason"] = person.left
            state["payment"] = person.payment
            state["currency"] = study.payment.currency
            state["points"] = round(person.points, 2)
            if person.stage == "done":
                state["code"] = study.code
                state["redirect"] = study.redirect
        return state

    return [
        Route("/study", study_page),
        Route("/monitor", monitor_page),
        Route("/api/study/info", info),
        Route("/api/study/arrive", arrive, methods=["POST"]),
        Route("/api/study/me", guarded(me)),
        Route("/api/study/consent", guarded(consent), methods=["POST"]),
        Route("/api/study/instructions", guarded(instructions), methods=["POST"]),
        Route("/api/study/quiz", guarded(quiz), methods=["POST"]),
        Route("/api/study/leave", guarded(leave), methods=["POST"]),
        Route("/api/study/monitor", guarded(monitor, host=True)),
        Route("/api/study/monitor", guarded(control, host=True), methods=["POST"]),
        Route("/api/study/export", guarded(export, host=True)),
    ]


__all__ = ["ArrivalLimit", "page_html", "study_routes"]
