#!/usr/bin/python3
"""The cost model deciding inside the shim, on simulated clusters nobody tuned (SimGrid SMPI).

For every platform, placement and process count of the plan, and every part (collective and sizes):

  candidates  collshim-tune measure: every tuning candidate (no intra=shm: shared-memory copies take
              no simulated time) next to SMPI's `ompi` selector, then native alone under `mpich`,
              `mvapich2` and `impi`                                     -> OUT/candidates-PLATFORM.csv
  decisions   collshim-bench --rules none under each of the four selectors, COLLSHIM_PLATFORM set to
              the platform's description calibrated on two of its nodes (bench/sim/calibrated/, by
              collshim-tune calibrate under smpirun), no rule: the `collshim` row is the model's
              decision, confirmed by trial calls (COLLSHIM_TUNE=confirm)  -> OUT/decisions-PLATFORM.csv
  replay      offline, no simulation: per measured cell and selector, the trial calls a job's key
              would run (collshim-config explain --platform, the shim's own plan, for each
              COLLSHIM_TUNE mode) applied to every candidate's measured time: what each mode would
              reach, on every placement measured, decided or not; beside it the measured collshim
              row where the decision runs were made (OUT/cells.csv)  -> OUT/replay.csv, OUT/replay.md
  control     the row-order control: on yahoo-contending sequential under impi, Alltoallv sparse_8
              16-128 B, the collshim row forced to native beside the native row (the same call in
              another row position)                                     -> OUT/control.csv
  compact     the columns the evidence needs, into --evidence (bench/sim/model/, committed)
  analyze     per cell and selector: collshim against the run's own library (the selector), the
              best of the four selectors and the oracle (the fastest of every candidate and the run's
              own library); the model alone (its pick's time, from the candidates); the trial calls
              against full online tuning                                -> OUT/cells.csv, OUT/summary.md

One skew-free barrier (MPICH's) before every timed call, 1 us per message sent and received
(bench/sim/tune.py's network model). Simulated time is deterministic: one timed call per size. Every
measurement is resumable: rerun the same command. Needs build/ (collshim-tune, collshim-config) and build-smpi/
(collshim-bench, -DCOLLSHIM_MPI=smpi).

  bench/sim/model_evidence.py --out bench/sim/out/model [--platforms ...] [--procs 64 128 256]
                              [--parts allgather allreduce alltoall alltoallv] [--stages ...]
"""
import argparse
import collections
import csv
import math
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_common as sim  # noqa: E402  (the platforms, SMPI's flags, COLLSHIM_TOPOLOGY, CSV files)

# What each part measures: (collective, variant, smallest, largest size).
PARTS = {
    "allgather": [("allgather", None, "1", "256KiB")],
    "allreduce": [("allreduce", None, "8", "64KiB")],  # int64 sums (collshim-bench's Allreduce)
    "alltoall": [("alltoall", None, "1", "4KiB")],
    "alltoallv": [("alltoallv", "sparse_8", "8", "512"), ("alltoallv", "power_law", "8", "512")],
}
SELECTORS = ["ompi", "mpich", "mvapich2", "impi"]
EXCLUDE = "intra=shm"


def launcher(platform, mapping, p, selector):
    return [*sim.smpirun(platform, mapping, p), sim.selector_flag(selector), *sim.SMPI_FLAGS, *sim.OVERHEAD]


def measure(args, out, platform, mapping, p, selector, part, extra, env_extra, label):
    collective, variant, low, high = part
    if args.max_bytes and sim.size_bytes(args.max_bytes) < sim.size_bytes(high):
        high = args.max_bytes  # a partial run; the same command without --max-bytes resumes the rest
    cmd = [args.tune, "measure", "-o", out, "--bench", args.bench, "--platform", platform, "--iterations", "1",
           "--warmup", "0", "--min-bytes", low, "--max-bytes", high, "--bench-arg=--verify-limit=256MiB",
           "--collective", collective, *(["--variant", variant] if variant else []), *extra]
    env = sim.environment(platform, mapping, p, **env_extra)
    print(f"model_evidence: {label} {platform} {mapping} p={p} {collective}{' ' + variant if variant else ''} "
          f"{selector}", flush=True)
    run = launcher(platform, mapping, p, selector)
    if subprocess.run(cmd + ["--", *run], env=env, stdout=subprocess.DEVNULL).returncode == 0:
        return
    # SimGrid's solver can abort on a rounding residue; a coarser precision gets past it (resumes).
    print(f"model_evidence: SimGrid abort, resuming with {sim.COARSE_PRECISION}", flush=True)
    if subprocess.run(cmd + ["--", *run, sim.COARSE_PRECISION], env=env, stdout=subprocess.DEVNULL).returncode == 0:
        return
    # A deterministic failure (SMPI's cross-communicator match under `impi`, docs/simulation.md): the
    # sizes measured so far stay, the rest of this run is missing, and the plan goes on.
    print(f"model_evidence: FAILED twice, sizes left missing: {label} {platform} {mapping} p={p} {collective}"
          f"{' ' + variant if variant else ''} {selector}", flush=True)


