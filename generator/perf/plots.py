"""busbw-versus-message-size plots (matplotlib, Agg, no pyplot state); SVG or PNG, byte-stable."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

from generator.fsutil import atomic_write_bytes, checked_output_file
from generator.perf.predict import Prediction
from generator.perf.sizes import format_size

FORMATS = ("svg", "png")


class PlotError(ValueError):
    pass


def _figure(panels: int):  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    matplotlib.rcParams["svg.hashsalt"] = "cluster-blueprint"  # stable ids inside the SVG
    cols = min(panels, 2)
    rows = (panels + cols - 1) // cols
    fig = Figure(figsize=(7.5 * cols, 4.6 * rows), dpi=100)
    axes = [fig.add_subplot(rows, cols, i + 1) for i in range(panels)]
    return fig, axes


def _axes_style(ax, title: str, sizes: Sequence[int]) -> None:  # type: ignore[no-untyped-def]
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ticks = list(sizes)
    if len(ticks) > 12:
        step = (len(ticks) + 11) // 12
        ticks = ticks[::step]
    ax.set_xticks(ticks)
    ax.set_xticklabels([format_size(s) for s in ticks], rotation=45, fontsize=8)
    ax.legend(fontsize=8, loc="upper left")


def _save(fig, path: Path, replace: bool) -> None:  # type: ignore[no-untyped-def]
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise PlotError(f"plot file `{path}` must end in .svg or .png")
    fig.tight_layout()
    buf = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.savefig(buf, format=fmt, metadata=metadata)
    # ``path`` from check_plot_path: never through a symlink; ``replace``: the command's --force
    atomic_write_bytes(path, buf.getvalue(), replace=replace)


def check_plot_path(path: str | Path) -> Path:
    """``path`` for a plot, checked before any work: .svg or .png, and a new name or a regular file."""
    p = Path(path)
    if p.suffix.lower().lstrip(".") not in FORMATS:
        raise PlotError(f"plot file `{path}` must end in .svg or .png")
    return checked_output_file(p)


def plot_collectives(
    series: Mapping[str, Sequence[Prediction]], title: str, path: str | Path, *, replace: bool
) -> None:
    """One blueprint: a line per collective."""
    p = check_plot_path(path)
    fig, (ax,) = _figure(1)
    sizes: list[int] = []
    for coll, rows in series.items():
        xs = [r.size_bytes for r in rows]
        sizes = sorted(set(sizes) | set(xs))
        ax.plot(xs, [r.busbw_gbytes for r in rows], marker="o", markersize=3, label=coll)
    _axes_style(ax, title, sizes)
    _save(fig, p, replace)


def plot_comparison(
    data: Mapping[str, Mapping[str, Sequence[Prediction]]], path: str | Path, *, replace: bool
) -> None:
    """Several blueprints: a panel per collective, a line per blueprint."""
    p = check_plot_path(path)
    colls: list[str] = []
    for per in data.values():
        colls.extend(c for c in per if c not in colls)
    fig, axes = _figure(len(colls))
    for ax, coll in zip(axes, colls, strict=True):
        sizes: list[int] = []
        for name, per in data.items():
            rows = per.get(coll, ())
            if not rows:
                continue
            xs = [r.size_bytes for r in rows]
            sizes = sorted(set(sizes) | set(xs))
            ax.plot(
                xs,
                [r.busbw_gbytes for r in rows],
                marker="o",
                markersize=3,
                label=f"{name} ({rows[0].ranks} GPUs)",
            )
        _axes_style(ax, f"{coll}: fabric comparison", sizes)
    _save(fig, p, replace)


def plot_measured_vs_predicted(
    runs: Sequence[object], path: str | Path, max_lines: int = 10, *, replace: bool
) -> None:
    """acceptance-report: a panel per collective; each run's measured busbw (solid, dots) and the model's
    prediction for the same shape (dashed, same colour). Low runs first, then the others up to
    ``max_lines``."""
    from generator.perf.acceptance import RunResult

    p = check_plot_path(path)
    results = [r for r in runs if isinstance(r, RunResult) and r.sizes]
    colls = list(dict.fromkeys(r.run.collective for r in results))
    if not colls:
        raise PlotError("no run with result rows to plot")
    fig, axes = _figure(len(colls))
    for ax, coll in zip(axes, colls, strict=True):
        mine = sorted((r for r in results if r.run.collective == coll), key=lambda r: (not r.low, r.run.path))
        sizes: list[int] = []
        for i, res in enumerate(mine[:max_lines]):
            xs = [s.size_bytes for s in res.sizes]
            sizes = sorted(set(sizes) | set(xs))
            color = f"C{i % 10}"
            # a file name is foreign text: Matplotlib reads `$…$` in a label as mathtext (a parse error)
            label = res.run.name.replace("$", r"\$") + (" (LOW)" if res.low else "")
            ax.plot(xs, [s.measured for s in res.sizes], marker="o", markersize=3, color=color, label=label)
            ax.plot(xs, [s.predicted for s in res.sizes], linestyle="--", color=color, linewidth=1)
        _axes_style(ax, f"{coll}: measured (solid) vs predicted (dashed)", sizes)
    _save(fig, p, replace)
