"""``costledger pull``: fetch what the ledger reads into the landing folder (the nightly loads it from there)."""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from pipeline.base.errors import CostledgerError, ExitCode
from pipeline.cli import toc
from pipeline.cli.common import Bar, console, error, out
from pipeline.base.text import counted

app = typer.Typer()  # merged into the root app; each command names its help panel
pull_app = typer.Typer(no_args_is_help=True, help=toc.PANELS["Load and build"]["pull"])
app.add_typer(pull_app, name="pull", rich_help_panel=toc.panel("pull"))

_Landing = Annotated[
    Path,
    typer.Option("--landing", help="The landing folder the nightly reads (pages go into its kind folders)."),
]
_Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Only the summary line, not a line per page.")]
_Since = Annotated[
    Optional[str],
    typer.Option(help="Start, UTC: YYYY-MM-DD or an ISO 8601 instant (2026-10-01T00:00:00Z). With --until."),
]
_Until = Annotated[Optional[str], typer.Option(help="End (not included), as --since.")]
_Month = Annotated[Optional[str], typer.Option(help="A whole month, YYYY-MM (instead of --since and --until).")]
_Timeout = Annotated[
    float,
    typer.Option(
        help="The longest one request may take, from connecting to the answer's last byte (seconds); a request "
        "past it is asked again.",
        min=1,
        max=3600,
    ),
]


def _instant(text: str, flag: str) -> datetime:
    try:
        t = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        t = t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise CostledgerError(f"{flag} {text!r} is not a date or an ISO 8601 instant (2026-10-01T00:00:00Z)") from None
    return t


#: the years a pull asks for: from the Unix epoch, which every API's timestamps count from, to a year whose end a
#: date can still hold
_YEARS = (1970, 9998)


def _window(since: str | None, until: str | None, month: str | None) -> tuple[datetime, datetime]:
    if month is not None:
        if since or until:
            raise CostledgerError("give --month, or --since and --until, not both")
        if not re.fullmatch(r"\d{4}-\d{2}", month.strip()) or not 1 <= int(month[5:7]) <= 12:
            raise CostledgerError(f"--month {month!r} is not YYYY-MM")
        if not _YEARS[0] <= int(month[:4]) <= _YEARS[1]:
            raise CostledgerError(f"--month {month!r} is outside the years {_YEARS[0]} to {_YEARS[1]}")
        first = datetime(int(month[:4]), int(month[5:7]), 1, tzinfo=timezone.utc)
        return first, (first + timedelta(days=32)).replace(day=1)
    if not since or not until:
        raise CostledgerError("give --since and --until (or --month)")
    window = _instant(since, "--since"), _instant(until, "--until")
    for t, flag in zip(window, ("--since", "--until")):
        if not _YEARS[0] <= t.year <= _YEARS[1]:
            raise CostledgerError(f"{flag} {t.date().isoformat()} is outside the years {_YEARS[0]} to {_YEARS[1]}")
    return window


