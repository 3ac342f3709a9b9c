#!/usr/bin/python3
"""What bench/sim's scripts share about the simulated clusters and SimGrid SMPI, written once: the
platforms (nodes, cores per node, default process counts), SMPI's flags, the placement the shim is
told (COLLSHIM_TOPOLOGY), the platform and host files, reading collshim-bench's CSV files, and
rules and their verification over several platforms (collshim-tune rules --robust, verify --json),
and the tools' constants (collshim-model constants --json).

Python scripts import it (they run from anywhere: bench/sim is the script's own folder, first on
sys.path). The bash scripts ask it on the command line, one item a line:

  bench/sim/smpi_common.py flags smpi overhead      # SMPI_FLAGS, then OVERHEAD
  bench/sim/smpi_common.py flags smpi-no-shared-malloc overhead-nonblocking
  bench/sim/smpi_common.py topology fattree-contending sequential 64   # nodes=4,mapping=sequential
"""
import argparse
import csv
import functools
import json
import os
import subprocess
import sys
from typing import NamedTuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The builds the scripts run: collshim-bench of the SMPI build (-DCOLLSHIM_MPI=smpi), the tools
# (collshim-tune, collshim-model) of the ordinary one.
BENCH = os.path.join(ROOT, "build-smpi", "collshim-bench")
BUILD = os.path.join(ROOT, "build")
TUNE = os.path.join(BUILD, "collshim-tune")
MODEL = os.path.join(BUILD, "collshim-model")


class Cluster(NamedTuple):
    nodes: int
    cores: int  # per node
    procs: list  # bench/sim/tune.py's default process counts: whole nodes in sequential mapping


# The platforms of platforms/*.xml. The contending ones (make_contending_platforms.py) have nodes that
# contend inside, one host per core, so SMPI's shared-memory split sees one rank per node and the
# placement is given to the shim in COLLSHIM_TOPOLOGY (topology()). oversub-contending: a blocking
# network (4 leaves of 8 nodes, uplinks 4:1 oversubscribed), contending only; 256 ranks span two leaves.
CLUSTERS = {
    "yahoo-contending": Cluster(16, 8, [16, 32, 64, 128]),
    "cervino-contending": Cluster(5, 32, [64, 96, 128, 160]),
    "fattree-contending": Cluster(64, 16, [32, 64, 128]),
    "oversub-contending": Cluster(32, 16, [64, 128, 256]),
    "yahoo": Cluster(16, 8, [16, 32, 64, 128]),
    "cervino": Cluster(5, 32, [64, 96, 128, 160]),
    "fattree": Cluster(64, 16, [32, 64, 128]),
}
CONTENDING = [name for name in CLUSTERS if name.endswith("-contending")]
MAPPINGS = ["sequential", "cyclic"]

# SMPI's flags. The network model of every run, beyond the platform file:
# - smpi/simulate-computation:no: local work (copies, reductions) takes no simulated time;
# - smpi/shared-malloc:global with 1 GiB blocks: a shared buffer is mapped in blocks of this size; with
#   the 1 MiB default a 64 KiB x 1024 Allgather maps 65 blocks per rank, over vm.max_map_count
#   (65530), and SMPI aborts ("Could not map folded virtual memory"). 1 GiB covers every buffer of the
#   sweeps in one mapping;
# - smpi/barrier:mpich: one skew-free barrier before each timed call, whatever the selector (docs/simulation.md:
#   the ompi selector's barrier leaves ~20 us of exit skew at 256 ranks, charged to the call that follows);
# - smpi/iprobe: 0.1 us per MPI_Probe/Iprobe poll. SMPI's default (100 us per poll) charged the grid
#   Alltoallv ~100 us for every size-headed message it probes (715 us against 19 us at 64 ranks, 8 B);
# - smpi/grow-injected-times:no: every poll costs those 0.1 us. By default SMPI multiplies a poll's
#   cost by a counter that every failed poll of any rank raises and any success resets (one static for
#   the whole simulation), so while many ranks wait in MPI_Probe the polls grow to tens of us and a
#   rank sees its message that late: radix-8 Bruck Alltoall at p = 96, 16 per node, 512 B measured
#   424 us with it and 169 us without (docs/simulation.md). No MPI library backs off like that.
SIMULATE_NO_COMPUTATION = "--cfg=smpi/simulate-computation:no"
SHARED_MALLOC = ["--cfg=smpi/shared-malloc:global", "--cfg=smpi/shared-malloc-blocksize:1073741824"]
QUIET = "--log=root.thres:critical"
MPICH_BARRIER = "--cfg=smpi/barrier:mpich"
CHEAP_PROBES = ["--cfg=smpi/iprobe:1e-7", "--cfg=smpi/grow-injected-times:no"]


def smpi_flags(shared_malloc=True):
    """The flags of every run (above); without shared_malloc, buffers are SMPI's ordinary ones."""
    return [SIMULATE_NO_COMPUTATION, *(SHARED_MALLOC if shared_malloc else []), QUIET, MPICH_BARRIER, *CHEAP_PROBES]