def cells(args):
    for platform in args.platforms:
        nodes, cores, _ = sim.CLUSTERS[platform]
        for mapping in args.mappings:
            for p in args.procs:
                if p > nodes * cores:  # a host per core: more ranks would share cores the platform lacks
                    print(f"model_evidence: {platform} has {nodes * cores} cores, p={p} left out", flush=True)
                    continue
                for name in args.parts:
                    for part in PARTS[name]:
                        if not args.variants or part[1] in args.variants:
                            yield platform, mapping, p, part


def stage_candidates(args):
    for platform, mapping, p, part in cells(args):
        out = os.path.join(args.out, f"candidates-{platform}.csv")
        measure(args, out, platform, mapping, p, "ompi", part, ["--exclude", EXCLUDE], {}, "candidates")
        for selector in SELECTORS[1:]:
            measure(args, out, platform, mapping, p, selector, part, ["--algorithms", "native"], {}, "native")


def stage_decisions(args):
    for platform, mapping, p, part in cells(args):
        out = os.path.join(args.out, f"decisions-{platform}.csv")
        description = os.path.join(args.descriptions, platform + ".yaml")
        # No second look at a pick (COLLSHIM_TUNE_RECHECK=0): SMPI has no warm-up to wait out, and 64
        # more simulated calls per key would multiply the simulation time.
        env = {"COLLSHIM_PLATFORM": description, "COLLSHIM_TUNE": args.tune_mode, "COLLSHIM_TUNE_EXCLUDE": EXCLUDE,
               "COLLSHIM_TUNE_RECHECK": "0"}
        for selector in SELECTORS:
            measure(args, out, platform, mapping, p, selector, part,
                    ["--algorithms", "native", "--bench-arg=--rules=none"], env, "decisions")


def stage_control(args):
    """The row-order control: the collshim row forced to native (COLLSHIM_ALLTOALLV=native) beside the
    native row, where the decision runs measured a collshim row that kept native below the native row
    (yahoo-contending sequential, impi, Alltoallv sparse_8 16-128 B): the same call in another row."""
    out = os.path.join(args.out, "control.csv")
    measure(args, out, "yahoo-contending", "sequential", 64, "impi", ("alltoallv", "sparse_8", "16", "128"),
            ["--algorithms", "native", "linear", "--bench-arg=--rules=none"], {"COLLSHIM_ALLTOALLV": "native"},
            "control")


def read(path):
    if not os.path.exists(path):
        return []
    return sim.read_csv(path)


def candidates_of(args, platform):
    """OUT/candidates-PLATFORM.csv, with the placement as the shim saw it (restored from the host files
    where the rows were compacted before it was kept)."""
    path = os.path.join(args.out, f"candidates-{platform}.csv")
    return sim.restore_placements(read(path), path)


