"""``socialsim serve [--host 127.0.0.1] [--port 8000] [--public] [--url URL] [--certfile PEM
--keyfile PEM] [--offer FILE ...] [--idle-timeout SECONDS] [--study STUDY.toml]``: the browser
front end.

With ``--study`` it also runs a human study (:mod:`socialsim.study`, :mod:`socialsim.web.lobby`)
and prints its public link, the experimenter's monitor link (a token of its own) and where the
export goes; the study's games log under ``--results/STUDY_NAME/games/``, and the study's own
``idle_seconds`` hands a silent person's seat to its filler (``--idle-timeout`` is for the host's
games).

A person who makes no move for ``--idle-timeout`` seconds (default 900; 0 waits for ever) ends
the session: its game is logged as a failed episode whose error names the seat, every page
says so, and a restarted server does not resume it. (No fallback move is played for a person:
a move nobody made would read as theirs in the analysis.)

Binds to the loopback address unless ``--public`` is given (then it warns: anyone who can reach
the port and holds a link can play that seat). The links name ``--url`` (the address people
reach, e.g. ``https://host.example:8443``), else the address the host's browser used. With
``--certfile`` and ``--keyfile`` it serves HTTPS itself; without them it serves plain HTTP, and
served to other machines it must sit behind a TLS proxy (a link is a seat's key). ``--offer``
adds the operator's own experiment files to the host's choice: unlike an upload, they may name
models, servers and key variables. Ctrl-C, SIGTERM or SIGHUP (a closed terminal; not under
``nohup``) stops it (each game at its next step, nothing of it logged) and says how many
sessions are logged and how to resume the unfinished ones; a session that can no longer be read
is named on stderr and skipped.

One server per ``--results`` directory: it holds the same lock as ``socialsim run``
(:mod:`socialsim.directory_lock`), so a second server there, which would resume the same games,
exits 2 naming the holder's pid. How it listens (connection cap, head and idle timeouts, a log
that stays short under a flood): :mod:`socialsim.web.server`. Needs the ``web`` extra
(``pip install -e ".[web]"``).
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import signal
import sys
from pathlib import Path
from urllib.parse import urlsplit

from socialsim import directory_lock
from socialsim.config import ConfigError


def add_serve_command(sub) -> None:
    serve = sub.add_parser("serve", help="play games with people in the browser")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--public", action="store_true", help="allow binding to a non-loopback address"
    )
    serve.add_argument(
        "--url",
        help="the address people reach, named in the links (e.g. https://host.example:8443; "
        "default: the address the host's browser used)",
    )
    serve.add_argument("--certfile", help="serve HTTPS with this certificate (PEM)")
    serve.add_argument("--keyfile", help="the certificate's private key (PEM)")
    serve.add_argument(
        "--offer",
        action="append",
        default=[],
        metavar="FILE",
        help="also offer this experiment file to the host (yours: it may name models and servers)",
    )
    serve.add_argument(
        "--results", default="results/web", help="where each session logs (default results/web)"
    )
    serve.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="a person who makes no move for this long ends the session, logged as a failed "
        "episode naming the seat and never resumed (default 900; 0: wait for ever)",
    )
    serve.add_argument(
        "--study",
        metavar="STUDY.toml",
        help="run a human study: one public link, consent, quiz, a lobby forming games, "
        "payments and an export (socialsim.study)",
    )
    serve.set_defaults(func=cmd_serve)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def public_url(url: str) -> str:
    """``url`` without a trailing slash, if it is ``http(s)://HOST[:PORT]``."""
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--url: http(s)://HOST[:PORT], got {url!r}")
    if parts.path.strip("/") or parts.query or parts.fragment:
        raise ConfigError(f"--url: the server's root, with no path, got {url!r}")
    return f"{parts.scheme}://{parts.netloc}"


def _sessions(count: int) -> str:
    return f"{count} session{'' if count == 1 else 's'}"