SMPI_FLAGS = smpi_flags()
# smpi/os, smpi/or: 1 us of software overhead per message sent and per message received (LogGP's o;
# MPI over InfiniBand costs ~0.5-1.5 us). SMPI's default is 0: injecting a message costs nothing, so
# p-1 direct messages cost the same as one and algorithms that aggregate (grid, Bruck) can never win
# their real argument. docs/results.md shows both. OVERHEAD_NONBLOCKING charges nonblocking sends (smpi/ois,
# the engine's Isend) too.
OVERHEAD = ["--cfg=smpi/os:0:1e-6:0", "--cfg=smpi/or:0:1e-6:0"]
OVERHEAD_NONBLOCKING = ["--cfg=smpi/os:0:1e-6:0", "--cfg=smpi/ois:0:1e-6:0", "--cfg=smpi/or:0:1e-6:0"]
# SimGrid's max-min solver can abort on its own precision check or a rounding residue ("Cannot saturate
# more a constraint that has no active element"), or crash, when many flows share a link; a coarser
# precision (still 1e-4 B/s on links of MB/s) gets past it. Given after collshim-bench's path.
COARSE_PRECISION = "--cfg=maxmin/precision:1e-4"
FLAG_SETS = {"smpi": SMPI_FLAGS, "smpi-no-shared-malloc": smpi_flags(shared_malloc=False), "overhead": OVERHEAD,
             "overhead-nonblocking": OVERHEAD_NONBLOCKING, "coarse-precision": [COARSE_PRECISION]}


def selector_flag(selector):
    """SMPI's collective selector: ompi, mpich, mvapich2 or impi."""
    return f"--cfg=smpi/coll-selector:{selector}"


def platform_file(platform):
    return os.path.join(HERE, "platforms", platform + ".xml")


def hostfile(platform, mapping):
    """One host per rank: sequential (rank r on node r / cores) or cyclic (rank r on node r mod nodes)."""
    return os.path.join(HERE, "hostfiles", f"{platform}-{mapping}.txt")


# The contending platforms name a host per core "<cluster>-<node>-c<core>" (make_contending_platforms.py):
# a host's node, for collshim-model predict --node-pattern.
NODE_PATTERN = "(.*)-c[0-9]+"


def smpirun(platform, mapping, p, hosts=None):
    """smpirun's start: p ranks on the platform placed by the mapping's host file (or `hosts`)."""
    return ["smpirun", "-np", str(p), "-platform", platform_file(platform), "-hostfile",
            hosts or hostfile(platform, mapping)]


