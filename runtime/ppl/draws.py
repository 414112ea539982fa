"""Posterior draws: per-variable arrays ``(chains, draws, *shape)`` with a ``summary()`` table
(mean, sd, quantiles, rank-normalised R-hat, bulk and tail ESS) and sampler statistics."""

from __future__ import annotations

import itertools
from typing import Any

from ..host_namespace import xp
from .diagnostics import ess_bulk, ess_tail, rhat

__all__ = ["Draws", "Summary"]


class Summary:
    """One row per scalar parameter; columns as attributes (lists) and as a printed table."""

    columns = ("mean", "sd", "q5", "q50", "q95", "rhat", "ess_bulk", "ess_tail")

    def __init__(self, rows: list[tuple[str, dict[str, float]]], divergences: int,
                 n_draws: int, chains: int) -> None:
        self.rows = rows
        self.divergences = divergences
        self.n_draws = n_draws
        self.chains = chains

    @property
    def names(self) -> list[str]:
        return [r[0] for r in self.rows]

    def __getitem__(self, name: str) -> dict[str, float]:
        for n, vals in self.rows:
            if n == name:
                return vals
        raise KeyError(f"summary: no parameter {name!r}; have {', '.join(self.names)}")

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {n: dict(v) for n, v in self.rows}

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame({c: [v[c] for _, v in self.rows] for c in self.columns},
                            index=self.names)

    def __repr__(self) -> str:
        width = max([len("parameter"), *(len(n) for n in self.names)])
        head = "parameter".ljust(width) + "".join(f"{c:>10}" for c in self.columns)
        lines = [head]
        for name, v in self.rows:
            cells = []
            for c in self.columns:
                x = v[c]
                if c.startswith("ess"):
                    cells.append(f"{x:>10.0f}" if xp.isfinite(x) else f"{'nan':>10}")
                elif c == "rhat":
                    cells.append(f"{x:>10.3f}")
                else:
                    cells.append(f"{x:>10.3g}")
            lines.append(name.ljust(width) + "".join(cells))
        lines.append(f"{self.chains} chains x {self.n_draws} draws; "
                     f"{self.divergences} divergent transitions")
        return "\n".join(lines)


class Draws:
    """MCMC output. ``draws["mu"]`` is an array ``(chains, draws, *shape)``."""

    def __init__(self, values: dict[str, xp.ndarray], free: xp.ndarray,
                 stats: dict[str, xp.ndarray], warmup: dict[str, Any] | None = None,
                 interrupted: bool = False) -> None:
        self.values = values
        self.free = free  # (chains, draws, n_free)
        self.stats = stats  # (chains, draws) each: accept_stat, n_leapfrog, divergent, ...
        self.warmup = warmup or {}
        self.interrupted = interrupted
        # variable node -> its name here; set by mcmc so calculate() finds unnamed variables
        self.node_names: dict[Any, str] = {}
        # which sampler ran ("compiled" or "numpy", see mcmc's backend=) and its compile time
        self.backend = "numpy"
        self.compile_seconds = 0.0
        # set by mcmc for extra_samples: the model, seed and sampler, and where the chains stopped
        self.model: Any = None
        self.seed: int | None = None
        self.sampler: Any = None
        self.resume_state: dict[str, Any] | None = None

    @property
    def chains(self) -> int:
        return self.free.shape[0]

    @property
    def n_draws(self) -> int:
        return self.free.shape[1]

    @property
    def names(self) -> list[str]:
        return list(self.values)

    def __getitem__(self, name: str) -> xp.ndarray:
        if name not in self.values:
            raise KeyError(f"draws: no variable {name!r}; have {', '.join(self.values)}")
        return self.values[name]

    def __repr__(self) -> str:
        flag = ", interrupted" if self.interrupted else ""
        return (f"<Draws: {self.chains} chains x {self.n_draws} draws of "
                f"{', '.join(self.values)}{flag}>")

    @property
    def divergences(self) -> int:
        d = self.stats.get("divergent")
        return int(d.sum()) if d is not None else 0

    def scalar_columns(self) -> list[tuple[str, xp.ndarray]]:
        """Every scalar element as (label, (chains, draws)); labels are 0-based like NumPy."""
        out = []
        for name, arr in self.values.items():
            shape = arr.shape[2:]
            if not shape:
                out.append((name, arr))
                continue
            for idx in itertools.product(*(range(d) for d in shape)):
                label = f"{name}[{','.join(map(str, idx))}]"
                out.append((label, arr[(slice(None), slice(None), *idx)]))
        return out

    def summary(self, quantiles: tuple[float, float, float] = (0.05, 0.5, 0.95)) -> Summary:
        rows = []
        for label, x in self.scalar_columns():
            x = xp.asarray(x, dtype=xp.float64)
            empty = x.size == 0  # interrupted before the first kept draw
            q = [float("nan")] * 3 if empty else xp.quantile(x, quantiles)
            rows.append((label, {
                "mean": float("nan") if empty else float(x.mean()),
                "sd": float(x.std(ddof=1)) if x.size > 1 else float("nan"),
                "q5": float(q[0]), "q50": float(q[1]), "q95": float(q[2]),
                "rhat": rhat(x) if self.n_draws >= 4 else float("nan"),
                "ess_bulk": ess_bulk(x) if self.n_draws >= 8 else float("nan"),
                "ess_tail": ess_tail(x) if self.n_draws >= 8 else float("nan"),
            }))
        return Summary(rows, self.divergences, self.n_draws, self.chains)

    def to_arviz(self, coords: dict[str, Any] | None = None,
                 dims: dict[str, list[str]] | None = None) -> Any:
        """An ``arviz.InferenceData``: the posterior (``chain``, ``draw`` and each variable's
        axes, named ``<variable>_dim_<k>`` unless ``dims``/``coords`` say otherwise) and the
        sampler statistics under ArviZ's names (``acceptance_rate``, ``n_steps``,
        ``tree_depth``, ``diverging``, ``energy``, ``lp``, ``step_size``)."""
        import arviz as az

        renames = {"accept_stat": "acceptance_rate", "n_leapfrog": "n_steps",
                   "divergent": "diverging"}
        sample_stats = {renames.get(k, k): xp.asarray(v) for k, v in self.stats.items()}
        if "diverging" in sample_stats:
            sample_stats["diverging"] = sample_stats["diverging"].astype(bool)
        step = self.warmup.get("step_size")
        if step is not None:  # fixed after warmup: one value per chain, repeated per draw
            sample_stats["step_size"] = xp.broadcast_to(
                xp.asarray(step, dtype=xp.float64).reshape(-1, 1),
                (self.chains, self.n_draws)).copy()
        return az.from_dict(posterior=dict(self.values), sample_stats=sample_stats,
                            coords=coords, dims=dims,
                            attrs={"inference_library": "tensorbridge"})