def cell_key(row):
    """A cell: the placement as the shim saw it (mapping, nodes, most ranks on one: a cyclic run with one
    rank per node is classed sequential), p, collective, pattern, size."""
    placement = f"{row['mapping']} {row['nodes']}x{row['ppn']}"
    return placement, int(row["ranks"]), row["collective"], row["distribution"], int(row["bytes"])


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def stage_analyze(args):
    cell_rows = []
    for platform in args.platforms:
        # (mapping, p, collective, variant, bytes) -> {algorithm: us}, natives by selector
        times = collections.defaultdict(dict)
        natives = collections.defaultdict(dict)
        decisions = read(os.path.join(args.out, f"decisions-{platform}.csv"))
        for row in candidates_of(args, platform):
            key = cell_key(row)
            algorithm = row["algorithm"]
            if algorithm.startswith("smpi_"):
                natives[key][algorithm[5:]] = float(row["median_us"])
            else:
                times[key][algorithm] = float(row["median_us"])
        decided = collections.defaultdict(dict)  # key -> {selector: the collshim row}
        last_selector = {}
        for row in decisions:
            key = cell_key(row)
            # Each run writes its native row (smpi_SELECTOR) before its collshim row of the same size.
            if row["algorithm"].startswith("smpi_"):
                last_selector[key] = row["algorithm"][5:]
                natives[key].setdefault(last_selector[key], float(row["median_us"]))
            elif row["algorithm"] == "collshim" and key in last_selector:
                decided[key][last_selector[key]] = row
        for key, by_selector in decided.items():
            for selector, row in by_selector.items():
                if selector not in natives[key] or not times[key]:
                    continue
                own = natives[key][selector]
                candidates = times[key]
                oracle = min(min(candidates.values()), own)
                best4 = min(natives[key].values())
                collshim = float(row["median_us"])
                pick = row["model_pick"] or "native"
                alone = own if pick == "native" else candidates.get(pick, float("nan"))
                # Full online tuning: one warm-up and two timed calls of every candidate and native.
                online_us = 3 * (sum(candidates.values()) + own)
                mapping, p, collective, variant, size = key
                cell_rows.append({
                    "platform": platform, "mapping": mapping, "procs": p, "collective": collective,
                    "pattern": variant, "bytes": size, "selector": selector, "collshim_us": collshim,
                    "decision": row["decision"], "source": row["source"], "model_pick": pick,
                    "model_alone_us": alone, "native_us": own, "best_of_four_us": best4, "oracle_us": oracle,
                    "trial_calls": int(row["trial_calls"]), "trial_us": float(row["trial_us"]),
                    "online_calls": 3 * (len(candidates) + 1), "online_us": online_us})
    path = os.path.join(args.out, "cells.csv")
    with open(path, "w", newline="") as f:
        fields = list(cell_rows[0].keys()) if cell_rows else ["platform"]
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for row in cell_rows:
            writer.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in row.items()})
    summarize(args, cell_rows)


def figures(cells):
    """The targets' figures over cells (stage_analyze's rows, times in µs as numbers): of the oracle
    (geometric mean) and the share within 5% of it, the worst and geometric-mean speed-up against the
    run's own library, against the best of four, the model alone's of the oracle and worst against
    the own library, and the trial calls per key and their time against full online tuning's."""
    of_oracle = [r["oracle_us"] / r["collshim_us"] for r in cells]
    vs_own = [r["native_us"] / r["collshim_us"] for r in cells]
    alone = [r for r in cells if not math.isnan(r["model_alone_us"])]
    alone_own = [r["native_us"] / r["model_alone_us"] for r in alone]
    return {
        "of_oracle": geomean(of_oracle),
        "within": sum(1 for v in of_oracle if v >= 0.95) / len(cells),
        "worst_own": min(vs_own),
        "vs_own": geomean(vs_own),
        "vs_best": geomean([r["best_of_four_us"] / r["collshim_us"] for r in cells]),
        "alone": geomean([r["oracle_us"] / r["model_alone_us"] for r in alone]),
        "alone_worst_own": min(alone_own) if alone_own else float("nan"),
        "trials": sum(r["trial_calls"] for r in cells) / len(cells),
        "trial_share": sum(r["trial_us"] for r in cells) / max(1e-9, sum(r["online_us"] for r in cells)),
    }


