#!/usr/bin/python3
"""When the description is wrong: the shim's confirmation replayed with and without its widening
(docs/cost-model.md, "When the description is wrong"), on measured candidate times, under several
descriptions of the same platform (e.g. one calibrated on two nodes sharing a leaf switch and one on
two nodes far apart).

Per cell (mapping, size) and SMPI selector, collshim-config explain --json gives the key's plan under
COLLSHIM_TUNE=confirm: the trial (native and the model's three best), each one's prediction, and the
candidates a widened trial adds. The replay applies the shim's rule to the measured medians: where
measured / predicted ratios of the trial are more than `ratio_spread` apart, the trial is widened to
native, its winner and the next ranked; the fastest stays, native unless beaten by 5%
(TuningPolicy::first_margin). explain costs native whole; a job may cost it only to a lower bound and
then leaves it out of the ratios, so the replay can widen a little more often than a job. Where a
cell's candidates were measured only in part (a few at large sizes), its oracle is the best of those.

  bench/sim/widening_replay.py --candidates bench/sim/model/allgather-p256/candidates.csv \\
      --candidates bench/sim/widening/candidates-p256-1KiB-4KiB.csv \\
      --platform oversub-contending --procs 256 \\
      --description leaf=bench/sim/calibrated/oversub-contending.yaml \\
      --description far=bench/sim/calibrated/oversub-contending-far.yaml --out bench/sim/widening
"""
import argparse
import collections
import csv
import json
import math
import os
import subprocess
import sys

SELECTORS = ["ompi", "mpich", "mvapich2", "impi"]
FIRST_MARGIN = 1.05  # TuningPolicy::first_margin: native stays unless another is this much faster


def explain(args, description, row, selector):
    cmd = [args.config, "explain", "--collective", row["collective"], "--procs", row["ranks"], "--nodes", row["nodes"],
           "--ppn", row["ppn"], "--mapping", row["mapping"], "--block-bytes", row["bytes"], "--platform", description,
           "--library", "smpi-" + selector, "--tune", "confirm", "--exclude", "intra=shm", args.no_rules, "--json"]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["model"]


def fastest(trial, times, own):
    measured = [own if a == "native" else times.get(a, math.inf) for a in trial]
    best = min(measured)
    if trial[0] == "native" and best * FIRST_MARGIN > own:
        return own, "native"
    return best, trial[measured.index(best)]


def replay(model, times, own):
    """(confirmation's time, pick, spread, widened?, widened trial, time, pick)."""
    trial = model["trial"]
    first_us, first_pick = fastest(trial, times, own)
    ratios = []
    for algorithm, predicted in zip(trial, model["trial_predicted_us"]):
        measured = own if algorithm == "native" else times.get(algorithm)
        if predicted and measured:
            ratios.append(measured / predicted)
    spread = max(ratios) / min(ratios) if len(ratios) >= 2 else 1.0
    widen = model["widen"]
    if spread <= widen["ratio_spread"] or not widen["candidates"]:
        return first_us, first_pick, spread, False, trial, first_us, first_pick
    wider = ["native"] + ([first_pick] if first_pick != "native" else [])
    wider += [a for a in widen["candidates"] if a not in wider]
    us, pick = fastest(wider, times, own)
    return first_us, first_pick, spread, True, wider, us, pick


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--candidates", required=True, action="append",
                    help="measured candidates (model_evidence.py's compact CSV; again for more)")
    ap.add_argument("--platform", required=True)
    ap.add_argument("--procs", default="256")
    ap.add_argument("--description", action="append", required=True, metavar="NAME=YAML")
    ap.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "collshim-config"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    args.no_rules = os.path.join(args.out, "no-rules.yaml")
    with open(args.no_rules, "w") as f:
        f.write("version: 1\nrules: []\n")
    cells = collections.defaultdict(dict)
    facts = {}
    for path in args.candidates:
        with open(path) as f:
            for row in csv.DictReader(f):
                if row["platform"] != args.platform or row["ranks"] != args.procs or row["collective"] != "allgather":
                    continue
                key = (row["mapping"], int(row["bytes"]))
                cells[key][row["algorithm"]] = float(row["median_us"])
                facts[key] = row
    rows = []
    for description in args.description:
        name, path = description.split("=", 1)
        for key in sorted(cells):
            times = cells[key]
            candidates = {a: t for a, t in times.items() if not a.startswith("smpi_")}
            for selector in SELECTORS:
                own = times.get("smpi_" + selector)
                if own is None:
                    continue
                model = explain(args, path, facts[key], selector)
                oracle = min(min(candidates.values()), own)
                first_us, first_pick, spread, widened, wider, us, pick = replay(model, candidates, own)
                rows.append({"description": name, "mapping": key[0], "bytes": key[1], "selector": selector,
                             "native_us": own, "oracle_us": oracle, "oracle": min(candidates, key=candidates.get)
                             if min(candidates.values()) < own else "native",
                             "confirm_trial": " ".join(model["trial"]), "confirm_pick": first_pick,
                             "confirm_us": first_us, "ratio_spread": spread, "widened": int(widened),
                             "widened_trial": " ".join(wider) if widened else "", "widened_pick": pick,
                             "widened_us": us})
    with open(os.path.join(args.out, f"{args.platform}-p{args.procs}.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in row.items()})
    lines = ["| description | mapping | cells | widened | confirm: of oracle / within 5% | "
             "with widening: of oracle / within 5% |", "|---|---|---|---|---|---|"]
    for name in [d.split("=", 1)[0] for d in args.description]:
        for mapping in sorted({r["mapping"] for r in rows}) + ["all"]:
            subset = [r for r in rows if r["description"] == name and mapping in ("all", r["mapping"])]
            if not subset:
                continue
            figures = []
            for column in ("confirm_us", "widened_us"):
                of_oracle = [r["oracle_us"] / r[column] for r in subset]
                within = sum(1 for v in of_oracle if v >= 0.95)
                figures.append(f"{geomean(of_oracle):.3f} / {within} of {len(subset)}")
            lines.append(f"| {name} | {mapping} | {len(subset)} | {sum(r['widened'] for r in subset)} | "
                         f"{figures[0]} | {figures[1]} |")
    # Per size under SMPI's ompi selector (the one every cell has): of oracle without / with widening.
    names = [d.split("=", 1)[0] for d in args.description]
    lines += ["", "Per size, `ompi` selector: of oracle, confirmation / with widening (`w`: widened)", "",
              "| mapping | bytes | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for mapping, size in sorted({(r["mapping"], r["bytes"]) for r in rows}):
        cells_text = []
        for name in names:
            match = [r for r in rows if (r["description"], r["mapping"], r["bytes"], r["selector"]) ==
                     (name, mapping, size, "ompi")]
            if not match:
                cells_text.append("-")
                continue
            r = match[0]
            cells_text.append(f"{r['oracle_us'] / r['confirm_us']:.3f} / {r['oracle_us'] / r['widened_us']:.3f}"
                              f"{' w' if r['widened'] else ''}")
        lines.append(f"| {mapping} | {size} | " + " | ".join(cells_text) + " |")
    with open(os.path.join(args.out, f"{args.platform}-p{args.procs}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
