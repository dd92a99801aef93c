"""`python -m workers.mailin --host H --port P` (Procfile `mailin`): the SMTP listener for
orders by email (`service.channels.inbound.smtpd`), settings from the environment
(`KONTOR_REDIS_URL`, `KONTOR_QUEUE_URL`, `KONTOR_MAIL_DOMAIN`, ...), until SIGINT or SIGTERM.
Settings it cannot run on (a cluster store without a queue URL) stop it at once with one
sentence and exit status 2."""

from __future__ import annotations

import argparse

from service.channels.inbound.smtpd import main as serve
from service.config import settings_for


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m workers.mailin",
                                     description="The SMTP listener for orders by email.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8025)
    args = parser.parse_args(argv)
    settings_for("mail-in")
    serve(args.host, args.port)


if __name__ == "__main__":
    main()
