"""Text for a terminal: data and file names are shown, never obeyed."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

#: C0 controls but newline, DEL and C1 controls: an escape sequence among them would drive the terminal; and the
#: bidirectional marks, overrides and isolates, which make a file name or a value read as another
_CONTROL = {
    **{c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)] if c != 0x0A},
    **{c: f"\\u{c:04x}" for c in [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]},
}


def printable(text: str) -> str:
    """``text`` with its control and bidirectional characters written as ``\\xNN`` / ``\\uNNNN``: for what reaches
    a terminal."""
    return text.translate(_CONTROL)


#: query parameters whose value is a credential (a webhook's token, a signed URL's signature)
_SECRET_PARAMS = ("token", "key", "secret", "password", "passwd", "sig", "signature", "auth", "credential")


def masked_url(text: str) -> str:
    """``text`` with the credentials of a URL in it masked: the password of ``user:password@`` and the values of
    query parameters that name a credential (``?token=...``), each as ``***``; other text as it is. For every place
    a URL from the settings is printed."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    if "://" not in text:
        return text
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (a port that is no number raises: then the text is not a URL to mend)
    except ValueError:
        return text
    netloc = parts.netloc
    if parts.password is not None:
        netloc = f"{parts.username}:***@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(any(w in k.lower() for w in _SECRET_PARAMS) for k, _ in pairs):
            query = urlencode(
                [(k, "***" if any(w in k.lower() for w in _SECRET_PARAMS) else v) for k, v in pairs], safe="*"
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


# numbers as the report and the commands print them: money rounded once, here, for display


def first_line(exc: BaseException, limit: int = 300) -> str:
    """An error's first line, at most ``limit`` characters (its class's name when it says nothing): what a one-line
    message quotes of an error from a library (py4j, grpc, pyarrow, DuckDB)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:limit]


def usd(value: Decimal | None, places: int = 2) -> str:
    if value is None:
        return "n/a"
    q = Decimal(1).scaleb(-places)
    v = Decimal(value).quantize(q, rounding=ROUND_HALF_UP)
    return f"-${-v:,}" if v < 0 else f"${v:,}"


def pct(value: float | Decimal | None, places: int = 1) -> str:
    return "n/a" if value is None else f"{float(value) * 100:,.{places}f}%"


def count(value: Decimal | int | float | None) -> str:
    if value is None:
        return "n/a"
    return f"{Decimal(str(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP):,}"


def counted(value: Decimal | int | float | None, noun: str, plural: str | None = None) -> str:
    """``value`` as ``count`` shows it with its noun, singular when it shows 1: '1 node', '2 nodes', '1,200 tasks'."""
    shown = count(value)
    return f"{shown} {noun if shown == '1' else plural or noun + 's'}"


def ms(value: int | None) -> str:
    return "n/a" if value is None else f"{value / 1000:,.1f} s"


#: a budget at risk or over as sql/queries/budgets_at_risk.sql gives it (and marts.budget_status names its columns)
BUDGET_COLUMNS = ("month", "team", "route", "status", "spent_usd", "projected_usd", "budget_usd")


def budget_line(budget_row: tuple) -> str:
    """A budget at risk or over, (month, team, route, status, spent, projected, budget), in words: the same sentence on
    the console and in the webhook's text."""
    month, team, route, status, spent, projected, budget = budget_row
    who = "every team" if team == "*" else f"team {team}"
    where = "both routes" if route == "both" else f"the {route} route"
    return (
        f"budget {'over' if status == 'over' else 'at risk'}: {who} on {where} in {month}: spent ${spent:,.2f}, "
        f"projected ${projected:,.2f} of ${budget:,.2f}"
    )
