#!/usr/bin/python3
"""Sweeps collshim's Allgather(v) algorithms and SMPI's own collectives on simulated clusters.

Each cell (cluster, mapping, network model, p) is one smpirun of collshim-bench (built with
-DCOLLSHIM_MPI=smpi) over all block sizes: once with --cfg=smpi/coll-selector:ompi timing every
algorithm and SMPI's ompi choice, once with :mpich timing SMPI's mpich choice only. Simulated time
is deterministic, so one timed call per size is enough (no warm-up, no repetitions).

Output (in --out, default bench/sim/out): results.csv, summary.txt (the Sparbit thesis's Table 6/7
format), and bench/<cluster>-<model>.csv, collshim-bench's own --csv rows of every smpirun, from which
`collshim-tune plot bench/CLUSTER-MODEL.csv -o DIR` draws the heat maps (winner and speed-up maps;
python3-matplotlib).

Why this sweep is not `collshim-tune measure` (bench/sim/tune.py is): it is the Sparbit thesis's
comparison, whose tables need what measure does not give. Its cells differ by network model
(--models default/flat, --no-detached: a model column), not only by launcher; the full sweep leaves
algorithms out per block size at large p (DETACHED_LIMIT, NONCONTIG_LIMIT) and records them as
'not run' rows the summary counts; it keeps min, average and maximum over ranks for the Table 6/7
metrics; and it runs two smpiruns at once (--jobs). The heat maps are collshim-tune plot's.

  bench/sim/run.py --quick          # the CI-sized sweep, < 10 minutes on 2 cores
  bench/sim/run.py                  # the full sweep (see docs/simulation.md for its runtime); at p > 128 it
                                 # skips default sparbit below 64 KiB (DETACHED_LIMIT), runs sparbit:coalesce=1
                                 # everywhere, skips bruck, sparbit:coalesce=1 and recursive_multiplying
                                 # where p*p*block > 8 GiB
                                 # (NONCONTIG_LIMIT); left-out cells are 'not run: <reason>' rows in results.csv
  bench/sim/run.py --resume         # after an interrupted sweep (same options): runs only the cells not yet
                                 # in --out's timings.csv; results.csv gains each cell's rows as it completes
  bench/sim/run.py --at-scale       # Allgather at p=1024 on the fat tree, every algorithm next to SMPI's
                                 # ompi and mpich selectors, one smpirun per size (--sizes), tabulated
  --no-detached                  # any of the above with --cfg=smpi/send-is-detached-thresh:0 on every smpirun
                                 # (a different network model; model column "<model>+no-detached")
"""
import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_common as sim  # noqa: E402  (the platforms, SMPI's flags, COLLSHIM_TOPOLOGY)

HERE = sim.HERE

