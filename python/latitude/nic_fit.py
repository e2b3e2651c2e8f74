"""Whether a rank's messages in flight at once share its bandwidth (NIC serialization).

LogGP charges every message (s − 1)·G on the wire. Whether two messages a rank has in flight
at the same time each take that long side by side, or one after the other, is a property of
the machine, not of the model: a NIC injects one message at a time, and on one node the
shared-memory copies of one process's messages run one after the other too. The graph's
default prices them side by side (LLAMP's); `nic_serialization = true` in a machine file
chains consecutive sends of a rank by g + (s − 1)·G (docs/model.md).

latitude-calib times one MPI_Isend of s bytes, and two at once, to receives posted
beforehand, each until both ranks know the data arrived (``concurrent`` lines). With t₁ and
t₂ those times, the second message's share

    f(s) = t₂ / t₁ − 1

is about 1 when the messages go one after the other (t₂ = t₁ + (s − 1)·G ≈ 2·t₁ once the
bytes dominate) and about 0 when they go side by side (t₂ = t₁ + o). The median of f over
the sizes measured (64 KiB and up: the bytes dominate there) decides: above one half, the
machine serializes and the machine file says so. Latency left in t₁ only lowers f, so a
serializing network with a long latency can read as "side by side"; the note gives the value.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

SERIAL_AT = 0.5  # f above this: one after the other


@dataclass
class Sharing:
    """What the concurrent sends say: f per size, its median, and the decision."""

    shares: dict = field(default_factory=dict)  # size -> f(s)
    share: float | None = None  # the median over the sizes (None: not measured)
    notes: list = field(default_factory=list)

    @property
    def serialize(self) -> bool:
        return self.share is not None and self.share > SERIAL_AT

    def to_dict(self) -> dict:
        return {
            "nic_serialization": self.serialize,
            "second_message_share": self.share,
            "shares": {str(s): f for s, f in sorted(self.shares.items())},
        }


def sharing(concurrent: dict) -> Sharing:
    """The decision from latitude-calib's ``concurrent`` pairs (size -> (t₁, t₂) in µs)."""
    shares = {s: t2 / t1 - 1 for s, (t1, t2) in concurrent.items() if t1 > 0 and t2 > 0}
    if not shares:
        return Sharing(notes=["concurrent sends not measured: a rank's messages are not chained by their bytes"])
    out = Sharing(shares, statistics.median(shares.values()))
    sizes = ", ".join(f"{s // 1024} KiB {f:+.2f}" for s, f in sorted(shares.items()))
    if out.serialize:
        verdict = "one after the other: nic_serialization = true (each rank's sends chained by g + (s − 1)·G)"
    else:
        verdict = "side by side: a rank's messages are not chained by their bytes (consecutive sends still g apart)"
    out.notes.append(
        f"two messages in flight at once take {1 + out.share:.2f}× one (median of the second's share: {sizes}); {verdict}"
    )
    return out
