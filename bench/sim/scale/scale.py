#!/usr/bin/python3
"""The shim at 1,024-4,096 simulated ranks (SimGrid SMPI): its heap and MPI_Init against native, and the
cost model's confirmation (trial calls per key against the key's first calls). docs/results.md, "At
1,024-4,096 ranks", shows the figures; this script makes them.

Each run is one smpirun of build-smpi/bench/shim_probe (bench/sim/scale/shim_probe.cpp: the shim's
entry points linked into a small program, so every simulated rank holds its own shim), in one of
three modes:
  native   COLLSHIM_DISABLE=1: every call passed through (the baseline)
  shim     the shim with its shipped rules (config/default.yaml), no platform: under SMPI no rule
           applies, so every call passes through after the shim's bookkeeping
  forced   every collective forced to one of the shim's algorithms (COLLSHIM_ALLGATHER=bruck,
           COLLSHIM_ALLTOALL=bruck, COLLSHIM_ALLREDUCE=recursive_doubling): the shim's schedules and
           its own communicators are built and held
  model    COLLSHIM_PLATFORM (bench/sim/calibrated/PLATFORM.yaml), no rule (an empty rule file), the
           model's pick confirmed by trial calls (COLLSHIM_TUNE=confirm, the default with a platform),
           intra=shm excluded as in bench/sim/model_evidence.py; COLLSHIM_REPORT gives the trial calls
The probe prints, at barriers between phases, the process's malloc heap and resident set (every
simulated rank lives in smpirun's one process), the slowest rank's simulated MPI_Init and host wall
time, and per key the slowest rank's simulated time of its first --calls calls.

  bench/sim/scale/scale.py --out bench/sim/out/scale --procs 256 1024 4096 --modes native shim forced \
      [--platform fattree-contending] [--calls 100] [--largest 4096]     # -> OUT/probe.csv, OUT/*.json
  bench/sim/scale/scale.py --out bench/sim/out/scale --stages compact     # -> bench/sim/scale/*.csv
  bench/sim/scale/scale.py --stages committed   # p = 64-256 decision runs -> confirmation_committed.csv
  bench/sim/scale/scale.py --procs 1024 4096 --stages decision  # decision_cost -> decision_time.csv, decision_memory.csv

p above the platform's cores (fattree-contending: 64 x 16 = 1,024) puts several ranks on each host: a
sequential host file with each host repeated (COLLSHIM_TOPOLOGY says the node layout). Resumable: a
(p, mode) already in OUT/probe.csv is not run again.
"""
import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import smpi_common as sim  # noqa: E402

PROBE = os.path.join(sim.ROOT, "build-smpi", "bench", "shim_probe")
FORCED = {"COLLSHIM_ALLGATHER": "bruck", "COLLSHIM_ALLTOALL": "bruck", "COLLSHIM_ALLREDUCE": "recursive_doubling"}
FIELDS = ["platform", "procs", "mode", "phase", "what", "value"]