# The platforms are smpi_common.CLUSTERS; on the contending ones (one host per core) the placement is
# given to the shim in COLLSHIM_TOPOLOGY (smpi_common.environment).
CLUSTERS = sim.CLUSTERS
ALGORITHMS = ["sparbit", "bruck", "recursive_doubling", "ring", "neighbor_exchange", "recursive_multiplying"]
THESIS_SET = ["sparbit", "bruck", "recursive_doubling", "ring", "neighbor_exchange"]
# Node-aware: `hierarchical` with each inter-node algorithm (bare `hierarchical` is inter=native, the
# leaders running SMPI's own Allgatherv as chosen by the selector). Added by --hierarchical.
HIERARCHICAL = ["hierarchical"] + [f"hierarchical:inter={a}" for a in ALGORITHMS]
FLAT = ALGORITHMS + ["smpi_ompi", "smpi_mpich"]
SELECTORS = ["ompi", "mpich"]
MODELS = {
    "default": [],
    "flat": ["--cfg=smpi/lat-factor:0:1", "--cfg=smpi/bw-factor:0:1"],
}
DISTRIBUTIONS = ["broadcast", "spike", "half_full", "linear_decreasing", "geometric"]
# SMPI sends messages below smpi/send-is-detached-thresh (default 65536 B) detached, and in SimGrid 3.32 each
# completion scans a list (std::list::remove in CommImpl::finish) that grows with the messages in flight over
# all ranks (docs/simulation.md, caveats). Default Sparbit has p/2 messages per rank in flight in its last step, so below this size one
# call costs ~3.5 s of CPU at p=128, ~180 s at p=256 and days at p=1024. --at-scale runs it below this size
# only up to p=128, and runs sparbit:coalesce=1 (one message per step) at every size.
DETACHED_LIMIT = 65536
# The full sweep (no --quick) applies the same rule: at p > SLOW_SPARBIT_P, default sparbit runs only from
# DETACHED_LIMIT on, and sparbit:coalesce=1 runs in every cell, so every cell has a Sparbit variant.
SLOW_SPARBIT_P = 128
COALESCED = "sparbit:coalesce=1"
SPARBITS = ["sparbit", COALESCED]
# bruck and sparbit:coalesce=1 send non-contiguous (hindexed) messages, which SMPI copies into a private
# buffer on both sides; in their last step that is ~p/2 blocks per rank per side, ~p*p*block bytes over all
# ranks at once. At p=1024 and 64 KiB (64 GiB by this estimate) the run was OOM-killed on this 23 GB machine
# (docs/simulation.md). recursive_multiplying too: 11 GiB of anonymous memory at p=320 and 256 KiB (measured, alone;
# sparbit, ring and neighbor_exchange 0.1 GiB), and the p=320 cell ran out of memory above that. The full
# sweep skips these three where the estimate exceeds NONCONTIG_LIMIT (an estimate, not a measured threshold).
NONCONTIG = ["bruck", COALESCED, "recursive_multiplying"]
NONCONTIG_LIMIT = 8 << 30
# --no-detached: every message rendezvous (not detached). Removes SimGrid 3.32's cost of many small detached
# messages in flight (default sparbit below 64 KiB) but changes every implementation's simulated time: a
# different network model, passed to every smpirun of the run.
NO_DETACHED = ["--cfg=smpi/send-is-detached-thresh:0"]


def thesis_procs(cluster):
    """The thesis's process counts: step 8, odd series 5.. and even series 8.., up to 2 per core."""
    nodes, cores, _ = CLUSTERS[cluster]
    top = 2 * nodes * cores
    return sorted(set(range(5, top, 8)) | set(range(8, top + 1, 8)))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sweep: yahoo+cervino, a few p, 1 B-64 KiB")
    ap.add_argument("--bench", default=sim.BENCH)
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--clusters", nargs="+", choices=list(CLUSTERS))
    ap.add_argument("--mappings", nargs="+", choices=["sequential", "cyclic"])
    ap.add_argument("--models", nargs="+", choices=list(MODELS))
    ap.add_argument("--procs", nargs="+", type=int, help="process counts (default: thesis series per cluster)")
    ap.add_argument("--max-bytes", default=None, help="largest block (default 1MiB; --quick 64KiB)")
    ap.add_argument("--collectives", nargs="+", default=["allgather"], choices=["allgather", "allgatherv"])
    ap.add_argument("--distributions", nargs="+", default=DISTRIBUTIONS, choices=DISTRIBUTIONS)
    ap.add_argument("--jobs", type=int, default=2, help="smpirun processes at once")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per smpirun")
    ap.add_argument("--hierarchical", action="store_true",
                    help="also time hierarchical with each inter algorithm, and summarize it against the flat ones")
    ap.add_argument("--summarize", metavar="CSV", help="only summarize an existing results.csv")
    ap.add_argument("--resume", action="store_true",
                    help="keep --out's results.csv and timings.csv and run only the cells timings.csv does not list "
                         "(after an interrupted sweep; give the same options as the first run)")
    ap.add_argument("--at-scale", action="store_true",
                    help="fattree, sequential, default model, p=1024 (--procs overrides), one smpirun per --sizes "
                         "value, 1 at a time; prints simulated times per algorithm and size side by side")
    ap.add_argument("--sizes", nargs="+", default=["1", "1KiB", "64KiB"], help="block sizes for --at-scale")
    ap.add_argument("--algorithms", nargs="+",
                    help="--at-scale: these algorithm specs only (default: all, plus sparbit:coalesce=1)")
    ap.add_argument("--no-detached", action="store_true",
                    help="pass --cfg=smpi/send-is-detached-thresh:0 to every smpirun (a different network model: "
                         "changes every implementation's simulated time; lets default sparbit run below 64 KiB "
                         "at p > 128, also in --at-scale)")
    return ap.parse_args()


