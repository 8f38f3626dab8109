"""The terms the report uses and what each means, for the glossary of every format (HTML, Markdown, text)."""

#: the terms the report uses, for its glossary
GLOSSARY = [
    ("Task", "One piece of business work (an answer, a code change, a ticket). It may take several attempts."),
    ("Attempt", "One request to a model for a task. Failed and retried attempts cost money too."),
    (
        "Accepted task",
        "A task whose final outcome was accepted, within the latency target. Only accepted tasks count as delivered.",
    ),
    ("Latency target (SLO)", "The longest an accepted attempt may take; a slower one does not count as delivered."),
    (
        "Break-even",
        "The number of accepted tasks a month at which running your own cluster costs the same as sending them to "
        "the API.",
    ),
    ("Margin", "How far this month's delivered tasks are above (or below) break-even, as a share of break-even."),
    (
        "Robust / marginal",
        "Robust: no reasonable change to the assumptions the figures rest on turns the verdict. Marginal: one does.",
    ),
    (
        "Fixed cost",
        "What the cluster costs whatever it serves: hardware, reserved and on-demand capacity, operating costs.",
    ),
    ("Operating costs", "Platform engineering, operations, on-call and the like: they stop when the service stops."),
    (
        "Cash view",
        "What a route cost as billed, with credits, tax and human review; break-even leaves credits and tax out.",
    ),
    (
        "Waste factor",
        "What the API spends on failed attempts, retries and rejected tasks for each dollar of delivered work.",
    ),
    ("Invoice uplift", "What the reference provider's invoices add on top of its list prices (fees, surcharges)."),
    (
        "Capacity at the latency target",
        "The tokens per second a node serves while meeting the latency target, from load tests (else from the "
        "request log).",
    ),
    ("Token utilisation", "The tokens the cluster served as a share of what its nodes could have served."),
    ("Node-hour", "One server (node) provisioned for one hour."),
    ("Duty cycle", "How much of its capacity the cluster used: its token utilisation."),
    (
        "Productive utilisation",
        "The share of the capacity bought that went to accepted tasks: the accepted attempts' tokens over what the "
        "provisioned nodes could have served at the latency target.",
    ),
    (
        "Time with any request in flight",
        "The share of provisioned hours with at least one request running. Not a utilisation: one request makes a "
        "cluster that could serve hundreds at once look busy.",
    ),
    (
        "Idle capacity",
        "The part of the fixed cost that bought capacity nothing used: the fixed cost less what went to accepted "
        "and to failed work, in proportion to their tokens.",
    ),
    (
        "Busiest hour",
        "The clock hour of the month with the most tokens started. A cluster cannot be scaled up for an hour (a large "
        "model takes many minutes to load), so it needs nodes for that hour.",
    ),
    ("Peak-to-average", "Tokens in the busiest hour over the average hour: how much capacity a peak needs."),
    ("Cancellable capacity", "On-demand and other charges the team can stop paying for within the month."),
]
