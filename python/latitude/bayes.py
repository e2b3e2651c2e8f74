"""Bayesian calibration (`latitude calibrate --bayes`): posterior distributions of L, o, G, O
and the protocol classes' identified terms from repeated measurements, instead of one point
per parameter; and what predictions become under it (credible intervals, validate's
predictive band).

Data: every sample latitude-calib kept (:mod:`latitude.calibrate`), over all runs: the
per-batch half round trips h of each size and the times inside each timed `MPI_Isend` /
`MPI_Recv` call, and the time per message of back-to-back small sends (≤ 64 B, one value per
run and size). With b = bytes − 1 and the eager limit S as measured, the model
(docs/model.md §1, as :mod:`latitude.loggp_fit` writes it) says

    half round trip   eager s ≤ S: L + 2o + b·(G + O)     rendezvous: 3L + 3o + b·G
    call time         o + b·O                              (eager sizes)
    stream interval   max(g, o + b·O)                      (s ≤ 64 B: the sender's CPU or the gap)

g is sampled whenever the runs have such streams: where back-to-back sends take no longer than
a send call (o ≥ g, as on shared memory) the data bound g only from above, by about o, and the
posterior says exactly that (roughly uniform on [0, o]) instead of the point fit's g = 0;
where they take longer, g is the stream interval.

and with protocol classes (S₁; docs/model.md §1) every o and L of a sample of class c is
o + o_c and L + l_c: the class terms the data identify are sampled (free_terms), the others
stay at the machine's values.

The copy cost C (the per-byte cost of a local copy) is not sampled: its memcpy samples share
no parameter with the messages', so its posterior would be its own factor, and a draw keeps
the machine's point value of C (``Posterior.apply`` changes only the sampled columns). Its
spread is in the machine file's ``[fit] C_std``.

The collective call's cost K is not sampled either, for the same reason (its samples, the
per-batch times of back-to-back barriers, allreduces and exchanges, share no parameter with
the round trips' model): a draw keeps the machine's point value of K, its spread is in
``[fit] K_std``.

Likelihood: every sample is Student-t distributed (ν = NU = 6 degrees of freedom) around its
model value with a *relative* scale, σ_h for the round trips and σ_c for the calls (machine
noise grows with the time measured); both scales are parameters of the posterior too. Heavy
tails, not a normal: on a shared node a batch or a call now and then is preempted and takes
many times its usual time; under a normal likelihood those few samples set the noise terms
(σ_c at its 100 % bound on a real calibration) and drag L, o, G away from what every other
sample says, and with protocol classes the sampler wandered off (L 2.3 µs against a point
fit of 0.33 µs). With ν = 6 the same samples give the point fit's values back within their
intervals. Priors: uniform over a range per
parameter (`--prior L=0:10us,...`; by default from 0 to four times the point estimate plus
a margin), so the posterior is the likelihood restricted to the ranges.

Sampler: emcee's affine-invariant ensemble sampler — a maintained, widely used MCMC library
that needs no gradients or tuning of step sizes, and handles the strong L–o correlation of
these data (the round trips see L + 2o) by construction (the stretch move is invariant under
affine maps of the parameter space). Walkers start in a small ball around the point estimate;
the first half of the chain is burn-in; what is kept is thinned by a few autocorrelation
times where those can be estimated.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field

import numpy as np

from latitude.calibrate import Measurements
from latitude.errors import InputError
from latitude.loggp_fit import Fit
from latitude.outputs import open_atomic
from latitude.params import CLASS_PARAMS
from latitude.units import parse_gap, parse_time

PARAMS = ("L", "o", "G", "O")
NOISE = ("sigma_h", "sigma_c")
COLUMNS = PARAMS + NOISE
STREAM_MAX = 64  # bytes: the stream sizes that show g (larger ones add b·G, which the round trips fit)
NU = 6  # degrees of freedom of the Student-t noise (heavy tails: a preempted batch is not evidence)


# Coefficients of the class terms (docs/model.md §1: o → o + o_c, L → L + l_c per class c)
# in each kind of sample: an eager half round trip has one L and two o, a rendezvous one
# three of each, a timed call and the CPU side of a stream interval one o.
_COEF = {0: {"L": 1, "o": 2}, 1: {"L": 3, "o": 3}, 2: {"o": 1}, 3: {"o": 1}}
STREAM = 3  # the kind of a stream interval sample


def small_streams(m: Measurements) -> list:
    """(size, µs per message) of every run's back-to-back sends that show g: eager, ≤ STREAM_MAX."""
    return [
        (s, v)
        for run in m.runs or [m]
        for s, v in sorted(run.stream.items())
        if s <= STREAM_MAX and (m.eager is None or s <= m.eager)
    ]