def plan(args):
    if args.quick:
        clusters = args.clusters or ["yahoo", "cervino"]
        mappings = args.mappings or ["sequential", "cyclic"]
        models = args.models or ["default", "flat"]
        procs = {c: args.procs or [16, 37, 64] for c in clusters}
        max_bytes = args.max_bytes or "64KiB"
    else:
        clusters = args.clusters or ["yahoo", "cervino", "fattree"]
        mappings = args.mappings or ["sequential", "cyclic"]
        models = args.models or ["default", "flat"]
        procs = {c: args.procs or (thesis_procs(c) if c != "fattree" else [64, 128, 256, 512, 1000, 1024])
                 for c in clusters}
        max_bytes = args.max_bytes or "1MiB"
    cells = []
    for collective in args.collectives:
        dists = [""] if collective == "allgather" else args.distributions
        for dist in dists:
            for cluster in clusters:
                for mapping in mappings:
                    for model in models:
                        for p in procs[cluster]:
                            cells.append((collective, dist, cluster, mapping, model, p))
    return cells, max_bytes


def full_sweep_algorithms(args, p, size):
    """The ompi run's algorithms for one block size in the full sweep, and (algorithm, reason) for those left out."""
    algorithms = ALGORITHMS + [COALESCED] + (HIERARCHICAL if args.hierarchical else [])
    skipped = []
    if p > SLOW_SPARBIT_P and size < DETACHED_LIMIT and not args.no_detached:
        skipped.append(("sparbit", f"not run: detached (p > {SLOW_SPARBIT_P}, block < {DETACHED_LIMIT} B)"))
    if p * p * size > NONCONTIG_LIMIT:
        skipped += [(a, f"not run: memory (p*p*block > {NONCONTIG_LIMIT >> 30} GiB)") for a in NONCONTIG]
    names = {a for a, _ in skipped}
    return [a for a in algorithms if a not in names], skipped


def size_range(min_bytes, max_bytes):
    sizes, b = [], size_bytes(min_bytes)
    while b <= size_bytes(max_bytes):
        sizes.append(b)
        b *= 2
    return sizes


