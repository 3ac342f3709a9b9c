#!/usr/bin/env python3
"""Fields of the shim's JSON report (COLLSHIM_REPORT=FILE.json, src/profile/report.cpp) for shell tests,
so that they read data rather than the text report's layout.

usage: report_query.py FILE trial_calls      the tuning trial calls (every rank, summed)
       report_query.py FILE rows             one line per row: collective, algorithm, rule (tab-separated)
"""
import json
import sys


def main():
    path, what = sys.argv[1:3]
    with open(path) as f:
        report = json.load(f)
    if report.get("format") != "collshim-report":
        sys.exit(f"report_query.py: {path} is not a collshim report")
    if what == "trial_calls":
        print(report["tuning"]["trial_calls"])
    elif what == "rows":
        for row in report["rows"]:
            print(f"{row['collective']}\t{row['algorithm']}\t{row['rule']}")
    else:
        sys.exit(f"report_query.py: unknown field {what}")


if __name__ == "__main__":
    main()
