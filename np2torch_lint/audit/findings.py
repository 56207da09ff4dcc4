"""What the audit saw, added up per rule and site (``Observed``), and what it reports (``AuditFinding``).

A session keeps one ``Observed`` per (rule, site) while the code runs; the rules' ``describe`` turns each into a
finding with its message and counts when the report is read.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

from .sites import Site


@dataclass(slots=True)
class Observed:
    """Everything one rule saw at one site. Which fields mean what is the rule's business (its ``describe``)."""

    code: str
    site: Site
    count: int = 0
    nbytes: int = 0
    seconds: float = 0.0
    largest: int = 0  # the most of something at once: copies kept together (NPT005), arrays in a list (NPT006)
    groups: int = 0  # how many times a run of those started (NPT005)
    calls: Counter = field(default_factory=Counter)  # what was called there, or what it raised
    related: Counter = field(default_factory=Counter)  # (Site, what happened there) -> times: the other end
    through_data_loading: bool = False  # the event came out of a DataLoader's fetch or collate
    tests: set = field(default_factory=set)  # the pytest tests it happened in

    def merge(self, other: Observed) -> None:
        self.count += other.count
        self.nbytes += other.nbytes
        self.seconds += other.seconds
        self.largest = max(self.largest, other.largest)
        self.groups += other.groups
        self.calls.update(other.calls)
        self.related.update(other.related)
        self.through_data_loading = self.through_data_loading or other.through_data_loading
        self.tests.update(other.tests)

    def as_data(self) -> dict[str, object]:
        """Plain data (for DataLoader workers to send theirs back)."""
        return {"code": self.code, "site": self.site.as_dict(), "count": self.count, "nbytes": self.nbytes,
                "seconds": self.seconds, "largest": self.largest, "groups": self.groups, "calls": dict(self.calls),
                "related": [[where.as_dict(), what, times] for (where, what), times in self.related.items()],
                "through_data_loading": self.through_data_loading, "tests": sorted(self.tests)}

    @classmethod
    def from_data(cls, data: dict) -> Observed:
        return cls(str(data["code"]), Site.from_dict(data["site"]), int(data["count"]), int(data["nbytes"]),
                   float(data["seconds"]), int(data["largest"]), int(data["groups"]), Counter(data["calls"]),
                   Counter({(Site.from_dict(where), what): times for where, what, times in data["related"]}),
                   bool(data["through_data_loading"]), set(data["tests"]))


@dataclass(frozen=True)
class AuditFinding:
    """One reported site: a rule's code, where in the user's code, what happened there and how often.

    ``count`` is the rule's own count (copies, reads, errors, tensors; the message says which), ``nbytes`` the
    bytes involved and ``seconds`` the time spent, where the rule measures them. ``static`` says, after
    ``AuditReport.compare()``, whether np2torch-lint reports the same code there (None: not compared, or the file
    could not be read).
    """

    code: str
    message: str
    site: Site
    count: int
    nbytes: int = 0
    seconds: float = 0.0
    properties: dict = field(default_factory=dict, compare=False)  # the rule's details, as JSON-ready data
    static: bool | None = None

    @property
    def filename(self) -> str:
        return self.site.filename

    @property
    def line(self) -> int:
        return self.site.line

    def __str__(self) -> str:
        return f"{self.site}:{self.site.column}: {self.code} {self.message}"


def size(nbytes: float) -> str:
    """``512 B``, ``4.0 KiB``, ``1.5 MiB``: bytes as people read them."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if nbytes < 1024 or unit == "GiB":
            return f"{nbytes:.0f} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    raise AssertionError("unreachable")


def duration(seconds: float) -> str:
    """``850 µs``, ``12.3 ms``, ``1.9 s``."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.1f} s"


def times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


class Recorder:
    """One audit's observations while it runs: (code, site) -> ``Observed``. ``label`` names what is running now
    (a pytest test), kept with each observation; ``serial`` tells the audits of a process apart."""

    _serials = itertools.count(1)

    def __init__(self) -> None:
        self.observed: dict[tuple[str, Site], Observed] = {}
        self.label: str | None = None
        self.serial = next(self._serials)

    def at(self, code: str, site: Site) -> Observed:
        key = (code, site)
        observed = self.observed.get(key)
        if observed is None:
            observed = self.observed.setdefault(key, Observed(code, site))
        if self.label is not None:
            observed.tests.add(self.label)
        return observed

    def merge(self, observed: Observed) -> None:
        self.at(observed.code, observed.site).merge(observed)