def nodes_used(platform, mapping, p):
    """How many nodes the mapping's host file puts p ranks on (sequential fills a node's cores first)."""
    nodes, cores, _ = CLUSTERS[platform]
    return min(nodes, -(-p // cores)) if mapping == "sequential" else min(nodes, p)


@functools.cache
def shim_placements(platform, p):
    """The placements one run of each mapping gives the shim, in MAPPINGS' order: (mapping class,
    nodes, most ranks on a node). A cyclic run with one rank per node is classed sequential, and one
    node single_node."""
    result = []
    for mapping in MAPPINGS:
        nodes = nodes_used(platform, mapping, p)
        ppn = -(-p // nodes)
        result.append(("single_node" if nodes == 1 else "sequential" if ppn == 1 else mapping, nodes, ppn))
    return tuple(result)


def restore_placements(rows, where):
    """Measurement rows compacted before the placement was kept (no nodes, ppn) get the shim's from the
    host files, in place: the k-th row of one cell and algorithm is its mapping class's k-th run (a
    cyclic run with one rank per node wrote `sequential` too). Rows with a placement stay as they are.
    Raises ValueError naming `where` if a row repeats more often than its mapping has runs."""
    seen = {}
    for r in rows:
        if r.get("nodes"):
            continue
        key = (r["platform"], r["mapping"], r["ranks"], r["collective"], r["distribution"], r["bytes"], r["algorithm"])
        runs = [pl for pl in shim_placements(r["platform"], int(r["ranks"])) if pl[0] == r["mapping"]]
        k = seen.get(key, 0)
        if k >= len(runs):
            raise ValueError(f"{where}: {key} appears more often than its mapping has runs")
        r["mapping"], nodes, ppn = runs[k]
        r["nodes"], r["ppn"] = str(nodes), str(ppn)
        seen[key] = k + 1
    return rows


def topology(platform, mapping, p):
    """COLLSHIM_TOPOLOGY on a contending platform, whose host per core hides the nodes from SMPI: the
    placement the host file describes (ranks per node as it fills them); None on the others."""
    if not platform.endswith("-contending"):
        return None
    used = nodes_used(platform, mapping, p)
    if used == 1:
        return "nodes=1,mapping=single_node"
    return f"nodes={used},mapping={mapping}"


def environment(platform, mapping, p, **extra):
    """os.environ with `extra` and, on a contending platform, COLLSHIM_TOPOLOGY (topology())."""
    env = dict(os.environ, **extra)
    placement = topology(platform, mapping, p)
    if placement:
        env["COLLSHIM_TOPOLOGY"] = placement
    return env


def robust_rules(tune, csvs, table, quiet=True):
    """collshim-tune rules --robust over several platforms' measurements -> table."""
    subprocess.run([tune, "rules", "--robust", *csvs, "-o", table], check=True,
                   stdout=subprocess.DEVNULL if quiet else None)


def verify_json(tune, table, measured):
    """collshim-tune verify --measured --json: (exit status, its JSON object)."""
    proc = subprocess.run([tune, "verify", table, "--measured", measured, "--json"], capture_output=True, text=True)
    try:
        return proc.returncode, json.loads(proc.stdout)
    except json.JSONDecodeError:
        sys.exit(f"{tune} verify {table} --measured {measured}: no JSON (exit {proc.returncode}):\n{proc.stderr}")


def verify_cell_line(cell):
    """A cell as collshim-tune verify's table writes it (the worst cell's summary line)."""
    mark = "!" if cell["below_threshold"] else " "
    return ("%-12s %-18s %-10s %-12s %6d %5d %4d %-11s %10d  %-34s %10.2f %10.2f %7.3fx%s  %s" % (
        cell["platform"], cell["library"], cell["collective"], cell["variant"] or "-", cell["procs"], cell["nodes"],
        cell["ppn"], cell["mapping"], cell["block_bytes"], cell["decision"], cell["native_us"], cell["table_us"],
        cell["speedup"], mark, cell["best"]))


def verify_summary(result):
    """collshim-tune verify's summary lines, from its JSON: the figures, the worst cell, what was left out."""
    summary, n = result["summary"], result["summary"]["cells"]
    within = round((result["within_best_factor"] - 1) * 100)
    lines = ["%d cells: geometric mean speedup over native %.3fx; %d of %d (%.0f%%) within %d%% of the cell's best; "
             "%d below %.2fx" % (n, summary["geometric_mean_speedup"], summary["within_best"], n,
                                 100.0 * summary["within_best"] / n if n else 0.0, within,
                                 summary["below_threshold"], result["threshold"])]
    if summary["worst_cell"] is not None:
        lines.append("worst cell: " + verify_cell_line(result["cells"][summary["worst_cell"]]))
    if summary["unmeasured"]:
        lines.append(f"{summary['unmeasured']} cell(s) left out: the table's decision was not measured there")
    return lines


def verification_report(tune, out, csvs, table, title, details=lambda result: []):
    """`table` verified on each platform's measurements (collshim-tune verify --measured), then each
    platform left out of a table tuned on the others -> OUT/verify.md (also printed). `details` adds
    lines from a verify run's JSON object."""
    def verify(table, measured):
        status, result = verify_json(tune, table, measured)
        return status, verify_summary(result) + details(result)

    report = [f"# {title}", "", "## The table tuned on all platforms, on each", ""]
    for measured in csvs:
        status, summary = verify(table, measured)
        report += [f"- {os.path.basename(measured)} (exit {status}):"] + [f"  - {s}" for s in summary]
    report += ["", "## Leave one platform out: tuned on the others, verified on it", ""]
    for left in csvs:
        others = [c for c in csvs if c != left]
        if not others:
            continue
        without = os.path.join(out, "without-" + os.path.basename(left).replace(".csv", ".yaml"))
        robust_rules(tune, others, without)
        status, summary = verify(without, left)
        report += [f"- left out {os.path.basename(left)} (exit {status}):"] + [f"  - {s}" for s in summary]
    with open(os.path.join(out, "verify.md"), "w") as f:
        f.write("\n".join(report) + "\n")
    print("\n".join(report))


@functools.lru_cache(maxsize=None)
def constants(model=MODEL):
    """The constants the tools use that scripts need (collshim-model constants --json)."""
    return json.loads(subprocess.run([model, "constants", "--json"], capture_output=True, text=True,
                                     check=True).stdout)


def csv_rows(lines):
    """The rows of collshim-bench --csv output (its header first), comment lines (#) left out."""
    return list(csv.DictReader(line for line in lines if not line.startswith("#")))


def read_csv(path):
    """The rows of a collshim-bench --csv file (or collshim-tune measure's), comment lines left out."""
    with open(path, newline="") as f:
        return csv_rows(f)


def size_bytes(text):
    """'1', '64KiB', '1MiB' -> bytes (powers of 1024, as collshim-bench reads them)."""
    t = text.strip().lower().rstrip("b").rstrip("i")
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(t[:-1]) * units[t[-1]] if t and t[-1] in units else int(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    flags = sub.add_parser("flags", help="SMPI flags, one a line")
    flags.add_argument("sets", nargs="+", choices=list(FLAG_SETS))
    place = sub.add_parser("topology", help="COLLSHIM_TOPOLOGY for p ranks (nothing on a fat-pipe platform)")
    place.add_argument("platform", choices=list(CLUSTERS))
    place.add_argument("mapping", choices=MAPPINGS)
    place.add_argument("p", type=int)
    args = ap.parse_args()
    if args.command == "flags":
        for name in args.sets:
            print("\n".join(FLAG_SETS[name]))
    else:
        print(topology(args.platform, args.mapping, args.p) or "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
