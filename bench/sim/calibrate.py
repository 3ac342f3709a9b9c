#!/usr/bin/python3
"""A cost-model description of a simulated cluster, measured the way a real one is: `collshim-tune
calibrate` (docs/cost-model.md) under smpirun on two nodes of a bench/sim platform, with the network
model of bench/sim/tune.py's runs (its SMPI flags and per-message overheads), so the description can be
checked against the sweeps (bench/sim/model_validation.py). This script only knows the platforms: their
size, host files, SMPI flags and COLLSHIM_TOPOLOGY; collshim-tune runs, checks and writes.

  bench/sim/calibrate.py --platform fattree-contending -o bench/sim/calibrated/fattree-contending.yaml
  bench/sim/calibrate.py --platform fattree --switch-probes -o bench/sim/calibrated/fattree.yaml
  bench/sim/calibrate.py --platform oversub-contending --nodes 0 31 -o OUT/oversub-contending-far.yaml

--nodes picks the two nodes (default the first two, which share a leaf switch where the platform has
leaves: oversub-contending's leaves hold 8 nodes, so 0 and 31 are under different leaves).

Needs build/ (collshim-tune) and build-smpi/ (collshim-bench, -DCOLLSHIM_MPI=smpi). The contending
platforms have one host per core, so SMPI sees no shared nodes; COLLSHIM_TOPOLOGY tells
collshim-bench which ranks share one, as in the sweeps. Prints how long the calibration took.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_common as sim  # noqa: E402  (the platforms, SMPI's flags, COLLSHIM_TOPOLOGY)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", required=True, choices=sorted(sim.CLUSTERS))
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--max-bytes", default="256KiB")
    ap.add_argument("--iterations", default="5", help="timed steps per measurement (SMPI is deterministic)")
    ap.add_argument("--bench", default=sim.BENCH)
    ap.add_argument("--tune", default=sim.TUNE)
    ap.add_argument("--switch-probes", action="store_true",
                    help="also one rank on every other node, so that calibration probes the network's switches "
                         "(fat-pipe platforms, whose hosts are the nodes)")
    ap.add_argument("--nodes", type=int, nargs=2, default=[0, 1], metavar=("A", "B"),
                    help="the two nodes to calibrate on, by their place in the sequential host file (default 0 1)")
    args = ap.parse_args()

    cores = sim.CLUSTERS[args.platform].cores
    p = 2 * cores  # two whole nodes in sequential mapping
    hostfile = sim.hostfile(args.platform, "sequential")
    chosen = None
    if args.nodes != [0, 1]:
        if args.switch_probes:
            sys.exit("calibrate: --nodes and --switch-probes do not go together")
        with open(hostfile) as f:
            hosts = [line.strip() for line in f if line.strip()]
        with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as f:
            f.write("".join(f"{host}\n" for node in args.nodes for host in hosts[node * cores:(node + 1) * cores]))
            hostfile = chosen = f.name
    if args.switch_probes:
        if args.platform.endswith("-contending"):
            sys.exit("calibrate: --switch-probes needs a fat-pipe platform (a contending one's nodes are many hosts)")
        with open(hostfile) as f:
            hosts = list(dict.fromkeys(line.strip() for line in f if line.strip()))  # in order, once each
        with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as f:
            f.write("".join(f"{host}\n" for host in hosts[:2] for _ in range(cores)) + "".join(f"{host}\n" for host in hosts[2:]))
            hostfile = f.name
        p += len(hosts) - 2
    launcher = [*sim.smpirun(args.platform, "sequential", p, hostfile), sim.selector_flag("ompi"), *sim.SMPI_FLAGS,
                *sim.OVERHEAD]
    env = sim.environment(args.platform, "sequential", p)
    cmd = [args.tune, "calibrate", "-o", args.output, "--bench", args.bench, "--platform", args.platform + "-calibrated",
           "--max-bytes", args.max_bytes, "--iterations", args.iterations, "--warmup", "1", "--", *launcher]
    start = time.monotonic()
    try:
        status = subprocess.run(cmd, env=env).returncode
        print(f"calibrate: {args.platform}, {p} ranks: exit {status} after {time.monotonic() - start:.1f} s")
        return status
    finally:
        if args.switch_probes or chosen:
            os.unlink(hostfile)


if __name__ == "__main__":
    sys.exit(main())