def run_cell(args, cell, max_bytes, min_bytes="1", algorithms_ompi=None, full_rules=False):
    """One cell: one smpirun per selector; with full_rules (the full sweep) the ompi selector's sizes are split
    into consecutive ranges with the same algorithm list (full_sweep_algorithms), one smpirun each, and the
    algorithms left out are returned as rows with verified = "not run: <reason>" and no times."""
    collective, dist, cluster, mapping, model, p = cell
    rows = []
    notes = []
    bench_lines = []
    seen = set()
    start = time.time()
    runs = []  # (selector, algorithms, min_bytes, max_bytes)
    for selector in SELECTORS:
        if selector != "ompi":
            runs.append((selector, ["native"], min_bytes, max_bytes))
        elif not full_rules:
            runs.append((selector, algorithms_ompi or ALGORITHMS + (HIERARCHICAL if args.hierarchical else []),
                         min_bytes, max_bytes))
        else:
            for b in size_range(min_bytes, max_bytes):
                algorithms, skipped = full_sweep_algorithms(args, p, b)
                for a, reason in skipped:
                    if collective == "allgatherv" and a.endswith("recursive_doubling"):
                        continue
                    rows.append({"collective": collective, "distribution": dist, "cluster": cluster,
                                 "mapping": mapping, "model": model_name(args, model), "p": p, "bytes": b,
                                 "total_bytes": "", "algorithm": a, "min_us": "", "avg_us": "", "max_us": "",
                                 "verified": reason})
                if runs and runs[-1][0] == selector and runs[-1][1] == algorithms:
                    runs[-1] = (selector, algorithms, runs[-1][2], str(b))
                else:
                    runs.append((selector, algorithms, str(b), str(b)))
    for selector, algorithms, lo, hi in runs:
        if collective == "allgatherv":
            algorithms = [a for a in algorithms if not a.endswith("recursive_doubling")]
        cmd = [*sim.smpirun(cluster, mapping, p), args.bench, sim.selector_flag(selector), *sim.SMPI_FLAGS,
               *MODELS[model],
               *(NO_DETACHED if args.no_detached else []),
               "--collective", collective, "--min-bytes", lo, "--max-bytes", hi,
               "--iterations", "1", "--warmup", "0", "--csv", "--algorithms", *algorithms]
        if dist:
            cmd += ["--distribution", dist]
        try:
            env = sim.environment(cluster, mapping, p)
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
            # SimGrid 3.32's max-min solver can abort on its own precision check, or crash, when many
            # flows share a link (seen: Cervino cyclic, 160 ranks, Sparbit at 64 B and 1 KiB; both
            # runs complete with the coarser tolerance): one retry with it, noted.
            if proc.returncode != 0 and ("maxmin precision" in proc.stderr or "Segmentation fault" in proc.stderr):
                notes.append(f"{cell} {selector}: SimGrid abort (exit {proc.returncode}), rerun with "
                             f"{sim.COARSE_PRECISION}")
                at = cmd.index(args.bench) + 1
                proc = subprocess.run(cmd[:at] + [sim.COARSE_PRECISION] + cmd[at:], capture_output=True, text=True, env=env,
                                      timeout=args.timeout)
        except subprocess.TimeoutExpired:
            notes.append(f"{cell} {selector} {lo}-{hi} B: timed out after {args.timeout} s")
            continue
        if proc.returncode != 0:
            notes.append(f"{cell} {selector}: smpirun exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
        table = []  # collshim-bench's own CSV: its header, then its rows
        for line in proc.stdout.splitlines():
            if line.startswith("collective,") or line.startswith(collective + ","):
                bench_lines.append(line)  # for collshim-tune plot
                table.append(line)
            if line.startswith("#"):
                if "MISMATCH" in line or "mismatches" in line and " 0 mismatches" not in line:
                    notes.append(f"{cell}: {line}")
        # Read by the header's names (a spec such as "hierarchical:inter=ring,intra=shm" is quoted).
        for f in csv.DictReader(table) if table and table[0].startswith("collective,") else []:
            if f["collective"] != collective:
                continue
            if (int(f["bytes"]), f["algorithm"]) in seen:  # native again in a later size range's smpirun
                continue
            seen.add((int(f["bytes"]), f["algorithm"]))
            rows.append({"collective": collective, "distribution": dist, "cluster": cluster, "mapping": mapping,
                         "model": model_name(args, model), "p": p, "bytes": int(f["bytes"]),
                         "total_bytes": int(f["total_bytes"]), "algorithm": f["algorithm"],
                         "min_us": float(f["min_us"]), "avg_us": float(f["avg_us"]), "max_us": float(f["max_us"]),
                         "verified": f["verified"]})
        for line in proc.stderr.splitlines():
            if "MISMATCH" in line or "error" in line.lower():
                notes.append(f"{cell} {selector}: {line}")
    return cell, rows, notes, bench_lines, time.time() - start


TIMINGS_HEADER = "collective,distribution,cluster,mapping,model,p,seconds"


def cell_key(args, cell):
    """A cell as timings.csv names it: the model column carries +no-detached, like results.csv."""
    collective, dist, cluster, mapping, model, p = cell
    return (collective, dist, cluster, mapping, model_name(args, model), str(p))


def finished_cells(args, csv_path, timings_path):
    """--resume: the cells timings.csv lists as complete (a cell's line is written after its rows)."""
    if not (os.path.exists(csv_path) and os.path.exists(timings_path)):
        sys.exit(f"run: --resume needs {csv_path} and {timings_path} from an earlier run with the same --out")
    with open(timings_path, newline="") as f:
        if f.readline().rstrip("\r\n") != TIMINGS_HEADER:
            sys.exit(f"run: {timings_path}:1: expected the header '{TIMINGS_HEADER}'")
        f.seek(0)
        done = {(r["collective"], r["distribution"], r["cluster"], r["mapping"], r["model"], r["p"])
                for r in csv.DictReader(f)}
    # Rows of a cell cut off between its rows and its timings line are dropped: the cell runs again.
    with open(csv_path, newline="") as f:
        rows = [r for r in csv.DictReader(f)
                if (r["collective"], r["distribution"], r["cluster"], r["mapping"], r["model"], r["p"]) in done]
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    return done


def model_name(args, model):
    return model + ("+no-detached" if args.no_detached else "")


FIELDS = ["collective", "distribution", "cluster", "mapping", "model", "p", "bytes", "total_bytes", "algorithm",
          "min_us", "avg_us", "max_us", "verified"]


def load(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["p"] = int(r["p"])
        r["bytes"] = int(r["bytes"])
        for k in ("min_us", "avg_us", "max_us"):
            r[k] = float(r[k]) if r[k] != "" else math.nan  # "not run: ..." rows have no times
    return rows


def not_run(r):
    return r["verified"].startswith("not run")


def group(rows):
    """(collective, dist, cluster, mapping, model) -> (p, bytes) -> algorithm -> row."""
    g = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if not_run(r):
            continue
        g[(r["collective"], r["distribution"], r["cluster"], r["mapping"], r["model"])][(r["p"], r["bytes"])][
            r["algorithm"]] = r
    return g


def sparbit_stats(cells, contenders, metric, variants=("sparbit",)):
    """Thesis metrics: share of cells where Sparbit is fastest, and 1 - T_sparbit/T_second there. T_sparbit is
    the best of the Sparbit `variants` that ran in the cell (default: default sparbit only); the other Sparbit
    variants are never counted as the second best."""
    wins, gains, n = 0, [], 0
    for algs in cells:
        mine = [algs[a][metric] for a in variants if a in algs]
        others = [algs[a][metric] for a in contenders if a in algs and a not in SPARBITS]
        if not mine or not others:
            continue
        n += 1
        if min(mine) < min(others):
            wins += 1
            gains.append(100.0 * (1 - min(mine) / min(others)))
    if n == 0:
        return None
    return (n, wins, 100.0 * wins / n, statistics.mean(gains) if gains else 0.0,
            statistics.median(gains) if gains else 0.0, max(gains) if gains else 0.0)


def best_of_mappings(g, key_wo_mapping):
    """Table 7: each algorithm's time per cell is its best over both mappings."""
    collective, dist, cluster, model = key_wo_mapping
    a = g.get((collective, dist, cluster, "sequential", model), {})
    b = g.get((collective, dist, cluster, "cyclic", model), {})
    merged = {}
    for cell in set(a) & set(b):
        algs = {}
        for alg in set(a[cell]) & set(b[cell]):
            ra, rb = a[cell][alg], b[cell][alg]
            algs[alg] = {m: min(ra[m], rb[m]) for m in ("min_us", "avg_us", "max_us")}
        merged[cell] = algs
    return merged


def hierarchical_summary(g):
    """Best hierarchical variant vs the best flat implementation (collshim's and SMPI's), max metric."""
    out = ["== hierarchical (best inter per cell) vs the best flat implementation (algorithms and SMPI "
           "selectors), max metric; speed-up = T_best_flat / T_best_hierarchical"]
    out.append(f"{'collective':<22} {'cluster':<8} {'mapping':<10} {'model':<7} {'cells':>5} {'wins %':>7} "
               f"{'median x':>8} {'best x':>7} {'worst x':>7}  best inter (cells)")
    per_size = defaultdict(list)
    for key in sorted(g):
        speedups, inters = [], defaultdict(int)
        for (p, b), algs in g[key].items():
            flat = [algs[a]["max_us"] for a in FLAT if a in algs]
            hier = {a: algs[a]["max_us"] for a in HIERARCHICAL if a in algs}
            if not flat or not hier:
                continue
            best = min(hier, key=hier.get)
            inters[best] += 1
            x = min(flat) / hier[best] if hier[best] > 0 else math.inf
            speedups.append(x)
            per_size[(key[2], key[3], key[4], b)].append(x)
        if not speedups:
            continue
        name = key[0] + (f"/{key[1]}" if key[1] else "")
        wins = 100.0 * sum(1 for x in speedups if x > 1) / len(speedups)
        out.append(f"{name:<22} {key[2]:<8} {key[3]:<10} {key[4]:<7} {len(speedups):>5} {wins:>7.1f} "
                   f"{statistics.median(speedups):>8.2f} {max(speedups):>7.2f} {min(speedups):>7.2f}  " +
                   ", ".join(f"{a.replace('hierarchical:inter=', '') if ':' in a else 'native'} {n}"
                             for a, n in sorted(inters.items(), key=lambda x: -x[1])))
    if per_size:
        out.append("-- by block size (all collectives and p): geometric mean speed-up")
        for (cluster, mapping, model, b) in sorted(per_size):
            xs = per_size[(cluster, mapping, model, b)]
            gm = math.exp(statistics.mean(math.log(x) for x in xs))
            out.append(f"{cluster:<8} {mapping:<10} {model:<7} {b:>8} B  x{gm:.2f} over {len(xs)} cells")
    return out


def summarize(rows):
    g = group(rows)
    out = []
    skipped = defaultdict(int)
    for r in rows:
        if not_run(r):
            skipped[(r["algorithm"], r["verified"])] += 1
    coalesced = any(r["algorithm"] == COALESCED and not not_run(r) for r in rows)
    if skipped:
        out.append("== Not run (rows in results.csv with verified = 'not run: ...' and no times), count of "
                   "(cluster, mapping, model, p, size) cells:")
        for (a, reason), n in sorted(skipped.items()):
            out.append(f"  {a}: {n} cells, {reason}")
        out.append("")
    if coalesced:
        out.append(f"Sparbit rows: 'sparbit' = default sparbit alone, over the cells where it ran ('cells' column); "
                   f"'sparbit|c1' = the better of sparbit and {COALESCED} in each cell, over every cell with either "
                   f"(where default sparbit was not run, that is {COALESCED} alone). Neither variant counts as the "
                   "second best.")
        out.append("")
    variant_sets = [("sparbit", ("sparbit",))] + ([("sparbit|c1", tuple(SPARBITS))] if coalesced else [])
    sets = [("thesis set (sparbit vs bruck, recursive_doubling, ring, neighbor_exchange)", THESIS_SET),
            ("all (adds recursive_multiplying, smpi_ompi, smpi_mpich)",
             ALGORITHMS + ["smpi_ompi", "smpi_mpich"])]
    head = f"{'collective':<22} {'cluster':<8} {'mapping':<10} {'model':<7} {'metric':<4} {'cells':>5} {'best in %':>9} " \
           f"{'mean %':>7} {'median %':>8} {'highest %':>9}" + ("  sparbit" if coalesced else "")
    for title, contenders in sets:
        out.append(f"== Sparbit best-in share and improvement over the second best; contenders: {title}")
        out.append("-- Table 6 format: per mapping")
        out.append(head)
        for key in sorted(g):
            collective, dist, cluster, mapping, model = key
            for vname, variants in variant_sets:
                for metric in ("avg_us", "max_us"):
                    s = sparbit_stats(g[key].values(), contenders, metric, variants)
                    if s:
                        name = collective + (f"/{dist}" if dist else "")
                        out.append(f"{name:<22} {cluster:<8} {mapping:<10} {model:<7} {metric[:3]:<4} {s[0]:>5} "
                                   f"{s[2]:>9.2f} {s[3]:>7.2f} {s[4]:>8.2f} {s[5]:>9.2f}" +
                                   (f"  {vname}" if coalesced else ""))
        out.append("-- Table 7 format: each algorithm at its best of both mappings")
        out.append(head)
        for key in sorted({(k[0], k[1], k[2], k[4]) for k in g}):
            merged = best_of_mappings(g, key)
            for vname, variants in variant_sets:
                for metric in ("avg_us", "max_us"):
                    s = sparbit_stats(merged.values(), contenders, metric, variants)
                    if s:
                        name = key[0] + (f"/{key[1]}" if key[1] else "")
                        out.append(f"{name:<22} {key[2]:<8} {'best-of':<10} {key[3]:<7} {metric[:3]:<4} {s[0]:>5} "
                                   f"{s[2]:>9.2f} {s[3]:>7.2f} {s[4]:>8.2f} {s[5]:>9.2f}" +
                                   (f"  {vname}" if coalesced else ""))
        out.append("")
    if any(r["algorithm"].startswith("hierarchical") for r in rows):
        out += hierarchical_summary(g) + [""]
    # Who wins, all contenders, max metric.
    out.append("== Best implementation per cell (max metric, all contenders): count of cells")
    for key in sorted(g):
        counts = defaultdict(int)
        for algs in g[key].values():
            counts[min(algs, key=lambda a: algs[a]["max_us"])] += 1
        name = key[0] + (f"/{key[1]}" if key[1] else "")
        out.append(f"{name} {key[2]} {key[3]} {key[4]}: " +
                   ", ".join(f"{a} {n}" for a, n in sorted(counts.items(), key=lambda x: -x[1])))
    return "\n".join(out)


def bench_rows_folder(args, fresh, prefix=""):
    """OUT/bench, where the cells' collshim-bench rows go; fresh: without the PREFIX*.csv of a former run."""
    folder = os.path.join(args.out, "bench")
    os.makedirs(folder, exist_ok=True)
    if fresh:
        for name in os.listdir(folder):
            if name.startswith(prefix) and name.endswith(".csv") and (prefix or not name.startswith("at-scale-")):
                os.remove(os.path.join(folder, name))
    return folder


def keep_bench_rows(args, cell, lines, prefix=""):
    """Appends a cell's collshim-bench --csv rows to OUT/bench/PREFIXCLUSTER-MODEL.csv (one header), the input
    of collshim-tune plot: the rows carry the placement (nodes, ppn, mapping), not the network model."""
    collective, dist, cluster, mapping, model, p = cell
    path = os.path.join(args.out, "bench", f"{prefix}{cluster}-{model_name(args, model)}.csv")
    header = os.path.exists(path) and os.path.getsize(path) > 0
    with open(path, "a") as f:
        for line in lines:
            if line.startswith("collective,"):
                if header:
                    continue
                header = True
            f.write(line + "\n")


size_bytes = sim.size_bytes


def stripped_bench(args):
    """A stripped copy of collshim-bench in --out: smpirun copies the binary once per simulated rank
    (dlopen privatization), and the RelWithDebInfo one is 8.8 MB (0.5 MB stripped): 17 s of copying at
    p=1024. Same code, same simulated times. Falls back to --bench if strip is missing."""
    target = os.path.join(args.out, "collshim-bench.stripped")
    try:
        subprocess.run(["strip", "-o", target, args.bench], check=True, capture_output=True)
        return target
    except (OSError, subprocess.CalledProcessError):
        return args.bench


def at_scale(args):
    """The scale check: every algorithm at p=1024 next to smpi_ompi and smpi_mpich, one size per smpirun
    (a cell's cost grows with the sizes it sweeps, and one smpirun at p=1024 takes minutes)."""
    clusters = args.clusters or ["fattree"]
    cells = [("allgather", "", c, m, mo, p) for c in clusters for m in (args.mappings or ["sequential"])
             for mo in (args.models or ["default"]) for p in (args.procs or [1024])]
    t0 = time.time()
    bench_rows_folder(args, fresh=True, prefix="at-scale-")
    rows, notes, timings = [], [], []
    for cell in cells:
        for size in args.sizes:
            slow = cell[5] > SLOW_SPARBIT_P and size_bytes(size) < DETACHED_LIMIT and not args.no_detached
            default = ALGORITHMS + ["sparbit:coalesce=1"] + (HIERARCHICAL if args.hierarchical else [])
            algorithms = [a for a in (args.algorithms or default) if a != "sparbit" or not slow]
            if slow and "sparbit" in (args.algorithms or ALGORITHMS):
                notes.append(f"{cell} {size}: default sparbit not run below {DETACHED_LIMIT} B at p > 128 (DETACHED_LIMIT)")
            _, cell_rows, cell_notes, bench_lines, seconds = run_cell(args, cell, size, min_bytes=size,
                                                                      algorithms_ompi=algorithms)
            keep_bench_rows(args, cell, bench_lines, prefix="at-scale-")
            rows += cell_rows
            notes += cell_notes
            timings.append((cell + (size,), seconds))
            print(f"run: {' '.join(str(x) for x in cell if x != '')} {size}: {seconds:.1f} s wall", flush=True)
    with open(os.path.join(args.out, "at-scale.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    contenders = ALGORITHMS + ["sparbit:coalesce=1"] + (HIERARCHICAL if args.hierarchical else []) + \
        ["smpi_ompi", "smpi_mpich"]
    out = [f"at-scale: wall time {time.time() - t0:.0f} s; simulated time of one call in us, max over ranks "
           "(avg over ranks); * = fastest"]
    for key, cells_ in sorted(group(rows).items()):
        out.append(f"== {key[0]} {key[2]} {key[3]} {key[4]}")
        ps_sizes = sorted(cells_)
        width = max(len(a) for a in contenders) + 1
        out.append(f"{'algorithm':<{width}}" + "".join(f"{f'p={p} {b} B':>24}" for p, b in ps_sizes))
        best = {c: min(cells_[c], key=lambda a: cells_[c][a]["max_us"]) for c in ps_sizes}
        for alg in contenders:
            line = f"{alg:<{width}}"
            for c in ps_sizes:
                r = cells_[c].get(alg)
                skipped = alg == "sparbit" and c[0] > SLOW_SPARBIT_P and c[1] < DETACHED_LIMIT and not args.no_detached
                text = ("not run" if skipped else "missing") if r is None else (f"{r['max_us']:.1f} ({r['avg_us']:.1f})" +
                                                    ("*" if best[c] == alg else " "))
                line += f"{text:>24}"
            out.append(line)
    for cell, seconds in timings:
        out.append(f"wall: {' '.join(str(x) for x in cell if x != '')}: {seconds:.0f} s (both selectors)")
    for n in notes:
        out.append(f"note: {n}")
    text = "\n".join(out)
    with open(os.path.join(args.out, "at-scale.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    bad = [r for r in rows if r["verified"] == "MISMATCH"]
    missing = [n for n in notes if "timed out" in n or "exit" in n]
    return 1 if bad or missing else 0


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.at_scale:
        if not os.access(args.bench, os.X_OK):
            sys.exit(f"run: {args.bench} not found; build it with cmake -S . -B build-smpi -DCOLLSHIM_MPI=smpi")
        args.bench = stripped_bench(args)
        return at_scale(args)
    if args.summarize:
        rows = load(args.summarize)
    else:
        if not os.access(args.bench, os.X_OK):
            sys.exit(f"run: {args.bench} not found; build it with cmake -S . -B build-smpi -DCOLLSHIM_MPI=smpi")
        cells, max_bytes = plan(args)
        csv_path = os.path.join(args.out, "results.csv")
        timings_path = os.path.join(args.out, "timings.csv")
        notes_path = os.path.join(args.out, "notes.txt")
        done = finished_cells(args, csv_path, timings_path) if args.resume else set()
        todo = [c for c in cells if cell_key(args, c) not in done]
        print(f"run: {len(cells)} cells x {len(SELECTORS)} smpirun, blocks 1 B-{max_bytes}, {args.jobs} at once"
              + (f"; {len(cells) - len(todo)} already in {csv_path}, skipped" if args.resume else ""), flush=True)
        bench_rows_folder(args, fresh=not args.resume)
        if not args.resume:
            for path, header in ((csv_path, ",".join(FIELDS)), (timings_path, TIMINGS_HEADER), (notes_path, None)):
                with open(path, "w") as f:
                    f.write(header + "\n" if header else "")
        t0 = time.time()
        notes = []
        # Each cell's rows are appended as soon as it completes, and its timings.csv line after them, so an
        # interrupted sweep (the full one takes a day or more) keeps what it finished: --resume skips those.
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(run_cell, args, c, max_bytes, full_rules=not args.quick) for c in todo]
            for i, future in enumerate(as_completed(futures)):
                cell, cell_rows, cell_notes, bench_lines, seconds = future.result()
                keep_bench_rows(args, cell, bench_lines)
                with open(csv_path, "a", newline="") as f:
                    csv.DictWriter(f, fieldnames=FIELDS).writerows(cell_rows)
                with open(timings_path, "a") as f:
                    f.write(",".join(str(x) for x in cell_key(args, cell)) + f",{seconds:.2f}\n")
                with open(notes_path, "a") as f:
                    f.writelines(n + "\n" for n in cell_notes)
                notes += cell_notes
                print(f"run: [{i + 1}/{len(todo)}] {' '.join(str(x) for x in cell if x != '')}: {seconds:.1f} s",
                      flush=True)
        rows = load(csv_path)
        print(f"run: {len(rows)} rows in {csv_path}; wall time {time.time() - t0:.0f} s")
        unverified = sum(1 for r in rows if r["verified"] != "ok")
        bad = [r for r in rows if r["verified"] == "MISMATCH"]
        print(f"run: {len(rows) - unverified} results verified, {len(bad)} mismatches")
        for n in notes:
            print("run: note:", n)
        if bad:
            print("run: error: results differ from SMPI's own collective", file=sys.stderr)
    text = summarize(rows)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    if not args.summarize:
        print(f"run: collshim-bench's rows in {os.path.join(args.out, 'bench')}; heat maps: "
              f"collshim-tune plot {os.path.join(args.out, 'bench', 'CLUSTER-MODEL.csv')} -o DIR")
    return 1 if any(r["verified"] == "MISMATCH" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