def free_terms(classes, f: Fit, m: Measurements | None = None) -> tuple:
    """The class terms the data identify (sampled; the others stay at the machine's values):
    o and L are the small class's own (the base fit takes them from the smallest messages),
    so small.o/small.L are not separable from them; medium.o and medium.L are, where a cut-off
    S₁ > 0 splits the eager sizes; large.L is the rendezvous set-up the large round trips show
    beyond L (large.o is not separable from it and stays 0, as protocol_fit writes it). g comes
    first when the measurements `m` have small streams."""
    g = ("g",) if m is not None and small_streams(m) else ()
    if classes is None or classes.S1 is None:
        return g
    out = ("medium.o", "medium.L") if classes.S1 > 0 else ()
    return g + out + (("large.L",) if f.L_rendezvous is not None else ())


@dataclass
class Data:
    """The samples as arrays (ns): sizes b, model kind (0 eager / 1 rendezvous round trip,
    2 call, 3 stream interval), values; with protocol classes, per sample the coefficients of
    the sampled class terms (C, samples × class terms) and the fixed terms' cost (offset);
    `g` whether g is sampled (then theta's column 4, before the class terms)."""

    b: np.ndarray
    kind: np.ndarray
    y: np.ndarray
    C: np.ndarray | None = None
    offset: np.ndarray | None = None
    g: bool = False

    @classmethod
    def of(cls, m: Measurements, classes=None, free: tuple = ()) -> Data:
        S = m.eager
        bs, kinds, ys, sizes = [], [], [], []
        for run in m.runs or [m]:
            for (kind, size), vals in run.samples.items():
                eager = S is None or size <= S
                if kind == "pingpong":
                    k = 0 if eager else 1
                elif kind in ("o_send", "o_recv") and eager:
                    k = 2
                else:
                    continue
                bs += [max(size - 1, 0)] * len(vals)
                kinds += [k] * len(vals)
                sizes += [size] * len(vals)
                ys += [v * 1e3 for v in vals]
        if not ys or 0 not in kinds or 2 not in kinds:
            raise InputError(
                "--bayes", "needs the samples of eager round trips and call times (latitude calibrate keeps them)"
            )
        if "g" in free:
            for size, v in small_streams(m):
                bs.append(max(size - 1, 0))
                kinds.append(STREAM)
                sizes.append(size)
                ys.append(v * 1e3)
        d = cls(np.array(bs, dtype=float), np.array(kinds), np.array(ys, dtype=float), g="g" in free)
        if classes is not None and classes.S1 is not None:
            d.C, d.offset = _class_terms(d.kind, np.array(sizes), classes, tuple(t for t in free if t != "g"))
        return d


def _class_terms(kind: np.ndarray, size: np.ndarray, classes, free: tuple):
    """(coefficients of the free class terms per sample, cost of the fixed ones per sample)."""
    cls_of = np.where(kind == 1, "large", np.where(size <= classes.S1, "small", "medium"))
    C = np.zeros((len(kind), len(free)))
    offset = np.zeros(len(kind))
    for c in ("small", "medium", "large"):
        for term in ("o", "L"):
            name = f"{c}.{term}"
            coef = np.array([_COEF[k].get(term, 0) for k in kind]) * (cls_of == c)
            if name in free:
                C[:, free.index(name)] = coef
            else:
                offset += coef * classes.values.get(name, 0.0)
    return C, offset


