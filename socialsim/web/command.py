"""``socialsim serve [--host 127.0.0.1] [--port 8000] [--public] [--idle-timeout SECONDS]``:
the browser front end.

A person who makes no move for ``--idle-timeout`` seconds (default 900; 0 waits for ever) ends
the session: its game is logged as a failed episode whose error names the seat, every page
says so, and a restarted server does not resume it. (No fallback move is played for a person:
a move nobody made would read as theirs in the analysis.)

Binds to the loopback address unless ``--public`` is given (then it warns: anyone who can reach
the port and holds a link can play that seat). Needs the ``web`` extra
(``pip install -e ".[web]"``).
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

from socialsim.config import ConfigError


def add_serve_command(sub) -> None:
    serve = sub.add_parser("serve", help="play games with people in the browser")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--public", action="store_true", help="allow binding to a non-loopback address"
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
    serve.set_defaults(func=cmd_serve)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    if not is_loopback(args.host) and not args.public:
        raise ConfigError(
            f"--host {args.host}: not a loopback address; add --public to serve other machines"
        )
    try:
        import uvicorn

        from socialsim.web.app import MAX_BODY, create_app
        from socialsim.web.sessions import IDLE_TIMEOUT, new_token
    except ModuleNotFoundError as error:
        raise ConfigError(
            f"serve: {error.name} is not installed; pip install -e '.[web]'"
        ) from None
    if args.public:
        print(
            f"socialsim: warning: serving on {args.host}, reachable from other machines; "
            "anyone holding a link plays that seat",
            file=sys.stderr,
        )
    if args.idle_timeout is not None and not args.idle_timeout >= 0:
        raise ConfigError(f"--idle-timeout: seconds >= 0 (0: never), got {args.idle_timeout}")
    idle = IDLE_TIMEOUT if args.idle_timeout is None else args.idle_timeout
    host_token = new_token()
    app = create_app(Path(args.results), host_token, idle_timeout=idle)
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    print(f"socialsim: host page http://{shown}:{args.port}/#host={host_token}", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", ws_max_size=MAX_BODY)
    return 0