def _step(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([smh]?)\s*", text)
    if not m or int(m.group(1)) == 0:
        raise CostledgerError(f"--step {text!r} is not a positive duration (60, 60s, 5m, 1h)")
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def _settled(window: tuple[datetime, datetime], whole_days: bool) -> tuple[datetime, datetime]:
    """The window up to what is over (``pipeline.pull.landing.settled``), saying so when it was cut."""
    from pipeline.pull.landing import settled

    cut = settled(window, datetime.now(timezone.utc), whole_days)
    if cut[1] < window[1]:
        console.print(
            f"the window ends after what is over: pulling up to {cut[1]:%Y-%m-%dT%H:%M:%SZ} (a page is pulled once "
            "and not asked again; pull the rest once it is over)",
            highlight=False,
        )
    return cut


def _usage(exc: CostledgerError) -> typer.Exit:
    error(str(exc))
    return typer.Exit(ExitCode.USAGE)


class _Pages(Bar):
    """What a pull says as it goes: a line per page (unless --quiet) and, on a terminal, a bar of the pages done."""

    def __init__(self, total: int | None, quiet: bool, what: str) -> None:
        super().__init__(True)
        self.quiet = quiet
        if self.bar:
            self.task = self.bar.add_task(what, total=total)

    def done(self, path: Path, state: str, what: str) -> None:
        if self.bar:
            self.bar.advance(self.task)
        if not self.quiet:
            said = {"written": f"written, {what}", "present": "there already: not asked again", "empty": what}[state]
            console.print(f"  {escape(str(path))}: {said}", highlight=False)


def _retrying(line: str) -> None:
    console.print(f"  {escape(line)}", highlight=False)


def _page_said(p) -> str:  # noqa: ANN001 - a Pulled page
    return f"{p.count:,} buckets" if p.state == "written" else "no buckets: nothing written"


def _chunk_said(c) -> str:  # noqa: ANN001 - a Pulled chunk
    return f"{c.count:,} series, {c.samples:,} samples" if c.state == "written" else "no series in this range"


@pull_app.command("prometheus")
def pull_prometheus(
    url: Annotated[str, typer.Option(help="The Prometheus server, e.g. http://prometheus:9090.", show_default=False)],
    *,
    since: _Since = None,
    until: _Until = None,
    month: _Month = None,
    step: Annotated[str, typer.Option(help="Time between samples: 60, 60s, 5m, 1h.")] = "60s",
    points_per_query: Annotated[
        int,
        typer.Option(help="Instants a query asks for (Prometheus answers at most 11,000 a series).", min=1, max=11_000),
    ] = 10_000,
    landing: _Landing = Path("landing"),
    timeout: _Timeout = 60.0,
    quiet: _Quiet = False,
) -> None:
    """The engine and GPU metrics the ledger reads, from a Prometheus server's query_range API.

    One file per chunk of the range into LANDING/engine-metrics and LANDING/gpu-metrics, each a query of at most
    --points-per-query instants; an instant a chunk in the landing folder holds already (the same step) is not asked
    again. Authentication from the environment: COSTLEDGER_PROMETHEUS_TOKEN (a bearer token), or
    COSTLEDGER_PROMETHEUS_USER and COSTLEDGER_PROMETHEUS_PASSWORD (or user:password@ in --url); a redirect is followed
    only to the same scheme, host and port.

    Example: costledger pull prometheus --url http://prometheus:9090 --month 2026-10 --step 60s
    """
    from pipeline.pull.http import Client, PullError
    from pipeline.pull.prometheus import auth_headers, plan, pull_range

    try:
        window, step_s = _window(since, until, month), _step(step)
    except CostledgerError as exc:
        raise _usage(exc) from None
    client = Client(headers=auth_headers(os.environ), timeout_s=timeout, on_retry=_retrying)
    try:
        window = _settled(window, whole_days=False)
        queries = plan(landing, window, step_s, points_per_query)
        with _Pages(sum(map(len, queries.values())), quiet, "pulling chunks") as pages:
            done = pull_range(client, url, landing, queries, step_s=step_s,
                              on_chunk=lambda c: pages.done(c.path, c.state, _chunk_said(c)))  # fmt: skip
    except PullError as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    written = [c for c in done if c.state == "written"]
    asked = sum(int((b - a).total_seconds()) // step_s + 1 for spans in queries.values() for a, b in spans)
    total = len(queries) * -(-int((window[1] - window[0]).total_seconds()) // step_s)
    out.print(
        f"pulled {len(written)} of {len(done)} chunks ({sum(c.samples for c in written):,} samples) into "
        f"{escape(str(landing))}; {total - asked:,} of the range's {total:,} instants (both kinds) were held by chunks "
        f"pulled before, not asked again. Next: costledger nightly {escape(str(landing))}",
        highlight=False,
    )


def _provider(provider: str, *, since: str | None, until: str | None, month: str | None, base_url: str | None,
              landing: Path, timeout: float, quiet: bool) -> None:  # fmt: skip
    from pipeline.pull.http import Client, PullError
    from pipeline.pull.providers import ANTHROPIC_URL, KEY_ENV, OPENAI_URL, headers, pull_pages

    try:
        window = _window(since, until, month)
    except CostledgerError as exc:
        raise _usage(exc) from None
    key = os.environ.get(KEY_ENV[provider])
    if not key:
        error(f"set {KEY_ENV[provider]} to the organisation's admin key (the usage and cost endpoints need one)")
        raise typer.Exit(ExitCode.USAGE)
    client = Client(headers=headers(provider, key), timeout_s=timeout, on_retry=_retrying)
    base = base_url or (OPENAI_URL if provider == "openai" else ANTHROPIC_URL)
    try:
        window = _settled(window, whole_days=True)
        with _Pages(None, quiet, f"pulling {provider}'s pages") as pages:
            done = pull_pages(client, provider, base, landing, window,
                              lambda p: pages.done(p.path, p.state, _page_said(p)))  # fmt: skip
    except PullError as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    written = sum(p.state == "written" for p in done)
    out.print(
        f"pulled {counted(written, 'new page')} of {provider}'s costs and usage into "
        f"{escape(str(landing))}; {sum(p.state == 'present' for p in done)} there already. Next: costledger nightly "
        f"{escape(str(landing))}",
        highlight=False,
    )


_BaseUrl = Annotated[Optional[str], typer.Option(help="The API's address (default: the provider's own).")]


#: each provider's pull command: what it fetches (the first line of its help)
_PROVIDER_HELP = {
    "openai": "OpenAI's organisation costs and completions usage, daily buckets, every page, with OPENAI_ADMIN_KEY.",
    "anthropic": "Anthropic's organisation cost report and messages usage report, every page, with "
    "ANTHROPIC_ADMIN_KEY.",
}


def _provider_command(provider: str) -> None:
    """``pull PROVIDER``: the same options for each provider, its own help."""

    def command(
        *,
        since: _Since = None,
        until: _Until = None,
        month: _Month = None,
        base_url: _BaseUrl = None,
        landing: _Landing = Path("landing"),
        timeout: _Timeout = 60.0,
        quiet: _Quiet = False,
    ) -> None:
        _provider(provider, since=since, until=until, month=month, base_url=base_url, landing=landing,
                  timeout=timeout, quiet=quiet)  # fmt: skip

    command.__doc__ = (
        f"{_PROVIDER_HELP[provider]}\n\n    Costs into LANDING/invoices, usage into LANDING/usage, each page as the"
        " provider sent it; a page already there is not asked again, a provider that names a page twice is stopped, and"
        " a redirect is followed only to the same scheme, host and port (the key goes nowhere else)."
        f"\n\n    Example: costledger pull {provider} --month 2026-10\n    "
    )
    pull_app.command(provider)(command)


for _name in _PROVIDER_HELP:
    _provider_command(_name)