def model(theta: np.ndarray, d: Data) -> np.ndarray:
    """Model values of the samples for parameters theta = (L, o, G, O, [g,] class terms...,
    noise); theta may be a (walkers, params) array (one row per walker)."""
    th = np.atleast_2d(theta)
    L, o, G, O = (th[:, i : i + 1] for i in range(4))
    eager = L + 2 * o + d.b * (G + O)
    rndv = 3 * L + 3 * o + d.b * G
    call = o + d.b * O  # also a stream interval's CPU side
    mu = np.where(d.kind == 0, eager, np.where(d.kind == 1, rndv, call))
    first = 4 + d.g
    if d.C is not None:
        mu = mu + th[:, first : first + d.C.shape[1]] @ d.C.T + d.offset
    if d.g:
        mu = np.where(d.kind == STREAM, np.maximum(mu, th[:, 4:5]), mu)
    return mu


@dataclass
class Priors:
    lo: np.ndarray
    hi: np.ndarray
    names: tuple = COLUMNS  # L, o, G, O, the sampled class terms, the noise terms

    @classmethod
    def around(cls, f: Fit, spec: str | None = None, classes=None, m: Measurements | None = None) -> Priors:
        """Uniform ranges: from `spec` ("L=0:10us,G=0:0.1ns,large.L=0:5us"), else 0 to 4× the
        point estimate plus a margin (g: of the larger of g and o, since o bounds a hidden g;
        class terms: their values in `classes`, the protocol fit); the noise terms between
        0.01 % and 100 %. g is sampled when `m` has small streams (free_terms)."""
        free = free_terms(classes, f, m)
        point = {"L": f.L, "o": f.o, "G": f.G, "O": f.O}
        point |= {k: max(f.g, f.o) if k == "g" else classes.values[k] for k in free}
        lo = dict.fromkeys(point, 0.0)
        hi = {k: 4 * max(v, 0.0) + (0.01 if k in ("G", "O") else 1000.0) for k, v in point.items()}
        for item in (spec or "").split(","):
            if not item.strip():
                continue
            name, _, rng = item.partition("=")
            name = name.strip()
            a, sep, z = rng.partition(":")
            if name not in point or not sep:
                raise InputError("--prior", f"expected NAME=LO:HI with NAME one of {', '.join(point)}, got {item!r}")
            parse = parse_gap if name in ("G", "O") else parse_time
            lo[name], hi[name] = parse(a, "--prior"), parse(z, "--prior")
            if not hi[name] > lo[name] >= 0:
                raise InputError("--prior", f"{name}: expected 0 <= LO < HI, got {item!r}")
        return cls(
            np.array([lo[k] for k in point] + [1e-4, 1e-4]),
            np.array([hi[k] for k in point] + [1.0, 1.0]),
            PARAMS + free + NOISE,
        )


def log_posterior(theta: np.ndarray, d: Data, pr: Priors) -> np.ndarray:
    """Log posterior (up to a constant) of each row of theta (walkers × parameters)."""
    th = np.atleast_2d(theta)
    inside = np.all((th >= pr.lo) & (th <= pr.hi), axis=1)
    th = np.clip(th, pr.lo, pr.hi)  # rows outside get -inf below; keep their arithmetic finite
    mu = model(th, d)
    sigma = np.where(d.kind >= 2, th[:, -1:], th[:, -2:-1]) * np.maximum(mu, 1e-3)
    r2 = ((d.y - mu) / sigma) ** 2
    ll = -np.sum(0.5 * (NU + 1) * np.log1p(r2 / NU) + np.log(sigma), axis=1)
    return np.where(inside, ll, -np.inf)


