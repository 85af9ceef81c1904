"""PNG figures of the corpus statistics (matplotlib, Agg backend: no display).

The numbers come from the SQL models ``kilt_corpus_histograms`` and
``kilt_section_depth_stats``; this module only draws them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kilt_chunks.defaults import DEFAULT_TOKENIZER

__all__ = [
    "FIGURES",
    "SHORT_CHUNK_TOKENS",
    "draw_figures",
    "figure_captions",
]

#: The figures, in the card's order: file stem -> caption (``{tokenizer}``:
#: the build's tokenizer, :func:`figure_captions`).
FIGURES: dict[str, str] = {
    "tokens_per_chunk": "Tokens per chunk ({tokenizer}), buckets of 8 tokens",
    "chunks_per_section": "Chunks per kept section",
    "sections_per_page": "Kept sections per page",
    "tokens_by_section_depth": "Tokens per chunk by section depth (0 = lead)",
}


def figure_captions(tokenizer: str = DEFAULT_TOKENIZER) -> dict[str, str]:
    """:data:`FIGURES` with the build's tokenizer named (a setting, or its
    ``kilt_build_info`` text: :func:`~kilt_chunks.splitter.options.tokenizer_label`)."""
    from kilt_chunks.splitter.options import tokenizer_label

    label = tokenizer_label(tokenizer)
    return {name: caption.format(tokenizer=label) for name, caption in FIGURES.items()}


#: Chunks below this many tokens are "short" (the red part of the histogram).
SHORT_CHUNK_TOKENS = 32


def _figure() -> Any:
    """A new 1000 x 500 pixel figure, drawn by the Agg canvas (no display, no
    pyplot state: matplotlib's advice for figures made outside a GUI)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 5), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _bars(
    ax: Any,
    rows: Sequence[Mapping[str, Any]],
    xlabel: str,
    ylabel: str,
    *,
    counts: bool = False,
) -> None:
    """Bars of histogram rows: a bar over [start, end) for buckets, or one bar
    centred on each value for ``counts`` (the open last bucket labelled
    ``N+``), integer ticks."""
    from matplotlib.ticker import MaxNLocator

    starts = [row["bucket_start"] for row in rows]
    widths = [
        (row["bucket_end"] - row["bucket_start"]) if row["bucket_end"] else 1
        for row in rows
    ]
    ax.bar(
        starts,
        [row["num_items"] for row in rows],
        width=[0.9 * w for w in widths],
        align="center" if counts else "edge",
    )
    for row in rows:
        if row["bucket_end"] is None:
            ax.annotate(
                f"{row['bucket_start']}+",
                (row["bucket_start"], row["num_items"]),
                ha="center",
                va="bottom",
            )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def _box_legend(chunk_size: int | None) -> list[Any]:
    """Legend of the depth box plot: what each mark of matplotlib's ``bxp``
    (with ``showmeans``) stands for."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Line2D([], [], color="tab:orange", label="median"),
        Line2D([], [], color="tab:green", marker="^", linestyle="none", label="mean"),
        Patch(facecolor="none", edgecolor="black", label="25% to 75%"),
        Line2D([], [], color="black", marker="_", label="whiskers: 5% and 95%"),
    ]
    if chunk_size is not None:
        handles.append(
            Line2D(
                [], [], color="black", linestyle=":", label=f"chunk_size ({chunk_size})"
            )
        )
    return handles


def draw_figures(
    histograms: Sequence[Mapping[str, Any]],
    depth_stats: Sequence[Mapping[str, Any]],
    folder: Path,
    chunk_size: int | None = None,
    tokenizer: str = DEFAULT_TOKENIZER,
) -> list[Path]:
    """Draw the four figures of :data:`FIGURES` as PNG files into ``folder``.

    Args:
        histograms: Rows of ``kilt_corpus_histograms`` (``histogram``,
            ``bucket_start``, ``bucket_end`` or None, ``num_items``).
        depth_stats: Rows of ``kilt_section_depth_stats`` (``section_depth``,
            ``num_chunks``, ``tokens_p05`` ... ``tokens_p95``, ``tokens_mean``,
            ``share_under_32_tokens``).
        folder: Existing folder; files ``<name>.png``, 1000 x 500 pixels.
        chunk_size: The build's chunk_size, marked on the token figures (a
            few chunks exceed it: the splitter's count is of the pieces it
            joins); None: not marked.
        tokenizer: The build's tokenizer (setting or ``kilt_build_info``
            text), named in the token histogram's title.

    Returns:
        The files written, in :data:`FIGURES` order (a histogram without rows,
        for an empty corpus, gives an empty plot).
    """
    by_name: dict[str, list[Mapping[str, Any]]] = {}
    for row in histograms:
        by_name.setdefault(row["histogram"], []).append(row)
    for rows in by_name.values():
        rows.sort(key=lambda row: row["bucket_start"])
    paths = []
    for name, caption in figure_captions(tokenizer).items():
        fig = _figure()
        ax = fig.subplots()
        if name == "tokens_per_chunk":
            rows = by_name.get(name, [])
            _bars(ax, rows, "tokens per chunk", "chunks")
            short = sum(
                row["num_items"]
                for row in rows
                if row["bucket_start"] < SHORT_CHUNK_TOKENS
            )
            total = sum(row["num_items"] for row in rows) or 1
            ax.axvline(
                SHORT_CHUNK_TOKENS,
                color="tab:red",
                linestyle="--",
                label=f"{SHORT_CHUNK_TOKENS} tokens",
            )
            if chunk_size is not None:
                ax.axvline(
                    chunk_size,
                    color="black",
                    linestyle=":",
                    label=f"chunk_size ({chunk_size})",
                )
            ax.legend(loc="upper center")
            ax.annotate(
                f"{short / total:.1%} under {SHORT_CHUNK_TOKENS} tokens",
                (SHORT_CHUNK_TOKENS, 1),
                xycoords=("data", "axes fraction"),
                xytext=(4, -14),
                textcoords="offset points",
                color="tab:red",
            )
        elif name == "chunks_per_section":
            rows = by_name.get(name, [])
            _bars(ax, rows, "chunks in the section", "sections", counts=True)
            if rows:
                ax.set_yscale("log")
        elif name == "sections_per_page":
            rows = by_name.get(name, [])
            _bars(ax, rows, "kept sections of the page", "pages", counts=True)
        else:
            stats = [
                {
                    "label": f"{row['section_depth']}\n({row['num_chunks']:,})",
                    "whislo": row["tokens_p05"],
                    "q1": row["tokens_p25"],
                    "med": row["tokens_median"],
                    "q3": row["tokens_p75"],
                    "whishi": row["tokens_p95"],
                    "mean": row["tokens_mean"],
                    "fliers": [],
                }
                for row in depth_stats
            ]
            if stats:
                ax.bxp(stats, showmeans=True)
            if chunk_size is not None:
                ax.axhline(chunk_size, color="black", linestyle=":")
            ax.legend(handles=_box_legend(chunk_size), loc="lower right")
            ax.set_xlabel("section depth (chunks); whiskers at 5% and 95%")
            ax.set_ylabel("tokens per chunk")
        ax.set_title(caption)
        fig.tight_layout()
        path = folder / f"{name}.png"
        fig.savefig(path)
        paths.append(path)
    return paths
