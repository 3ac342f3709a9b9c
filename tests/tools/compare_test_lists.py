#!/usr/bin/env python3
"""Compares two test lists (`ctest --show-only=json-v1`) test by test: names, command lines and
properties. For a refactoring of how tests are declared, which must lose and change none.

usage: compare_test_lists.py BEFORE.json AFTER.json [--show N]

A run_mpi_test.sh command is compared as what the runner makes of it: its options are independent,
so their order does not matter (each --env, --expect-output, --forbid-output and --expect-lines as
a set), the program and its arguments after `--` in order. Any other command is compared as it is.
Properties are compared whole, less WORKING_DIRECTORY (the build directory). Exit status 1 when a
test was lost, added or changed.
"""
import argparse
import json
import sys

REPEATED = {"--env": 1, "--expect-output": 1, "--forbid-output": 1, "--expect-lines": 2}
SINGLE = {"--np": 1, "--timeout": 1, "--preload": 1, "--expect-failure": 0}


def runner_command(command):
    """The runner's options as it reads them: a dict, repeated options as sorted tuples."""
    options = {name: [] for name in REPEATED}
    args = command[1:]
    i = 0
    while i < len(args):
        option = args[i]
        if option == "--":
            options["program"] = args[i + 1:]
            break
        width = REPEATED.get(option, SINGLE.get(option))
        if width is None:
            options.setdefault("unknown", []).append(option)
            i += 1
            continue
        value = tuple(args[i + 1:i + 1 + width])
        if option in REPEATED:
            options[option].append(value)
        else:
            options[option] = value
        i += 1 + width
    return {k: tuple(sorted(v)) if k in REPEATED else tuple(v) for k, v in options.items()}


def load(path):
    tests = {}
    for test in json.load(open(path))["tests"]:
        command = test.get("command") or []
        if command and command[0].endswith("run_mpi_test.sh"):
            command = runner_command(command)
        else:
            command = {"command": tuple(command)}
        properties = {p["name"]: tuple(p["value"]) if isinstance(p["value"], list) else p["value"]
                      for p in test.get("properties", []) if p["name"] != "WORKING_DIRECTORY"}
        if test["name"] in tests:
            sys.exit(f"{path}: {test['name']} listed twice")
        tests[test["name"]] = (command, properties)
    return tests


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--show", type=int, default=20, help="changed tests to print in detail")
    args = parser.parse_args()
    before, after = load(args.before), load(args.after)
    lost = sorted(set(before) - set(after))
    added = sorted(set(after) - set(before))
    changed = sorted(n for n in set(before) & set(after) if before[n] != after[n])
    print(f"before {len(before)} tests, after {len(after)}: {len(lost)} lost, {len(added)} added, "
          f"{len(changed)} changed")
    for name in lost:
        print("LOST", name)
    for name in added:
        print("ADDED", name)
    for name in changed[:args.show]:
        print("CHANGED", name)
        for part in (0, 1):
            old, new = before[name][part], after[name][part]
            for key in sorted(set(old) | set(new)):
                if old.get(key) != new.get(key):
                    print(f"  {key}\n    before: {old.get(key)}\n    after:  {new.get(key)}")
    return 1 if lost or added or changed else 0


if __name__ == "__main__":
    sys.exit(main())