@dataclass
class Posterior:
    samples: np.ndarray  # draws × columns
    acceptance: float
    autocorr: list = field(default_factory=list)  # per column (steps), NaN when not estimable
    columns: tuple = COLUMNS  # the model's parameters (engine names), then the noise terms

    @property
    def model_names(self) -> tuple:
        return self.columns[: -len(NOISE)]

    def column(self, name: str) -> np.ndarray:
        return self.samples[:, self.columns.index(name)]

    def apply(self, params, row):
        """`params` with the model parameters of one draw: the same named vector the engine
        takes (``Params.with_values``), so a class term lands where the engine reads it."""
        return params.with_values(dict(zip(self.model_names, (float(v) for v in row))))

    def effective(self, cls: str, term: str, fixed: dict) -> np.ndarray:
        """Draws of what the engine charges a message of class `cls` for `term` ("o" or "L"):
        term + cls.term, the class term from the draws where sampled, else from `fixed` (the
        machine's values). o and small.o are one cost to the data, so this is what a posterior
        pins down; its `o` alone is the overhead given the machine's small.o."""
        name = f"{cls}.{term}"
        extra = self.column(name) if name in self.columns else fixed.get(name, 0.0)
        return self.column(term) + extra

    def interval(self, name: str, level: float = 0.95, x: np.ndarray | None = None) -> tuple[float, float]:
        x = self.column(name) if x is None else x
        q = (1 - level) / 2
        return float(np.quantile(x, q)), float(np.quantile(x, 1 - q))

    def summary(self) -> dict:
        out = {}
        for i, name in enumerate(self.columns):
            x = self.samples[:, i]
            lo, hi = self.interval(name)
            out[name] = {
                "median": float(np.median(x)),
                "mean": float(x.mean()),
                "std": float(x.std()),
                "ci95": [lo, hi],
            }
        return out

    def draws(self, n: int, seed: int = 0) -> np.ndarray:
        """n posterior draws (rows of `columns`), with replacement."""
        rng = np.random.default_rng(seed)
        return self.samples[rng.integers(0, len(self.samples), n)]

    def write(self, path: str) -> None:
        with open_atomic(path, "posterior CSV", newline="") as f:
            w = csv.writer(f)
            w.writerow(self.columns)
            for row in self.samples:
                w.writerow([f"{v:.9g}" for v in row])

    @classmethod
    def read(cls, path: str) -> Posterior:
        try:
            with open(path, encoding="utf-8", newline="") as f:
                rows = list(csv.reader(f))
        except OSError as err:
            raise InputError(path, f"cannot read the posterior: {err.strerror or err}") from None
        head = tuple(rows[0]) if rows else ()
        middle = head[len(PARAMS) : -len(NOISE)]
        if head[: len(PARAMS)] != PARAMS or head[-len(NOISE) :] != NOISE or not set(middle) <= {"g", *CLASS_PARAMS}:
            raise InputError(
                f"{path}:1",
                f"expected the header {','.join(PARAMS)},[g,][protocol class terms,]{','.join(NOISE)} "
                "(a posterior of latitude calibrate --bayes)",
            )
        try:
            samples = np.array([[float(v) for v in r] for r in rows[1:]], dtype=float)
        except ValueError:
            raise InputError(path, "expected numbers in every row") from None
        if samples.ndim != 2 or len(samples) == 0 or samples.shape[1] != len(head):
            raise InputError(path, f"expected rows of {len(head)} numbers")
        return cls(samples, float("nan"), columns=head)


def sample(
    m: Measurements, f: Fit, priors: Priors, steps: int = 3000, walkers: int = 32, seed: int = 1, classes=None
) -> Posterior:
    """Posterior samples of (L, o, G, O, [g,] the class terms of `priors`, σ_h, σ_c) given the
    measurements `m`, their point fit `f` and protocol classes `classes` (the ClassFit of
    latitude.protocol_fit whose terms Priors.around chose; None: the two-protocol model)."""
    import emcee

    free = priors.names[len(PARAMS) : -len(NOISE)]
    d = Data.of(m, classes, free)
    rng = np.random.default_rng(seed)
    # a hidden g (point fit 0) starts at half of o: inside the flat part of its likelihood
    extra = [(f.g or f.o / 2) if k == "g" else classes.values[k] for k in free]
    start = np.array([f.L, f.o, f.G, f.O, *extra, max(f.noise or 0.02, 0.005), 0.05])
    start = np.clip(start, priors.lo + 1e-9 * (priors.hi - priors.lo), priors.hi - 1e-9 * (priors.hi - priors.lo))
    k = len(priors.names)
    ball = start * (1 + 1e-3 * rng.standard_normal((walkers, k))) + 1e-6 * rng.random((walkers, k))
    ball = np.clip(ball, priors.lo, priors.hi)
    sampler = emcee.EnsembleSampler(walkers, k, log_posterior, args=(d, priors), vectorize=True)
    sampler.random_state = np.random.RandomState(seed).get_state()  # a seeded run is reproducible
    sampler.run_mcmc(ball, steps, progress=False)
    burn = steps // 2
    tau = sampler.get_autocorr_time(discard=burn, quiet=True, tol=0)
    thin = int(max(1, np.nanmin([np.nanmax(tau) / 2, steps / 20]))) if np.all(np.isfinite(tau)) else 1
    chain = sampler.get_chain(discard=burn, thin=thin, flat=True)
    return Posterior(chain, float(np.mean(sampler.acceptance_fraction)), [float(t) for t in tau], priors.names)


