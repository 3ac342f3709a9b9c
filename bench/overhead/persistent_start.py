#!/usr/bin/env python3
"""Instructions of a persistent start of the shim's schedule against its blocking call, counted with callgrind.

usage: bench/overhead/persistent_start.py [--build-dir DIR] [--np N] [--calls N] [--sizes 8 64 1024]
                                          [--case COLLECTIVE:ALGORITHM]...

Runs DIR/collshim-bench --overlap with one algorithm at one size under `mpirun -np N valgrind
--tool=callgrind`, twice: collecting only inside the case's blocking call of the algorithm
(`<Case>::call`: the call's layout, the choice's state, the schedule run by the engine to completion),
then only inside `Bench::persistent_start` (MPI_Start of a persistent operation: its layout made again,
its run, made and planned at the first start, started again and progressed to completion: each step's
local work from the plan's addresses, its messages by MPI_Startall on the plan's persistent requests). Both run the same algorithm
on the same buffers, as bench/overhead/run counts a pass-through (--collect-atstart=no
--toggle-collect). "own" is the shim's instructions: everything collected minus the MPI library's
communication and completion calls made from it (their polling for the peer varies from run to run).
What remains of a persistent start's polling is the shim's progress() loop around MPI_Testsome: its
number of rounds depends on when the peer's messages arrive, so the persistent count varies a little
from run to run: each rank's count and its progress() rounds per start are printed, and the
least rank's is the figure closest to a start that found every message arrived. Each round costs
the same (the slope between the ranks, ir_per_round), so the count of a start with no polling
(persistent_ir_at_2_rounds: one round posts a one-step schedule's messages, the next finds them
complete, as at 2 ranks) is read off the line. Both are per call:
collected / (timed calls + the verifying call).
"""
import argparse
import glob
import importlib.machinery
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
overhead = importlib.machinery.SourceFileLoader("overhead_run", os.path.join(HERE, "run")).load_module()

# The MPI library's communication and completion (and the reduction arithmetic it does for the
# shim): subtracted, what remains is the shim's bookkeeping.
LIBRARY = {"PMPI_Isend", "PMPI_Irecv", "PMPI_Send", "PMPI_Recv", "PMPI_Sendrecv", "PMPI_Wait", "PMPI_Waitall",
           "PMPI_Test", "PMPI_Testall", "PMPI_Testsome", "PMPI_Waitany", "PMPI_Start", "PMPI_Startall", "PMPI_Iprobe", "PMPI_Probe", "PMPI_Reduce_local"}
CASE_CLASS = {"allgather": "AllgatherCase", "allgatherv": "AllgatherCase", "allreduce": "AllreduceCase",
              "alltoall": "AlltoallCase", "alltoallv": "AlltoallvCase"}
REGIONS = [("blocking", "*{case}::call(*"), ("persistent", "*Bench::persistent_start*")]


def own_cost(profile):
    """Everything collected but the MPI library's LIBRARY calls (from callers outside LIBRARY)."""
    library = sum(cost for caller, callees in profile.calls.items() if caller[1] not in LIBRARY
                  for callee, cost in callees.items() if callee[1] in LIBRARY)
    return profile.total - library


