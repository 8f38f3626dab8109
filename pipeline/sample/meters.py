"""The demo cluster's own meters (``costledger sample``): what its serving engines and its GPUs would have reported,
one sample an hour, written month by month in each format the ledger reads.

Two hosts serve ``k3-b200-01``: the owned server ``b200-node-01`` around the clock, and the on-demand burst node
``b200-burst-01`` in its charges' hours (a fresh machine each day: its counters start again at 0). Each runs one vLLM
engine, whose token counters count the self-hosted requests it served (the burst node serves every other request of
its hours), and eight B200 GPUs under NVIDIA's DCGM exporter: the graphics engine's active share follows the host's
load, the power draw follows the active share, and the energy counter adds up the power. The engine metrics carry
the ``cluster`` label a scrape configuration adds; the GPU metrics carry only the exporter's own labels, so
costledger.toml maps their ``Hostname`` to the cluster ([[metrics_clusters]]).

Planted: on 2026-08-12 at 03:30 the owned server rebooted (its engine's and its GPUs' counters start again at 0:
what they counted since the 03:00 sample is lost); and on 2026-09-15 from 09:00 to 17:00 the log shipper lost two
of every three of the owned server's request records, so its engine counted three times the tokens its log holds,
which the engine reconciliation flags. Every value comes from a generator of its own (the requests' generator is
never drawn from), so the metrics leave every other file of the sample as it was.
"""

from __future__ import annotations

import gzip
import json
import random
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pipeline.sample.world import CLUSTER, write_csv

OWNED, BURST = "b200-node-01", "b200-burst-01"
GPUS = 8
#: What one node serves (tokens per second) at full load: the baseline sweep's point within the SLO
NODE_TOKENS_PER_SECOND = 7600
REBOOT = datetime(2026, 8, 12, 3, 30)
LOST_LOGS = (datetime(2026, 9, 15, 9, 0), datetime(2026, 9, 15, 17, 0))
#: Each month's format, in turn: a query_range response, text exposition, the long CSV, a gzipped response
FORMATS = ("json", "prom.gz", "csv.gz", "json.gz")
ENGINE_HELP = {
    "vllm:prompt_tokens_total": ("counter", "Number of prefill tokens processed."),
    "vllm:generation_tokens_total": ("counter", "Number of generation tokens processed."),
    "vllm:num_requests_waiting": ("gauge", "Number of requests waiting to be processed."),
    "vllm:prefix_cache_queries_total": ("counter", "Prefix cache queries, in terms of number of queried tokens."),
    "vllm:prefix_cache_hits_total": ("counter", "Prefix cache hits, in terms of number of cached tokens."),
    "vllm:request_prefill_time_seconds_sum": ("histogram", "Histogram of time spent in PREFILL phase for request."),
    "vllm:request_decode_time_seconds_sum": ("histogram", "Histogram of time spent in DECODE phase for request."),
}
#: each engine counter and the cell of an hour's tokens it counts: prompt, generation, prompt tokens found cached,
#: milliseconds in the prefill and in the decode phase (the histograms' sums, written in seconds)
COUNTED = (
    ("vllm:prompt_tokens_total", 0),
    ("vllm:generation_tokens_total", 1),
    ("vllm:prefix_cache_queries_total", 0),
    ("vllm:prefix_cache_hits_total", 2),
    ("vllm:request_prefill_time_seconds_sum", 3),
    ("vllm:request_decode_time_seconds_sum", 4),
)
#: a request's prefill reads 8 uncached prompt tokens a millisecond; its decode writes one token every 25 ms
PREFILL_TOKENS_PER_MS, DECODE_MS_PER_TOKEN = 8, 25
GPU_HELP = {
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": ("gauge", "Ratio of time the graphics engine is active."),
    "DCGM_FI_DEV_POWER_USAGE": ("gauge", "Power draw (in W)."),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": ("counter", "Total energy consumption since boot (in mJ)."),
}


@dataclass
class Series:
    labels: dict[str, str]
    samples: list[tuple[datetime, str]] = field(default_factory=list)


