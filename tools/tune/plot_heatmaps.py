#!/usr/bin/python3
"""Draws the heat maps of `collshim-tune plot` (docs/rules-and-tuning.md): for each sweep in the JSON file that
collshim-tune writes, the winner map (which implementation was fastest per process count x block
size) and the speed-up of that winner over native, as PNG files in the output directory, the way the
Sparbit thesis presents its results. Needs python3-matplotlib (Debian).

  plot_heatmaps.py GRIDS.json OUTDIR       # prints the paths it wrote
"""
import json
import math
import os
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import ListedColormap
    except ImportError:
        print("collshim-tune plot: error: python3-matplotlib is missing (apt-get install python3-matplotlib)",
              file=sys.stderr)
        return 1
    with open(sys.argv[1]) as f:
        sweeps = json.load(f)
    outdir = sys.argv[2]
    palette = plt.get_cmap("tab20").colors
    for sweep in sweeps:
        xs, ys = sweep["procs"], sweep["block_bytes"]
        names = sorted({w for row in sweep["winner"] for w in row if w})
        index = {n: i for i, n in enumerate(names)}
        winners = [[index[w] if w else math.nan for w in row] for row in sweep["winner"]]
        speedups = [[s if s is not None else math.nan for s in row] for row in sweep["speedup"]]
        width = max(6.0, 0.5 * len(xs) + 4)
        height = 0.32 * len(ys) + 2.5
        fig, (left, right) = plt.subplots(1, 2, figsize=(2 * width, height))
        colours = [palette[i % len(palette)] for i in range(max(1, len(names)))]
        left.imshow(winners, cmap=ListedColormap(colours), vmin=-0.5, vmax=len(colours) - 0.5, aspect="auto",
                    origin="lower")
        left.legend([plt.Rectangle((0, 0), 1, 1, color=c) for c in colours], names, fontsize=6, loc="upper left",
                    bbox_to_anchor=(1.01, 1))
        left.set_title("fastest implementation", fontsize=8)
        logs = [[math.log2(s) if s == s and s > 0 else math.nan for s in row] for row in speedups]
        bound = max([abs(v) for row in logs for v in row if v == v] + [1.0])
        image = right.imshow(logs, cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto", origin="lower")
        for i, row in enumerate(speedups):
            for j, s in enumerate(row):
                if s == s:
                    right.text(j, i, f"{s:.2f}", ha="center", va="center", fontsize=6)
        right.set_title(sweep.get("speedup_title", "its speed-up over native (native time / its time)"), fontsize=8)
        fig.colorbar(image, ax=right, label="log2 speed-up")
        for ax in (left, right):
            ax.set_xticks(range(len(xs)), [str(p) for p in xs], fontsize=7)
            ax.set_yticks(range(len(ys)), [str(b) for b in ys], fontsize=7)
            ax.set_xlabel("processes")
            ax.set_ylabel("block bytes (as rules test it)")
        fig.suptitle(sweep["title"], fontsize=9)
        fig.tight_layout()
        path = os.path.join(outdir, sweep["file"])
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