def progress_rounds(path):
    """Calls of ScheduleRun::progress() collected in callgrind output `path` (its compressed names
    resolved): the polling rounds of the persistent starts."""
    names, callee, rounds = {}, None, 0
    with open(path) as f:
        for line in f:
            m = re.match(r"^c?fn=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                if m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
                callee = names.get(m.group(1)) if line.startswith("cfn=") else None
                continue
            if line.startswith("calls=") and callee and "ScheduleRun::progress" in callee:
                rounds += int(line.split("=", 1)[1].split()[0])
    return rounds


def run(launcher, build_dir, args, collective, algorithm, size, toggle, out_dir):
    for stale in glob.glob(os.path.join(out_dir, "callgrind.*.out")):
        os.remove(stale)
    valgrind = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--toggle-collect={toggle}",
                f"--callgrind-out-file={out_dir}/callgrind.%p.out"]
    program = [os.path.join(build_dir, "collshim-bench"), "--overlap", "--collective", collective, "--algorithms",
               algorithm, "--min-bytes", str(size), "--max-bytes", str(size), "--iterations", str(args.calls),
               "--warmup", "0", "--test-every", "0"]
    cmd = launcher.command(args.np, {}, valgrind + program)
    proc = subprocess.run(cmd, env=launcher.environment({}), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=args.timeout)
    if proc.returncode != 0 or not re.search(r"results verified against native, 0 mismatches", proc.stdout):
        sys.exit(f"persistent_start.py: failed (exit {proc.returncode}): {' '.join(cmd)}\n{proc.stdout}")
    files = sorted(glob.glob(os.path.join(out_dir, "callgrind.*.out")))
    calls = args.calls + 1  # the timed calls and the verifying one
    return [own_cost(overhead.Profile(path)) / calls for path in files], [progress_rounds(p) / calls for p in files]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=os.environ.get("COLLSHIM_BUILD_DIR") or os.path.join(HERE, "..", "..", "build"))
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--calls", type=int, default=200, help="timed calls per run (default 200)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 64, 1024])
    parser.add_argument("--case", action="append", default=[], metavar="COLLECTIVE:ALGORITHM",
                        help="default: allgather:ring allgather:recursive_doubling allreduce:recursive_doubling")
    parser.add_argument("--timeout", type=int, default=600)
    args = parser.parse_args()
    cases = args.case or ["allgather:ring", "allgather:recursive_doubling", "allreduce:recursive_doubling"]
    build_dir = os.path.abspath(args.build_dir)
    launcher = overhead.Launcher(overhead.read_cmake_cache(build_dir))
    rows = []
    with tempfile.TemporaryDirectory(prefix="collshim-persistent.") as work:
        for case in cases:
            collective, algorithm = case.split(":", 1)
            for size in args.sizes:
                counts = {}
                for region, pattern in REGIONS:
                    toggle = pattern.format(case=CASE_CLASS[collective])
                    counts[region], counts[region + "_rounds"] = run(launcher, build_dir, args, collective, algorithm, size, toggle, work)
                rows.append((collective, algorithm, size, counts["blocking"], counts["persistent"],
                             counts["persistent_rounds"]))
    print(f"collshim bench/overhead/persistent_start.py: the shim's own instructions (Ir) per call, {args.np} "
          f"ranks, {args.calls} timed calls, {launcher.flavour}")
    print("collective,algorithm,bytes,blocking_ir,persistent_ir_min,persistent_ir_max,min_to_blocking,"
          "ir_per_round,persistent_ir_at_2_rounds,at_2_rounds_to_blocking,blocking_ir_by_rank,persistent_ir_by_rank,"
          "progress_rounds_by_rank")
    for collective, algorithm, size, blocking, persistent, rounds in rows:
        # What one more polling round costs: the slope between the ranks with the fewest and most rounds.
        low, high = min(range(len(rounds)), key=rounds.__getitem__), max(range(len(rounds)), key=rounds.__getitem__)
        per_round = (persistent[high] - persistent[low]) / (rounds[high] - rounds[low]) if rounds[high] - rounds[
            low] >= 1 else float("nan")
        # A start with no polling: the first round (at the start) posts a one-step schedule's messages,
        # the second finds them complete; the line through the ranks' counts gives its cost.
        at_two = persistent[low] - per_round * (rounds[low] - 2)
        print(f"{collective},{algorithm},{size},{max(blocking):.0f},{min(persistent):.0f},{max(persistent):.0f},"
              f"{min(persistent) / max(blocking):.3f},{per_round:.0f},{at_two:.0f},{at_two / max(blocking):.3f},"
              f"{' '.join(f'{b:.0f}' for b in blocking)},"
              f"{' '.join(f'{p:.0f}' for p in persistent)},{' '.join(f'{r:.1f}' for r in rounds)}")


if __name__ == "__main__":
    main()