def summarize(args, rows):
    lines = ["# The cost model deciding in the shim (bench/sim/model_evidence.py)", "",
             "Per collective and platform (all placements, process counts, sizes and the four selectors as the run's own "
             "library): collshim is the model's decision confirmed by trial calls; model alone is its pick "
             "without confirmation. Ratios are speed-ups (reference time / collshim time); 'of oracle' is "
             "oracle / collshim (1 = the fastest of every candidate and the run's own library).", "",
             "| collective | platform | cells | of oracle (geomean) | within 5% of oracle | worst vs own library | "
             "vs own library (geomean) | vs best of four (geomean) | model alone: of oracle | model alone: worst vs "
             "own | trial calls per key (mean) | trial time / online tuning's |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    groups = [(c, p) for c in sorted({r["collective"] for r in rows}) + ["all"] for p in args.platforms + ["all"]]
    for collective, platform in groups:
        subset = [r for r in rows if platform in ("all", r["platform"]) and collective in ("all", r["collective"])]
        if not subset:
            continue
        f = figures(subset)
        lines.append(f"| {collective} | {platform} | {len(subset)} | {f['of_oracle']:.3f} | {f['within']:.0%} | "
                     f"{f['worst_own']:.3f} | {f['vs_own']:.3f} | {f['vs_best']:.3f} | {f['alone']:.3f} | "
                     f"{f['alone_worst_own']:.3f} | {f['trials']:.1f} | {f['trial_share']:.3f} |")
    lines += ["", "Cells below 0.97 of the run's own library:", ""]
    for r in sorted(rows, key=lambda r: r["native_us"] / r["collshim_us"]):
        ratio = r["native_us"] / r["collshim_us"]
        if ratio >= 0.97:
            break
        lines.append(f"- {r['platform']} {r['mapping']} p={r['procs']} {r['collective']} {r['pattern']} "
                     f"{r['bytes']} B, {r['selector']}: {ratio:.3f} (collshim {r['decision']} via {r['source']}, "
                     f"model pick {r['model_pick']})")
    path = os.path.join(args.out, "summary.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


# Replay: collshim-config explain --json gives the shim's plan for a key: where the model decides, the
# algorithms its timed calls try ("trial", its pick alone where none are timed).


def planned_trial(args, platform, row, selector, mode):
    """The algorithms a job's key runs (the pick alone, or those of its timed calls)."""
    cmd = [args.config, "explain", "--collective", row["collective"], "--procs", row["ranks"], "--nodes", row["nodes"],
           "--ppn", row["ppn"], "--mapping", row["mapping"], "--block-bytes", row["bytes"], "--platform",
           os.path.join(args.descriptions, platform + ".yaml"), "--library", "smpi-" + selector, "--tune", mode,
           "--exclude", EXCLUDE, args.no_rules]
    if row["distribution"]:  # an Alltoallv pattern: --bytes is each listed block's, as collshim-bench sends it
        cmd += ["--pattern", row["distribution"]]
    explained = json.loads(subprocess.run(cmd + ["--json"], capture_output=True, text=True, check=True).stdout)
    model = explained["model"]
    if not model:
        return ["native"]
    return model["trial"] if len(model["trial"]) > 1 else [model["pick"]]


def stage_replay(args):
    args.no_rules = os.path.join(args.out, "no-rules.yaml")
    with open(args.no_rules, "w") as f:
        f.write("version: 1\nrules: []\n")
    modes = ["off", "confirm", "online"]
    # Online tuning's margin: native stays unless another candidate beats it by this factor.
    first_margin = sim.constants(args.model)["online_tuning"]["first_margin"]
    rows = []
    for platform in args.platforms:
        cells_measured = collections.defaultdict(dict)
        facts = {}
        for row in candidates_of(args, platform):
            if int(row["ranks"]) not in args.procs:
                continue
            key = cell_key(row)
            cells_measured[key][row["algorithm"]] = float(row["median_us"])
            facts[key] = row
        for key, times in sorted(cells_measured.items()):
            candidates = {a: t for a, t in times.items() if not a.startswith("smpi_")}
            # A cell whose natives are not all measured yet (a partial candidates stage) has no best of four.
            if any("smpi_" + selector not in times for selector in SELECTORS):
                continue
            for selector in SELECTORS:
                own = times.get("smpi_" + selector)
                if own is None or not candidates:
                    continue
                out = {"platform": platform, "mapping": key[0], "procs": key[1], "collective": key[2],
                       "pattern": key[3], "bytes": key[4], "selector": selector, "native_us": own,
                       "best_of_four_us": min(t for a, t in times.items() if a.startswith("smpi_")),
                       "oracle_us": min(min(candidates.values()), own)}
                for mode in modes:
                    trial = planned_trial(args, platform, facts[key], selector, mode)
                    measured = [own if a == "native" else candidates.get(a, math.inf) for a in trial]
                    best = min(measured)
                    if len(trial) > 1 and trial[0] == "native" and best * first_margin > own:
                        best = own
                    out[f"{mode}_us"] = best
                    out[f"{mode}_trial"] = " ".join(trial)
                rows.append(out)
    # Where the decision runs were made too (OUT/cells.csv), the measured collshim row beside the
    # replayed confirmation: how far the replay stands in for the shim's own path.
    measured = {decided_key(c): c["collshim_us"] for c in read(os.path.join(args.out, "cells.csv"))}
    for out in rows:
        out["measured_us"] = float(measured[decided_key(out)]) if decided_key(out) in measured else ""
    with open(os.path.join(args.out, "replay.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in row.items()})
    lines = ["# Offline replay of the shim's plans on the measured candidates (bench/sim/model_evidence.py "
             "--stages replay)", "",
             "Per cell and selector, the algorithms a job's key would run under each COLLSHIM_TUNE mode "
             "(collshim-config explain --platform: the model's pick, or the timed calls that decide), "
             "applied to every candidate's measured time; 'of oracle' is oracle / reached.", "",
             "| collective | platform | cells | mode | of oracle (geomean) | within 5% of oracle | "
             "worst vs own library | vs own library | vs best of four |", "|---|---|---|---|---|---|---|---|---|"]
    for collective in sorted({r["collective"] for r in rows}) + ["all"]:
        for platform in args.platforms + ["all"]:
            subset = [r for r in rows if collective in ("all", r["collective"]) and platform in ("all", r["platform"])]
            if not subset:
                continue
            for mode in modes:
                reached = [r[f"{mode}_us"] for r in subset]
                of_oracle = [r["oracle_us"] / t for r, t in zip(subset, reached)]
                within = sum(1 for v in of_oracle if v >= 0.95) / len(subset)
                vs_own = [r["native_us"] / t for r, t in zip(subset, reached)]
                vs_best = [r["best_of_four_us"] / t for r, t in zip(subset, reached)]
                lines.append(f"| {collective} | {platform} | {len(subset)} | {mode} | {geomean(of_oracle):.3f} | "
                             f"{within:.0%} | {min(vs_own):.3f} | {geomean(vs_own):.2f}x | {geomean(vs_best):.2f}x |")
    lines += replay_against_measured(rows, args.platforms)
    with open(os.path.join(args.out, "replay.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def replay_against_measured(rows, platforms):
    """replay.md's table of the cells both replayed and measured through the shim (measured_us): the
    measured collshim row over the replayed confirmation, and the targets' figures from each."""
    pairs = [r for r in rows if r["measured_us"] != ""]
    if not pairs:
        return []
    lines = ["", "The replayed confirmation against the decision runs, where both were made (measured / replayed "
             "collshim time; of the oracle and within 5% of it, from each):", "",
             "| collective | platform | cells | measured / replayed (geomean) | within 5% of each other | range | "
             "of oracle: measured / replayed | within 5% of oracle: measured / replayed |",
             "|---|---|---|---|---|---|---|---|"]
    for collective in sorted({r["collective"] for r in pairs}) + ["all"]:
        for platform in platforms + ["all"]:
            subset = [r for r in pairs if collective in ("all", r["collective"]) and platform in ("all", r["platform"])]
            if not subset:
                continue
            a = agreement([(r["measured_us"], r["confirm_us"], r["oracle_us"], r["oracle_us"]) for r in subset])
            lines.append(f"| {collective} | {platform} | {a['cells']} | {a['ratio']:.3f} | {a['close']:.0%} | "
                         f"{a['low']:.3f}–{a['high']:.3f} | {a['oracle_measured']:.3f} / {a['oracle_replayed']:.3f} | "
                         f"{a['within_measured']:.0%} / {a['within_replayed']:.0%} |")
    return lines


def decided_key(row):
    """A cell of the decision runs or the replay: placement, p, collective, pattern, size and the run's
    own library (the selector). Replays made before the pattern was kept have none: uniform."""
    return (row["platform"], row["mapping"], int(row["procs"]), row["collective"], row.get("pattern", ""),
            int(row["bytes"]), row["selector"])


def agreement(pairs):
    """How the replayed confirmation stands in for the measured one, over (measured collshim, replayed
    collshim, the measured cell's oracle, the replayed cell's oracle) times: measured / replayed (geometric
    mean, share within 5% of each other, range), and each one's of the oracle and share within 5% of it."""
    ratio = [m / r for m, r, _, _ in pairs]
    measured = [o / m for m, _, o, _ in pairs]
    replayed = [o / r for _, r, _, o in pairs]
    return {"cells": len(pairs), "ratio": geomean(ratio), "close": sum(1 for v in ratio if abs(v - 1) <= 0.05) / len(pairs),
            "low": min(ratio), "high": max(ratio), "oracle_measured": geomean(measured),
            "oracle_replayed": geomean(replayed),
            "within_measured": sum(1 for v in measured if v >= 0.95) / len(pairs),
            "within_replayed": sum(1 for v in replayed if v >= 0.95) / len(pairs)}


# The columns the evidence needs, written by `--stages compact` into --evidence (committed:
# bench/sim/model/); the measurement's other columns (library text, date, spread) are left out.
# (Candidates compacted before 2026-11-28 lack nodes and ppn: bench/sim/shipped_table.py recovers them.)
# The decision runs keep the placement as the shim saw it (nodes, ppn), which the analysis keys cells by
# and gives the candidates of the same mapping and p.
COMPACT = ["platform", "mapping", "ranks", "collective", "distribution", "bytes", "algorithm", "median_us", "decision",
           "source", "trial_calls", "trial_us", "model_pick", "predicted_us", "predicted_native_us", "nodes", "ppn"]


def stage_compact(args):
    os.makedirs(args.evidence, exist_ok=True)
    # Per output, its measurement files: one per platform, or the control stage's one (written only
    # where that stage ran).
    sources = {kind: [os.path.join(args.out, f"{kind}-{platform}.csv") for platform in args.platforms]
               for kind in ["candidates", "decisions"]}
    sources["control"] = [os.path.join(args.out, "control.csv")]
    for kind, paths in sources.items():
        paths = [path for path in paths if os.path.exists(path)]
        if kind == "control" and not paths:
            continue
        rows = [{k: r.get(k, "") for k in COMPACT} for path in paths for r in sim.read_csv(path)
                if int(r["ranks"]) in args.procs]
        # The candidates keep the placement too: a cyclic run with one rank per node reads `sequential`.
        columns = COMPACT[:8] + ["nodes", "ppn"] if kind == "candidates" else COMPACT
        with open(os.path.join(args.evidence, f"{kind}.csv"), "w", newline="") as f:
            out = csv.DictWriter(f, columns, extrasaction="ignore")
            out.writeheader()
            out.writerows(rows)
    for name in ["cells.csv", "summary.md", "replay.csv", "replay.md"]:
        if not os.path.exists(os.path.join(args.out, name)):
            continue
        with open(os.path.join(args.out, name)) as source, open(os.path.join(args.evidence, name), "w") as target:
            target.write(source.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(sim.HERE, "out", "model"))
    ap.add_argument("--platforms", nargs="+", default=sim.CONTENDING, choices=sim.CONTENDING)
    ap.add_argument("--mappings", nargs="+", default=["sequential", "cyclic"])
    ap.add_argument("--procs", nargs="+", type=int, default=[64, 128, 256])
    ap.add_argument("--parts", nargs="+", default=list(PARTS), choices=list(PARTS))
    ap.add_argument("--variants", nargs="+", help="of the parts, only these variants (Alltoallv's patterns: "
                    "sparse_8, power_law), e.g. one per simulation stream")
    ap.add_argument("--max-bytes", help="measure the parts' sizes up to this one only (e.g. 128, 4KiB): a "
                    "partial run, which the same command without it resumes")
    ap.add_argument("--stages", nargs="+", default=["candidates", "decisions", "analyze"],
                    choices=["candidates", "decisions", "analyze", "replay", "control", "compact"])
    ap.add_argument("--evidence", default=os.path.join(sim.HERE, "model"),
                    help="where --stages compact writes the committed evidence")
    ap.add_argument("--descriptions", default=os.path.join(sim.HERE, "calibrated"),
                    help="folder of the platforms' calibrated descriptions (PLATFORM.yaml)")
    ap.add_argument("--tune-mode", default="confirm", choices=["confirm", "off"])
    ap.add_argument("--tune", default=sim.TUNE)
    ap.add_argument("--config", default=os.path.join(sim.BUILD, "collshim-config"))
    ap.add_argument("--model", default=sim.MODEL, help="collshim-model (the tools' constants)")
    ap.add_argument("--bench", default=sim.BENCH)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if "candidates" in args.stages:
        stage_candidates(args)
    if "decisions" in args.stages:
        stage_decisions(args)
    if "analyze" in args.stages:
        stage_analyze(args)
    if "replay" in args.stages:
        stage_replay(args)
    if "control" in args.stages:
        stage_control(args)
    if "compact" in args.stages:
        stage_compact(args)


if __name__ == "__main__":
    sys.exit(main())