def hostfile(out, platform, p):
    """Sequential placement of p ranks: each host (core) repeated p / hosts times."""
    nodes, cores, _ = sim.CLUSTERS[platform]
    hosts = [h.strip() for h in open(sim.hostfile(platform, "sequential")) if h.strip()]
    repeat = max(1, -(-p // (nodes * cores)))
    path = os.path.join(out, f"hosts-{platform}-{p}.txt")
    with open(path, "w") as f:
        for h in hosts:
            f.write((h + "\n") * repeat)
    return path, nodes if p >= nodes * cores else -(-p // cores)


def run(args, p, mode):
    os.makedirs(args.out, exist_ok=True)
    hosts, nodes = hostfile(args.out, args.platform, p)
    env = dict(os.environ, COLLSHIM_TOPOLOGY=f"nodes={nodes},mapping=sequential" if nodes > 1
               else "nodes=1,mapping=single_node")
    report = os.path.join(args.out, f"report-{args.platform}-{p}-{mode}.json")
    if mode == "native":
        env["COLLSHIM_DISABLE"] = "1"
    else:
        env["COLLSHIM_REPORT"] = report
    if mode == "forced":
        env.update(FORCED)
    if mode == "model":
        no_rules = os.path.join(args.out, "no-rules.yaml")
        with open(no_rules, "w") as f:
            f.write("version: 1\nrules: []\n")
        env.update(COLLSHIM_CONFIG=no_rules, COLLSHIM_TUNE="confirm", COLLSHIM_TUNE_EXCLUDE="intra=shm",
                   COLLSHIM_PLATFORM=os.path.join(sim.HERE, "calibrated", args.platform + ".yaml"))
    cmd = ["/usr/bin/time", "-f", "maxrss_kb %M", "timeout", str(args.timeout), "nice", "-n", "10",
           *sim.smpirun(args.platform, "sequential", p, hosts=hosts), sim.selector_flag(args.selector),
           *sim.SMPI_FLAGS, *sim.OVERHEAD, args.probe, str(args.calls), str(args.largest)]
    print(f"scale: {args.platform} p={p} {mode}", flush=True)
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    rows = []
    for line in proc.stdout.splitlines():
        if line.startswith("probe,"):
            _, phase, what, value = line.split(",")
            rows.append([phase, what, value])
    m = re.search(r"maxrss_kb (\d+)", proc.stderr)
    rows.append(["run", "smpirun_wall_s", f"{wall:.1f}"])
    rows.append(["run", "exit", str(proc.returncode)])
    rows.append(["run", "calls_per_key", str(args.calls)])
    rows.append(["run", "largest_block", str(args.largest)])
    if m:
        rows.append(["run", "maxrss_bytes", str(int(m.group(1)) * 1024)])
    if proc.returncode != 0:
        print(f"scale: exit {proc.returncode}\n{proc.stderr[-2000:]}", flush=True)
    path = os.path.join(args.out, "probe.csv")
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(FIELDS)
        for r in rows:
            w.writerow([args.platform, p, mode, *r])


def done(args):
    path = os.path.join(args.out, "probe.csv")
    if not os.path.exists(path):
        return set()
    return {(r["platform"], int(r["procs"]), r["mode"]) for r in csv.DictReader(open(path))
            if r["what"] == "exit" and r["value"] == "0"}


def trial_rows(report):
    """Per key of a COLLSHIM_REPORT JSON: trial calls and their time, and the rows after."""
    keys = {}
    for r in json.load(open(report))["rows"]:
        if r["comm_size"] <= 2:
            continue
        key = (r["comm_size"], r["collective"], r["bucket_low_bytes"])
        k = keys.setdefault(key, {"trial_calls": 0, "trial_s": 0.0, "after_calls": 0, "after_s": 0.0, "settled": ""})
        if r["rule"] == "tuning trial":
            k["trial_calls"] += r["calls"]
            k["trial_s"] += float(r["time_max_s"])
        else:
            k["after_calls"] += r["calls"]
            k["after_s"] += float(r["time_max_s"])
            k["settled"] = f"{r['algorithm']} ({r['rule']})"
    return keys


def compact(args):
    rows = list(csv.DictReader(open(os.path.join(args.out, "probe.csv"))))
    value = {(r["platform"], int(r["procs"]), r["mode"], r["phase"], r["what"]): r["value"] for r in rows}
    # A run killed or failed part way keeps the phases it reached (its exit status says so).
    runs = sorted({(r["platform"], int(r["procs"]), r["mode"]) for r in rows if r["what"] == "exit"})
    # Memory and MPI_Init: per (p, mode), the heap and resident set after each phase, and MPI_Init.
    with open(os.path.join(args.evidence, "memory_init.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["platform", "procs", "mode", "init_sim_us", "init_wall_s", "init_cpu_s", "heap_init_mib", "heap_own_comm_mib", "heap_collectives_mib",
                    "heap_two_comms_mib", "rss_two_comms_mib", "maxrss_mib", "smpirun_wall_s", "largest_block", "exit"])
        for platform, p, mode in runs:
            g = lambda phase, what: value.get((platform, p, mode, phase, what), "")  # noqa: E731
            mib = lambda v: f"{int(v) / 2**20:.1f}" if v else ""  # noqa: E731
            init = g("init", "init_sim_s")
            w.writerow([platform, p, mode, f"{float(init) * 1e6:.1f}" if init else "", g("init", "wall_s"),
                        g("init", "cpu_s"),
                        mib(g("init", "heap_bytes")), mib(g("own_communicator", "heap_bytes")),
                        mib(g("collectives", "heap_bytes")),
                        mib(g("two_communicators", "heap_bytes")), mib(g("two_communicators", "rss_bytes")),
                        mib(g("run", "maxrss_bytes")), g("run", "smpirun_wall_s"),
                        g("run", "largest_block") or "4096", g("run", "exit")])
    # Per rank, against native at the same p: what the shim adds after MPI_Init, with one communicator
    # of the application's (its shadow and maps), after a call of each collective on it (schedules,
    # the decision cache), and its resident set; MPI_Init's simulated and host time.
    with open(os.path.join(args.evidence, "per_rank.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["platform", "procs", "mode", "heap_after_init_kib", "heap_per_communicator_kib",
                    "heap_collectives_kib", "resident_kib", "init_sim_us", "init_sim_native_us",
                    "init_host_ms_per_rank_over_native", "init_cpu_ms_per_rank_over_native"])
        for platform, p, mode in runs:
            if mode == "native" or (platform, p, "native") not in runs:
                continue
            def num(m, phase, what):
                v = value.get((platform, p, m, phase, what), "")
                return float(v) if v else None
            def kib(phase, base_phase=None, what="heap_bytes"):
                here, native = num(mode, phase, what), num("native", phase, what)
                if here is None or native is None:
                    return ""
                if base_phase:
                    b_here, b_native = num(mode, base_phase, what), num("native", base_phase, what)
                    if b_here is None or b_native is None:
                        return ""
                    here, native = here - b_here, native - b_native
                return f"{(here - native) / p / 1024:.1f}"
            init, init_native = num(mode, "init", "init_sim_s"), num("native", "init", "init_sim_s")
            wall, wall_native = num(mode, "init", "wall_s"), num("native", "init", "wall_s")
            cpu, cpu_native = num(mode, "init", "cpu_s"), num("native", "init", "cpu_s")
            w.writerow([platform, p, mode, kib("init"), kib("own_communicator", "init"),
                        kib("collectives", "own_communicator"), kib("collectives", what="rss_bytes"),
                        f"{init * 1e6:.1f}" if init is not None else "",
                        f"{init_native * 1e6:.1f}" if init_native is not None else "",
                        f"{(wall - wall_native) / p * 1e3:.1f}" if None not in (wall, wall_native) else "",
                        f"{(cpu - cpu_native) / p * 1e3:.1f}" if None not in (cpu, cpu_native) else ""])
    print(open(os.path.join(args.evidence, "per_rank.csv")).read())
    # Confirmation: per key of the model runs, trial calls and their time against the first calls.
    with open(os.path.join(args.evidence, "confirmation.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["platform", "procs", "collective", "bytes", "first_calls", "native_first_calls_us",
                    "model_first_calls_us", "trial_calls", "trial_us", "trial_share_of_first_calls", "settled"])
        for platform, p, mode in runs:
            if mode != "model":
                continue
            report = os.path.join(args.out, f"report-{platform}-{p}-model.json")
            keys = trial_rows(report) if os.path.exists(report) else {}
            for (phase, what), v in sorted((k[3:], v) for k, v in value.items()
                                           if k[:3] == (platform, p, mode) and k[4] == "first_calls_s"):
                collective, nbytes = phase.split(":")
                nbytes = int(nbytes)
                native = value.get((platform, p, "native", phase, what), "")
                bucket = 1 << (nbytes.bit_length() - 1)
                k = keys.get((p, collective.capitalize(), bucket), {})
                first = float(v)
                w.writerow([platform, p, collective, nbytes, args.calls,
                            f"{float(native) * 1e6:.1f}" if native else "", f"{first * 1e6:.1f}",
                            k.get("trial_calls", ""), f"{k['trial_s'] * 1e6:.1f}" if k else "",
                            f"{k['trial_s'] / first:.3f}" if k and first > 0 else "", k.get("settled", "")])
    print(open(os.path.join(args.evidence, "memory_init.csv")).read())
    print(open(os.path.join(args.evidence, "confirmation.csv")).read())


def decision_time(args):
    """The decision's processor and wall time per key (build/bench/decision_cost, the shim's decision
    without simulation), for the keys of the confirmation figure -> bench/sim/scale/decision_time.csv."""
    out = subprocess.run(["nice", "-n", "10", os.path.join(sim.BUILD, "bench", "decision_cost"), "--platform",
                          os.path.join(sim.HERE, "calibrated", args.platform + ".yaml"), "--procs",
                          *[str(p) for p in args.procs], "--placement", "sequential:16", "--collective", "allgather",
                          "alltoall", "--bytes", "8", "64", "512", "4KiB", "--library", "smpi-3.32-" + args.selector,
                          "--repeat", "3", "--csv"], capture_output=True, text=True, check=True).stdout
    rows = list(csv.DictReader(line for line in out.splitlines() if not line.startswith("#")))
    with open(os.path.join(args.evidence, "decision_time.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["platform", "procs", "placement", "collective", "bytes", "candidates", "exact", "wall_s", "cpu_s",
                    "pick", "native_algorithm"])
        for r in rows:
            w.writerow([args.platform, r["procs"], r["placement"], r["collective"], r["bytes"], r["candidates"],
                        r["exact"], r["median_s"], r["cpu_s"], r["pick"], r["native_algorithm"]])
    print(open(os.path.join(args.evidence, "decision_time.csv")).read())


# The committed decision runs (bench/sim/model_evidence.py, p = 64-256) whose cells are current
# (bench/sim/evidence_status.py's CURRENT): the confirmation's trial calls as the shim made them.
def decision_memory(args):
    """The deciding rank's peak resident set while it decides one key (build/bench/decision_cost under
    /usr/bin/time, one decision, 1 KiB, sequential 16 per node), and that of a decision at p = 2 (the
    program alone) -> bench/sim/scale/decision_memory.csv."""
    def peak(p, collective):
        proc = subprocess.run(["/usr/bin/time", "-f", "maxrss_kb %M", "nice", "-n", "10",
                               os.path.join(sim.BUILD, "bench", "decision_cost"), "--platform",
                               os.path.join(sim.HERE, "calibrated", args.platform + ".yaml"), "--procs", str(p),
                               "--placement", "sequential:16" if p >= 16 else f"sequential:{p}", "--collective",
                               collective, "--pattern", "uniform", "--bytes", "1KiB", "--library",
                               "smpi-3.32-" + args.selector, "--repeat", "1", "--csv"],
                              capture_output=True, text=True, check=True)
        return int(re.search(r"maxrss_kb (\d+)", proc.stderr).group(1)) * 1024
    with open(os.path.join(args.evidence, "decision_memory.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["platform", "procs", "collective", "peak_rss_mib", "above_p2_mib"])
        for collective in ["allgather", "allreduce", "alltoall", "alltoallv"]:
            base = peak(2, collective)
            for p in args.procs:
                m = peak(p, collective)
                w.writerow([args.platform, p, collective, f"{m / 2**20:.1f}", f"{(m - base) / 2**20:.1f}"])
    print(open(os.path.join(args.evidence, "decision_memory.csv")).read())


def confirmation_committed(args):
    """Per p and collective (Allgather, Alltoall, 8 B-4 KiB, every platform, placement and selector of the
    committed decision runs): the trial calls per key and their time against the key's first --calls
    calls (trial time plus the settled algorithm's calls after them), and those first calls against
    native's -> bench/sim/scale/confirmation_committed.csv."""
    sys.path.insert(0, os.path.dirname(HERE))
    import evidence_status  # noqa: E402
    cells = []
    for folder, collectives in evidence_status.CURRENT:
        path = os.path.join(sim.HERE, "model", folder, "cells.csv")
        for r in csv.DictReader(open(path)):
            if (collectives is None or r["collective"] in collectives) and r["collective"] in ("allgather", "alltoall") \
                    and 8 <= int(r["bytes"]) <= 4096 and r["trial_calls"]:
                cells.append(r)
    groups = {}
    for r in cells:
        groups.setdefault((int(r["procs"]), r["collective"]), []).append(r)
    n = args.calls
    with open(os.path.join(args.evidence, "confirmation_committed.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["procs", "collective", "cells", "trial_calls_median", "trial_calls_max", "trial_share_median",
                    "trial_share_max", f"first_{n}_vs_native_geomean", f"first_{n}_vs_native_worst",
                    "cells_ahead_of_native_by_call_{}".format(n)])
        for (p, collective), rs in sorted(groups.items()):
            shares, ratios, ahead = [], [], 0
            calls = sorted(int(r["trial_calls"]) for r in rs)
            for r in rs:
                t, k = float(r["trial_us"]), int(r["trial_calls"])
                first = t + max(0, n - k) * float(r["collshim_us"])
                shares.append(t / first)
                ratios.append(first / (n * float(r["native_us"])))
                ahead += first <= n * float(r["native_us"])
            shares.sort()
            geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            w.writerow([p, collective, len(rs), calls[len(calls) // 2], calls[-1], f"{shares[len(shares) // 2]:.3f}",
                        f"{shares[-1]:.3f}", f"{geo:.3f}", f"{max(ratios):.3f}", ahead])
    print(open(os.path.join(args.evidence, "confirmation_committed.csv")).read())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(sim.ROOT, "bench", "sim", "out", "scale"))
    ap.add_argument("--evidence", default=HERE, help="where --stages compact writes (committed)")
    ap.add_argument("--platform", default="fattree-contending", choices=sim.CONTENDING)
    ap.add_argument("--procs", type=int, nargs="+", default=[256, 1024, 4096])
    ap.add_argument("--modes", nargs="+", default=["native", "shim", "forced"], choices=["native", "shim", "forced", "model"])
    ap.add_argument("--selector", default="ompi")
    ap.add_argument("--calls", type=int, default=100, help="calls per key (the key's first calls)")
    ap.add_argument("--largest", type=int, default=4096, help="largest block (8 B, x8 up to it)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per smpirun")
    ap.add_argument("--probe", default=PROBE)
    ap.add_argument("--stages", nargs="+", default=["run", "compact"], choices=["run", "compact", "decision", "committed"])
    args = ap.parse_args()
    if "run" in args.stages:
        finished = done(args)
        for p in args.procs:
            for mode in args.modes:
                if (args.platform, p, mode) not in finished:
                    run(args, p, mode)
    if "compact" in args.stages:
        compact(args)
    if "committed" in args.stages:
        confirmation_committed(args)
    if "decision" in args.stages:
        decision_time(args)
        decision_memory(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
