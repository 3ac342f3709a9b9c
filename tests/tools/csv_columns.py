#!/usr/bin/env python3
"""Prints columns of a collshim CSV (collshim-bench --csv, collshim-tune measure, collshim-model predict
--csv or --steps) by the names its header gives them, never by position: one line per row, the values
joined by commas; comment lines (#) are left out. --where COLUMN=VALUE keeps only the rows where it
holds (repeatable); --count prints how many rows are kept instead.

  csv_columns.py FILE|- COLUMN... [--where COLUMN=VALUE]... [--count]
"""
import argparse
import csv
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="the CSV file, - for standard input")
    ap.add_argument("columns", nargs="*")
    ap.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE")
    ap.add_argument("--count", action="store_true")
    args = ap.parse_args()
    source = sys.stdin if args.file == "-" else open(args.file, newline="")
    rows = csv.DictReader(line for line in source if not line.startswith("#"))
    conditions = [w.split("=", 1) for w in args.where]
    for name in args.columns + [column for column, _ in conditions]:
        if name not in (rows.fieldnames or []):
            sys.exit(f"csv_columns.py: {args.file} has no column '{name}' (its header: {rows.fieldnames})")
    kept = [row for row in rows if all(row[column] == value for column, value in conditions)]
    if args.count:
        print(len(kept))
        return
    for row in kept:
        print(",".join(row[column] for column in args.columns))


if __name__ == "__main__":
    main()