@dataclass
class Meters:
    """The counters' running totals, carried from month to month."""

    rng: random.Random = field(default_factory=lambda: random.Random(5))
    totals: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    uuids: dict[tuple[str, int], str] = field(default_factory=dict)
    previous: dict[tuple[str, datetime], list[int]] = field(default_factory=dict)
    """The month before's tokens by host and hour (its last hour is counted at the month's first sample)."""

    def gpu_labels(self, host: str, gpu: int) -> dict[str, str]:
        if (host, gpu) not in self.uuids:
            self.uuids[(host, gpu)] = f"GPU-{uuid.UUID(int=self.rng.getrandbits(128))}"
        bus = f"00000000:{0x18 + 0x11 * gpu:02X}:00.0"
        return {"gpu": str(gpu), "UUID": self.uuids[(host, gpu)], "pci_bus_id": bus, "device": f"nvidia{gpu}",
                "modelName": "NVIDIA B200", "Hostname": host, "DCGM_FI_DRIVER_VERSION": "570.124.06"}  # fmt: skip


def _hours(host: str, m: datetime, nm: datetime, windows: list[tuple[datetime, datetime]]) -> list[datetime]:
    """The instants a host is sampled in the month: every hour for the owned server, each charge's hours (its start
    to its end, both ends) for the burst node."""
    if host == OWNED:
        return [m + timedelta(hours=h) for h in range(int((nm - m).total_seconds() // 3600))]
    return [a + timedelta(hours=h) for a, b in windows if m <= a < nm for h in range((b - a).seconds // 3600 + 1)]


def _tokens(requests: list[dict], windows: list[tuple[datetime, datetime]]) -> dict[tuple[str, datetime], list[int]]:
    """(host, hour) -> [prompt, generation, cache-hit prompt] tokens of the self-hosted requests started in it and the
    milliseconds they spent in prefill and in decode (the engine's count: the lost logs' hours count three times what
    is logged)."""
    out: dict[tuple[str, datetime], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    hosted = [r for r in requests if r["route"] == "self_hosted"]
    for i, r in enumerate(hosted):
        t = r["started_at"]
        burst = i % 2 == 0 and any(a <= t < b for a, b in windows)
        hour = t.replace(minute=0, second=0, microsecond=0)
        times = 3 if not burst and LOST_LOGS[0] <= t < LOST_LOGS[1] else 1
        cell = out[(BURST if burst else OWNED, hour)]
        cell[0] += times * (r["cache_hit_input_tokens"] + r["cache_miss_input_tokens"])
        cell[1] += times * (r["output_tokens"] + r["reasoning_tokens"])
        cell[2] += times * r["cache_hit_input_tokens"]
        cell[3] += times * (r["cache_miss_input_tokens"] // PREFILL_TOKENS_PER_MS)
        cell[4] += times * (r["output_tokens"] + r["reasoning_tokens"]) * DECODE_MS_PER_TOKEN
    return out


def _engine(meters: Meters, hours: list[datetime], host: str, tokens: dict) -> list[Series]:
    labels = {"cluster": CLUSTER, "engine": "0", "instance": f"{host}:8000", "job": "vllm", "model_name": "kimi-k3"}
    series = {name: Series({"__name__": name, **labels}) for name in ENGINE_HELP}
    for t in hours:
        fresh = (host == BURST and (t - timedelta(hours=1)) not in hours) or t == REBOOT + timedelta(minutes=30)
        for name, k in COUNTED:
            key = (host, name)
            before = tokens.get((host, t - timedelta(hours=1)), [0, 0, 0, 0, 0])[k]
            if fresh:  # restarted: what it counted before the restart is gone; since, half the hour's (the reboot)
                meters.totals[key] = before // 2 if host == OWNED else 0
            else:
                meters.totals[key] += before
            total = meters.totals[key]
            series[name].samples.append((t, f"{total / 1000:.3f}" if k >= 3 else str(total)))
        series["vllm:num_requests_waiting"].samples.append((t, "0"))
    return list(series.values())


def _gpus(meters: Meters, hours: list[datetime], host: str, tokens: dict) -> list[Series]:
    out: list[Series] = []
    for gpu in range(GPUS):
        labels = meters.gpu_labels(host, gpu)
        active, power, energy = (Series({"__name__": name, **labels}) for name in GPU_HELP)
        key = (host, f"energy{gpu}")
        for t in hours:
            load = sum(tokens.get((host, t), [0, 0, 0, 0, 0])[:2]) / (NODE_TOKENS_PER_SECOND * 3600)
            share = max(0.02, min(0.97, 0.08 + 0.9 * load + meters.rng.uniform(-0.03, 0.03)))
            watts = round(190 + 810 * share + meters.rng.uniform(-5, 5), 3)
            if host == BURST and (t - timedelta(hours=1)) not in hours:
                meters.totals[key] = 0  # a fresh machine: its driver loaded at the hour
            elif t == REBOOT + timedelta(minutes=30):
                meters.totals[key] = 190 * 1800 * 1000  # half an hour at idle since the reboot
            active.samples.append((t, f"{share:.4f}"))
            power.samples.append((t, f"{watts:.3f}"))
            energy.samples.append((t, str(meters.totals[key])))
            meters.totals[key] += int(watts * 3600 * 1000)  # mJ drawn until the next hour, at this hour's power
        out += [active, power, energy]
    return out


def _labels_text(labels: dict[str, str]) -> str:
    return ",".join(f'{k}="{v}"' for k, v in labels.items() if k != "__name__")


def _unix(t: datetime) -> int:
    return int(t.replace(tzinfo=timezone.utc).timestamp())


def _write(path: Path, series: list[Series], fmt: str, helps: dict[str, tuple[str, str]]) -> int:
    """``series`` written to ``path`` (its suffix added) in ``fmt``; returns the samples written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt.startswith("json"):
        doc = {"status": "success", "data": {"resultType": "matrix", "result": [
            {"metric": s.labels, "values": [[_unix(t), v] for t, v in s.samples]} for s in series]}}  # fmt: skip
        data = json.dumps(doc, separators=(",", ":")).encode()
    elif fmt.startswith("prom"):
        lines: list[str] = []
        for name, (kind, text) in helps.items():
            family = name.removesuffix("_sum") if kind == "histogram" else name  # a histogram's family, as exported
            lines += [f"# HELP {family} {text}", f"# TYPE {family} {kind}"]
            lines += [f"{name}{{{_labels_text(s.labels)}}} {v} {_unix(t) * 1000}"
                      for s in series if s.labels["__name__"] == name for t, v in s.samples]  # fmt: skip
        data = ("\n".join(lines) + "\n").encode()
    else:
        rows = [{"timestamp": f"{t:%Y-%m-%dT%H:%M:%SZ}", "cluster_id": CLUSTER, "metric": s.labels["__name__"],
                 "labels": ",".join(f'{k}="{s.labels[k]}"' for k in sorted(s.labels) if k not in ("__name__",
                                                                                                "cluster")),
                 "value": v} for s in series for t, v in s.samples]  # fmt: skip
        plain = path.with_name(path.name + ".csv")
        write_csv(plain, rows, ["timestamp", "cluster_id", "metric", "labels", "value"])
        data = plain.read_bytes()
        plain.unlink()
    target = path.with_name(f"{path.name}.{fmt}")
    target.write_bytes(gzip.compress(data, mtime=0) if fmt.endswith(".gz") else data)
    return sum(len(s.samples) for s in series)


def write_meters(
    meters: Meters, out: Path, i: int, month: tuple[datetime, datetime], requests: list[dict], charges: list[dict]
) -> tuple[int, int]:
    """The month's engine and GPU metrics files; returns (engine samples, GPU samples)."""
    m, nm = month
    windows = [(_naive(c["charge_start"]), _naive(c["charge_end"])) for c in charges]
    tokens = {**meters.previous, **_tokens(requests, windows)}
    meters.previous = tokens
    engine: list[Series] = []
    gpus: list[Series] = []
    for host in (OWNED, BURST):
        hours = _hours(host, m, nm, windows)
        engine += _engine(meters, hours, host, tokens)
        gpus += _gpus(meters, hours, host, tokens)
    fmt = FORMATS[i % len(FORMATS)]
    return (
        _write(out / "engine-metrics" / f"vllm-{m:%Y-%m}", engine, fmt, ENGINE_HELP),
        _write(out / "gpu-metrics" / f"dcgm-{m:%Y-%m}", gpus, fmt, GPU_HELP),
    )


def _naive(iso_text: str) -> datetime:
    return datetime.fromisoformat(iso_text.replace("Z", "+00:00")).replace(tzinfo=None)