def cmd_serve(args: argparse.Namespace) -> int:
    if not is_loopback(args.host) and not args.public:
        raise ConfigError(
            f"--host {args.host}: not a loopback address; add --public to serve other machines"
        )
    if bool(args.certfile) != bool(args.keyfile):
        raise ConfigError("--certfile and --keyfile: give both (the certificate and its key)")
    for option, path in (("--certfile", args.certfile), ("--keyfile", args.keyfile)):
        if path and not Path(path).is_file():
            raise ConfigError(f"{option}: no file {path!r}")
    if args.idle_timeout is not None and not args.idle_timeout >= 0:
        raise ConfigError(f"--idle-timeout: seconds >= 0 (0: never), got {args.idle_timeout}")
    url = public_url(args.url) if args.url else None
    study = None
    if args.study:
        from socialsim import study as study_module

        try:
            study = study_module.load(args.study)
        except ConfigError as error:
            raise ConfigError(f"--study {args.study}: {error}") from None
    try:
        import uvicorn

        from socialsim.web.sessions import IDLE_TIMEOUT, new_token
    except ModuleNotFoundError as error:
        raise ConfigError(
            f"serve: {error.name} is not installed; pip install -e '.[web]'"
        ) from None
    scheme = "https" if args.certfile else "http"
    if args.public:
        print(
            f"socialsim: warning: serving on {args.host}, reachable from other machines; "
            "anyone holding a link plays that seat",
            file=sys.stderr,
        )
        if not args.certfile:
            print(
                "socialsim: warning: plain HTTP: a link (a seat's key) crosses the network "
                "readable; give --certfile and --keyfile, or put the server behind a TLS proxy "
                "and name its address with --url https://...",
                file=sys.stderr,
            )
    idle = IDLE_TIMEOUT if args.idle_timeout is None else args.idle_timeout
    host_token = new_token()
    results = Path(args.results)
    held = contextlib.ExitStack()
    try:  # one server per results directory, as one run: a second would resume the same games
        held.enter_context(directory_lock.hold(results))
    except ConfigError as error:
        raise ConfigError(str(error).replace("--out ", "--results ", 1)) from None
    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, _terminated)}
    hangup = getattr(signal, "SIGHUP", None)
    if hangup is not None and signal.getsignal(hangup) is signal.SIG_DFL:  # not under nohup
        previous[hangup] = signal.signal(hangup, _hung_up)
    with held:
        try:
            _serve(args, results, host_token, idle, url, scheme, uvicorn, study)
        except (KeyboardInterrupt, _Terminated):
            pass
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        _summary(args, results)
    return 0


class _Terminated(Exception):
    """SIGTERM, raised once uvicorn has stopped: ``serve`` ends as on Ctrl-C."""


def _terminated(signum, frame) -> None:
    raise _Terminated


def _hung_up(signum, frame) -> None:
    """SIGHUP (a closed terminal) is SIGTERM here: uvicorn, which handles SIGTERM while it
    serves, stops as on it, and so does ``serve`` (before uvicorn starts and after it ends)."""
    signal.raise_signal(signal.SIGTERM)


def _serve(
    args, results: Path, host_token: str, idle: float, url, scheme: str, uvicorn, study=None
) -> None:
    from socialsim.web import server
    from socialsim.web.app import MAX_BODY, create_app
    from socialsim.web.sessions import new_token

    try:
        monitor = new_token()
        app = create_app(
            results,
            host_token,
            idle_timeout=idle,
            url=url,
            offered=args.offer,
            study=study,
            monitor_token=monitor,
        )
    except ConfigError as error:  # only the offered files and the study's experiments are read
        raise ConfigError(f"{'--study' if study else '--offer'}: {error}") from None
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    base = url or f"{scheme}://{shown}:{args.port}"
    if study is not None:
        print(
            f"socialsim: the study's public link {base}/study?{study.id_parameter}=ID "
            f"(the panel puts each person's id for ID)",
            flush=True,
        )
        print(f"socialsim: monitor {base}/monitor#monitor={monitor}", flush=True)
        print(f"socialsim: export {results / study.name / 'participants.csv'}", flush=True)
    print(f"socialsim: host page {base}/#host={host_token}", flush=True)
    if args.public and not url and shown != args.host:
        # a wildcard bind: which of the machine's addresses people reach is not ours to guess
        print(
            f"socialsim: the join links name the address the host page is opened at; {shown} "
            f"works on this machine only: open it at this machine's address (port {args.port}) "
            "or give --url with that address",
            flush=True,
        )
    tls = {"ssl_certfile": args.certfile, "ssl_keyfile": args.keyfile} if args.certfile else {}
    # uvicorn stops on SIGINT or SIGTERM once the open requests end (the sessions' games stop at
    # their next step, logging nothing), then raises the signal again: both end alike
    uvicorn.run(app, host=args.host, port=args.port, **server.options(max_message=MAX_BODY), **tls)


def _summary(args, results: Path) -> None:
    from socialsim.web.sessions import census

    over, unfinished = census(results)
    lines = [
        f"socialsim: stopped; {_sessions(over + unfinished)} logged in {results} "
        f"({over} over, {unfinished} unfinished, every answer given so far kept)"
    ]
    if unfinished:
        lines.append(
            f"socialsim: resume them with: socialsim serve --results {results}"
            f"{''.join(f' --offer {path}' for path in args.offer)} (their seat links keep "
            "working)"
        )
    try:
        print("\n".join(lines), flush=True)
    except OSError:  # SIGHUP: the terminal is gone, and the lines with it
        pass