def credible(graph, params, post: Posterior, n: int = 200, seed: int = 0) -> dict:
    """T's posterior predictive at `params` with its model parameters (L, o, G, O and any class
    terms) drawn from the posterior: one
    engine pass per draw; the median, the 95 % credible interval and the draws' spread."""
    ts = []
    for row in post.draws(n, seed):
        p = post.apply(params, row)
        ts.append(graph.predict(p).runtime_ns)
    summary = _summary(ts) | {"mean": float(np.mean(ts)), "std": float(np.std(ts))}
    return {"draws": n, "params": list(post.model_names), "runtime_ns": summary}


NOISE_DRAWS = 20  # noise samples per engine pass: the band's tails from 20× the draws, at no engine cost


def predictive_band(
    graph,
    params,
    post: Posterior,
    deltas,
    n: int = 200,
    seed: int = 0,
    level: float = 0.95,
    spread=None,
    offset=None,
):
    """Per ΔL (ns, added to each draw's L) the posterior predictive of one run's T: per draw
    θᵢ one engine pass Tᵢ(ΔL) (the credible band of the model's mean), then, with `spread` =
    (s, k) the relative standard deviation s of k ≥ 2 runs of the program (validate: its
    traced runs), Tᵢ·(1 + s·√(1 + 1/k)·z) with z Student-t with k − 1 degrees of freedom
    (NOISE_DRAWS per pass): the classical predictive interval of one more run, so the band
    holds the program's own run-to-run noise. The calibration's σ_h is not used: it is the
    noise of one ping-pong, which averages out over a run's thousands of messages. Without
    `spread` the band is the credible band of the mean. With `offset` = (D, se, ν)
    (injector_offset: injected runs at ΔL = 0 minus traced runs, ns) every value gets
    D + se·t_ν added: the injector's own cost, which a model made from a traced run does not
    hold, with its uncertainty. Returns one dict per ΔL: median, lo, hi (the central `level`
    interval), mean_lo/mean_hi (the same of Tᵢ alone) in ns."""
    from latitude.progress import progress

    rows = post.draws(n, seed)
    T = np.empty((n, len(deltas)))
    with progress("posterior band", total=n, unit="draws") as update:
        for i, row in enumerate(rows):
            p = post.apply(params, row)
            for j, d in enumerate(deltas):
                T[i, j] = graph.predict(p.replace(L=p.L + d)).runtime_ns
            update(i + 1)
    if spread is None:
        Y = T
    else:
        s, k = spread
        z = np.random.default_rng(seed).standard_t(k - 1, (n, NOISE_DRAWS, len(deltas)))
        Y = (T[:, None, :] * (1 + s * math.sqrt(1 + 1 / k) * z)).reshape(-1, len(deltas))
    if offset is not None:
        D, se, dof = offset
        Y = Y + D + se * np.random.default_rng(seed + 1).standard_t(dof, Y.shape)
    Y = np.maximum(Y, 0.0)  # heavy t tails (few runs) must not give a negative runtime
    q = (1 - level) / 2
    return [
        {
            "median": float(np.median(Y[:, j])),
            "lo": float(np.quantile(Y[:, j], q)),
            "hi": float(np.quantile(Y[:, j], 1 - q)),
            "mean_lo": float(np.quantile(T[:, j], q)),
            "mean_hi": float(np.quantile(T[:, j], 1 - q)),
        }
        for j in range(len(deltas))
    ]


def run_spread(runtimes) -> tuple[float, int] | None:
    """(relative standard deviation, count) of k ≥ 2 runtimes, else None."""
    ts = [float(t) for t in runtimes if t]
    if len(ts) < 2:
        return None
    return float(np.std(ts, ddof=1) / np.mean(ts)), len(ts)


