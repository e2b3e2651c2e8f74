"""Type stubs of `latitude._core`, the Rust core's binding (crates/latitude-py).

Thin on purpose: a graph handle, loaders, and calls returning plain dicts and numpy arrays;
`latitude.graph` builds the user-facing objects. Times are ns (G, O in ns per byte). Every
pricing call takes one `Config` (latitude.params.Params.to_core): the named parameters
(L, o, g, G, O first, then the machine's), their values, the model options and the machine;
`param` arguments index its names. Exact values are (numerator, denominator) in ticks of
10⁻⁹ ns.
tests/test_core_stubs.py checks that these names match the built module.
"""

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

NPARAM: int
MAXP: int
PARAM_NAMES: list[str]

Progress = Callable[[int, int], object]

class LatitudeError(Exception):
    """An error Latitude reports as one line, without a traceback."""

class InputError(LatitudeError):
    """Bad user input, shown as `where: what`."""

    where: str | None
    what: str
    def __new__(cls, where: str | None, what: str | None = ...) -> InputError: ...
    def __init__(self, *args: object, **kwargs: object) -> None: ...

class Machine:
    """A machine (topology, placement, intra-node and per-pair costs) built from the dict
    `latitude.machine.Machine.core_spec` makes of a machine file."""

    def __new__(cls, spec: dict[str, Any]) -> Machine: ...
    def node_route(self, a: int, b: int) -> list[int]: ...
    def nodes(self) -> int | None: ...

class Config:
    """The typed parameter object: named parameter values (ns), model options, machine."""

    def __new__(
        cls,
        names: Sequence[str],
        values: Sequence[float],
        protocol: str = "handshake",
        eager_limit: int = 262144,
        nic_serialization: bool = False,
        machine: Machine | None = None,
    ) -> Config: ...
    def index(self, name: str) -> int: ...
    @property
    def names(self) -> list[str]: ...

class Graph:
    """An execution graph held by the Rust core."""

    @staticmethod
    def load_goal(path: str, progress: Progress | None = None) -> Graph: ...
    @staticmethod
    def from_trace(
        path: str,
        coll: str = "default",
        timemult: float = 1000.0,
        request_size: int | None = None,
        mpi: str = "auto",
        p2p: bool = True,
        collectives: bool = True,
        progress: Progress | None = None,
        lines: bool = False,
        issue_time: bool = True,
    ) -> tuple[Graph, dict[str, Any]]: ...
    @staticmethod
    def random(
        ranks: int = 4,
        rounds: int = 6,
        seed: int = 1,
        max_calc: int = 5000,
        sizes: Sequence[int] | None = None,
        p_nonblocking: float = 0.5,
        p_message: float = 0.7,
        p_extra_edge: float = 0.2,
        unsafe_exchanges: bool = False,
        p_copy: float = 0.0,
        p_call: float = 0.0,
    ) -> Graph: ...
    @staticmethod
    def load_lgraph(path: str) -> Graph: ...
    @staticmethod
    def load_lgraph_if_key(path: str, key: int) -> Graph | None: ...
    def write_goal(self, path: str) -> None: ...
    def write_lgraph(self, path: str, key: int = 0) -> None: ...
    def info(self) -> dict[str, Any]: ...
    def predict(self, cfg: Config, path_limit: int = 0, pairs: bool = False) -> dict[str, Any]: ...
    def decompose(self, cfg: Config) -> dict[str, Any]: ...
    def placement(self, cfg: Config) -> np.ndarray: ...
    def lp(self, cfg: Config, pairwise: bool = False) -> dict[str, Any]: ...
    def simulate(
        self,
        cfg: Config,
        semantics: str = "design",
        cpu_serialization: bool = True,
        noise: list[dict[str, Any]] | None = None,
        seed: int = 0,
        record: bool = False,
    ) -> dict[str, Any]: ...
    def simulate_samples(
        self,
        cfg: Config,
        semantics: str = "design",
        cpu_serialization: bool = True,
        noise: list[dict[str, Any]] | None = None,
        seed: int = 0,
        first: int = 0,
        count: int = 1,
        threads: int = 1,
    ) -> dict[str, np.ndarray | int | float]: ...
    def sweep(self, cfg: Config, param: int, lo: float, hi: float, step: float | None = None) -> dict[str, Any]: ...
    def tolerance(self, cfg: Config, param: int, x0: float, ratios: Sequence[tuple[int, int]]) -> dict[str, Any]: ...
    def max_below(
        self, cfg: Config, param: int, x0: float, targets: Sequence[tuple[int, int]]
    ) -> list[tuple[str, int, int]]: ...
    def arrays(self, edges: bool = True) -> dict[str, Any]: ...
    def coll_calls(self) -> dict[str, Any]: ...

def generate_job(
    path: str,
    text: str | None = None,
    seed: int = 1,
    coll: str = "default",
    progress: Callable[[str, int, int], object] | None = None,
    max_ops: int | None = None,
) -> tuple[Graph, dict[str, Any]]: ...
def check_job(path: str, text: str | None = None) -> str: ...
def available_memory() -> int | None: ...
def threads() -> int: ...
def trace_calls() -> dict[str, str]: ...
def trace_times(path: str, timemult: float = 1000.0) -> list[dict[str, Any]]: ...
def lgraph_key(paths: Sequence[str], extra: bytes = b"") -> int | None: ...
def is_lgraph(path: str) -> bool: ...
