#!/usr/bin/python3
"""Rule tables from the cost model's predictions alone, checked where SMPI can run them.

For every process count, at both placements of bench/sim/tune.py (sequential: whole nodes in turn;
cyclic: round-robin over all hosts):
  1. collshim-model predict --native ompi mpich --after-barrier: every tuning candidate of the
     collective (--collective, default allgather) and the two libraries' own decisions, costed,
     1 B - 64 KiB (Allreduce from 8 B)                                 -> OUT/predicted-P.csv
  2. collshim-tune rules --predicted: a table from those predictions, nothing measured
                                                                       -> OUT/predicted-P.yaml
  3. collshim-tune verify of that table under smpirun (SMPI's ompi selector), as bench/sim/tune.py runs
     its cells                                                         -> OUT/verify-P-MAPPING.csv
  4. collshim-tune verify --measured: the table's rows against each selector's own native measured
     in OUT/PLATFORM.csv (bench/sim/tune.py --native-only), each with the rules that selector sees (the
     table's rules name the selectors they were predicted for), the figure to report.

  bench/sim/tune.py --out OUT --platforms fattree-contending --procs 256 512 --max-bytes 64KiB \
      --other-selectors mpich mvapich2 impi --native-only
  bench/sim/predicted_rules.py --out OUT --procs 256 512
  bench/sim/predicted_rules.py --out OUT --procs 64 96 --collective alltoall

On a contending platform SMPI shows the libraries one rank per host, so the model's libraries see
one rank per node (--library-ranks-per-node 1), as bench/sim/model_validation.py --native does.
"""
import argparse
import csv
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_common as sim  # noqa: E402  (the platforms, SMPI's flags, COLLSHIM_TOPOLOGY)


def sizes(collective):
    """1 B - 64 KiB, as the sweeps; an Allreduce vector of int64 from 8 B."""
    return [str(1 << k) for k in range(3 if collective == "allreduce" else 0, 17)]


def placements(platform, p):
    """(mapping, ranks per node) as bench/sim/tune.py's host files place p ranks."""
    nodes, cores, _ = sim.CLUSTERS[platform]
    yield "sequential", min(p, cores)
    used = min(nodes, p)
    if p % used == 0 and used > 1:
        yield "cyclic", p // used


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="bench/sim/tune.py --native-only's output directory")
    ap.add_argument("--platform", default="fattree-contending")
    ap.add_argument("--procs", nargs="+", type=int, required=True)
    ap.add_argument("--build", default=sim.BUILD)
    ap.add_argument("--bench", default=sim.BENCH)
    ap.add_argument("--collective", default="allgather", choices=["allgather", "alltoall", "allreduce"])
    args = ap.parse_args()
    library_view = ["--library-ranks-per-node", "1"] if args.platform.endswith("-contending") else []
    model = os.path.join(args.build, "collshim-model")
    tuner = os.path.join(args.build, "collshim-tune")
    description = os.path.join(sim.ROOT, "config", "platforms", args.platform + ".yaml")
    natives = os.path.join(args.out, args.platform + ".csv")
    for p in args.procs:
        predicted = os.path.join(args.out, f"predicted-{p}.csv")
        with open(predicted, "w") as out:
            for i, (mapping, ppn) in enumerate(placements(args.platform, p)):
                rows = subprocess.run([model, "predict", "--platform", description, "--procs", str(p), "--ppn",
                                       str(ppn), "--mapping", mapping, "--collective", args.collective, "--bytes",
                                       *sizes(args.collective), "--native", "ompi", "mpich", *library_view,
                                       "--after-barrier", "--csv"], check=True, capture_output=True,
                                      text=True).stdout.splitlines(keepends=True)
                out.writelines(rows if i == 0 else rows[1:])
        table = os.path.join(args.out, f"predicted-{p}.yaml")
        subprocess.run([tuner, "rules", "--predicted", predicted, "-o", table], check=True)
        verified = []
        for mapping, _ in placements(args.platform, p):
            verify_csv = os.path.join(args.out, f"verify-{p}-{mapping}.csv")
            if os.path.exists(verify_csv):
                os.remove(verify_csv)  # a fresh table: its old rows would mix in
            launcher = [*sim.smpirun(args.platform, mapping, p), sim.selector_flag("ompi"), *sim.SMPI_FLAGS,
                        *sim.OVERHEAD]
            env = sim.environment(args.platform, mapping, p)
            subprocess.run([tuner, "verify", "default:" + table, "--bench", args.bench, "--platform", args.platform,
                            "--collective", args.collective, "--iterations", "1", "--warmup", "0",
                            "--min-bytes", sizes(args.collective)[0],
                            "--max-bytes", "64KiB", "--bench-arg=--verify-limit=256MiB", "-o", verify_csv, "--", *launcher],
                           env=env, stdout=subprocess.DEVNULL)  # exit 1: a cell lost to the ompi selector; judged below
            verified.append(verify_csv)
        # The natives of p only: other process counts would count as pass-through cells.
        only_p = os.path.join(args.out, f"natives-{p}.csv")
        with open(natives, newline="") as f, open(only_p, "w", newline="") as out:
            reader = csv.DictReader(line for line in f if not line.startswith("#"))
            writer = csv.DictWriter(out, fieldnames=reader.fieldnames, lineterminator="\n")
            writer.writeheader()
            writer.writerows(row for row in reader if row["ranks"] == str(p))
        print(f"# p = {p}: {table} against every selector measured in {natives}", flush=True)
        subprocess.run([tuner, "verify", "default:" + table, "--measured", *verified, only_p])


if __name__ == "__main__":
    main()