def injector_offset(traced_ns, injected_ns) -> tuple[float, float, int] | None:
    """(D, se, ν): how much longer the runs under the injector at ΔL = 0 took than the traced
    runs of the same program (difference of the means, ns), the standard error of that
    difference, and the degrees of freedom of its Student-t (Welch's bound min(k, n) − 1).
    A run's variance is estimated from whichever side has ≥ 2 runs (the injected runs' when
    both: they are the runs the band is for). None with fewer than 2 injected runs."""
    tr = [float(t) for t in traced_ns if t]
    inj = [float(t) for t in injected_ns if t]
    if len(inj) < 2 or not tr:
        return None
    var_inj = float(np.var(inj, ddof=1))
    var_tr = float(np.var(tr, ddof=1)) if len(tr) >= 2 else var_inj
    se = math.sqrt(var_inj / len(inj) + var_tr / len(tr))
    dof = max(1, min(len(tr), len(inj)) - 1) if len(tr) >= 2 else len(inj) - 1
    return float(np.mean(inj) - np.mean(tr)), se, dof


def share_inside(values, bands) -> float:
    """The share of `values` (one per band, or one list per band) inside their band [lo, hi]."""
    hits = total = 0
    for v, b in zip(values, bands):
        for x in v if isinstance(v, (list, tuple)) else [v]:
            hits += b["lo"] <= x <= b["hi"]
            total += 1
    return hits / total if total else float("nan")


def _summary(x: list[float]) -> dict:
    a = np.array(x, dtype=float)
    return {"median": float(np.median(a)), "ci95": [float(np.quantile(a, 0.025)), float(np.quantile(a, 0.975))]}


def credible_tolerance(graph, params, post: Posterior, pcts, param: str = "L", n: int = 200, seed: int = 0) -> dict:
    """The x % tolerances' posterior: per draw of (L, o, G, O) the exact tolerance of `param`
    (the increase over its baseline that keeps T within x %), one analysis per draw."""
    deltas: dict[float, list[float]] = {float(p): [] for p in pcts}
    unbounded = dict.fromkeys(deltas, 0)
    for row in post.draws(n, seed):
        p = post.apply(params, row)
        for r in graph.tolerance(pcts, param=param, params=p).to_dict()["tolerance"]:
            if r["delta_ns"] is None:
                unbounded[float(r["pct"])] += 1
            else:
                deltas[float(r["pct"])].append(r["delta_ns"])
    rows = []
    for pct, xs in deltas.items():
        row = {"pct": pct, "unbounded_draws": unbounded[pct]}
        row.update({"delta_ns": _summary(xs)} if xs else {"delta_ns": None})
        rows.append(row)
    return {"draws": n, "param": param, "tolerance": rows}


def plot(post: Posterior, path: str, truth: dict | None = None) -> list[str]:
    """Marginal posterior of every parameter (histograms with the 95 % interval), like the
    SST-macro study's Fig. 7."""
    from latitude.plots import _mpl, _save

    plt = _mpl()
    from matplotlib.ticker import MaxNLocator

    rows = -(-len(post.columns) // 3)
    fig, axes = plt.subplots(rows, 3, figsize=(11, 3 * rows), squeeze=False)
    units = {"G": "ns/B", "O": "ns/B", "sigma_h": "relative", "sigma_c": "relative"}
    for ax in axes.flat[len(post.columns) :]:
        ax.set_visible(False)
    for ax, (i, name) in zip(axes.flat, enumerate(post.columns)):
        x = post.samples[:, i]
        ax.hist(x, bins=50, color="#1f77b4", alpha=0.8, density=True)
        lo, hi = post.interval(name)
        for v in (lo, hi):
            ax.axvline(v, color="#d62728", ls="--", lw=1)
        ax.axvline(float(np.median(x)), color="k", lw=1)
        if truth and name in truth:
            ax.axvline(truth[name], color="#2ca02c", lw=2)
        ax.set_title(f"{name}: {np.median(x):.4g} [{lo:.4g}, {hi:.4g}]", fontsize=10)
        ax.set_xlabel(units.get(name, "ns"))
        ax.set_yticks([])
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4), useOffset=False)
    fig.suptitle("Posterior marginals (median, 95 % credible interval)")
    fig.tight_layout()
    return _save(fig, path)
