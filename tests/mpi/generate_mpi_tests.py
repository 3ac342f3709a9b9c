#!/usr/bin/env python3
"""Writes the MPI test matrix (tests/mpi_matrix.json) and the other tests (tests/test_cases.json) as a
ctest include file.

The matrix names test choices (process counts, placements, parameter variants, expectations); the
algorithms come from the registry, through the built `collshim-config list --json`, so a newly
registered algorithm runs in the equivalence tests without an edit in tests/. Run at build time (the
`mpi_test_matrix` target of tests/CMakeLists.txt), as gtest_discover_tests runs a built test program:
ctest reads the file this writes through the directory's TEST_INCLUDE_FILES.

usage: generate_mpi_tests.py MATRIX CASES CONTEXT OUTPUT
       generate_mpi_tests.py --sanitizer-programs MATRIX CASES CONTEXT
CONTEXT (written by CMake): the runner, the shim, the programs' and tools' paths (by target name),
the source and build directories, collshim-config's path, the MPI flavour, the build's flags, the
largest process count, the MPI tests' environment and the targets mpi_sanitizer_programs builds.
The sanitizer subset is label sanitize: the matrix's `sanitize` rule, and `sanitize` on a
failure_policy block or a test_cases entry. --sanitizer-programs prints (a CMake list, at configure
time, without the registry) the targets its tests run; the build-time run checks that they run no
other.
"""
import hashlib
import json
import os
import re
import subprocess
import sys


def bracket(text):
    """A CMake bracket argument holding `text` unchanged (CMake drops a newline just after the opening
    bracket, so one leading newline is written twice)."""
    level = 1
    while f"]{'=' * level}]" in text:
        level += 1
    if text.startswith("\n"):
        text = "\n" + text
    return f"[{'=' * level}[{text}]{'=' * level}]"


def safe_name(spec):
    """Specs name tests with ':', '=' and ',' as '_': bruck:radix=4 -> bruck_radix_4."""
    return re.sub(r"[:=,]", "_", spec)


def fill(template, values):
    """`template` with each {key} of `values` replaced; other braces (regex counts) stay."""
    return re.sub(r"\{([\w-]+)\}", lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)


class Registry:
    """The algorithms of `collshim-config list --json`, and the facts of the specs the tests force."""

    def __init__(self, tool, specs):
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")  # the sanitizer build's tool runs here too
        args = [tool, "list", "--json"] + [f"--spec={collective}={spec}" for collective, spec in sorted(specs)]
        listing = json.loads(subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout)
        self.collectives = {c["name"]: c for c in listing["collectives"]}
        self.specs = {(s["collective"], s["given"]): s for s in listing["specs"]}

    def algorithms(self, collective):
        return self.collectives[collective]["algorithms"]

    def algorithm(self, collective, name):
        return next(a for a in self.algorithms(collective) if a["name"] == name)

    def forcing_variable(self, collective):
        return self.collectives[collective]["forcing_variable"]


class Writer:
    """Each test as ctest's add_test and set_tests_properties; an MPI test (`add`) is the runner under
    a timeout, label mpi, with the MPI launcher's environment."""

    def __init__(self, context):
        self.context = context
        self.lines = []
        self.names = set()
        self.tests = []

    def add(self, name, np, args, timeout=240, rotate=False, labels=("mpi",), properties=None):
        command = [self.context["runner"], "--np", str(np), "--timeout", str(timeout)] + args
        properties = dict(properties or {}, TIMEOUT=timeout + 30, LABELS=list(labels),
                          ENVIRONMENT=self.context["environment"])
        self.add_command(name, np, command, properties, rotate)

    def add_command(self, name, np, command, properties, rotate=False):
        """A test of any command; none above the largest process count."""
        if np is not None and np > self.context["max_procs"]:
            return
        if name in self.names:
            sys.exit(f"generate_mpi_tests.py: test {name} made twice")
        self.names.add(name)
        self.tests.append((name, np, command, properties, rotate))

    def write(self):
        """The tests, less those ROTATE leaves out: under MPICH (its suite stops at 4 ranks, and 3 and 4
        ranks oversubscribe 2 cores, where its busy-polling ranks crawl) a family of tests (one choice,
        its name without the p) runs once, oversubscribed: at 3 or 4 ranks where it has either (the name
        picks which when it has both), so every choice runs under MPICH once and the smaller p, which
        Open MPI runs, are not repeated. A family at neither keeps its p.
        A test needing a fixture that no test sets up (its setup above the largest p) is left out."""
        for name, command, properties in self.kept():
            self.emit(name, command, properties)
        return self.lines

    def kept(self):
        """(name, command, properties) of each test `write` writes."""
        families = {}
        for name, np, *_ in self.tests:
            families.setdefault(re.sub(r"\.np[0-9]+$", "", name), set()).add(np)
        fixtures = {f for *_, properties, _ in self.tests for f in properties.get("FIXTURES_SETUP", [])}
        for name, np, command, properties, rotate in self.tests:
            family = re.sub(r"\.np[0-9]+$", "", name)
            oversubscribed = families[family] & {3, 4}
            if rotate and self.context["flavour"] == "mpich" and oversubscribed:
                if len(oversubscribed) == 2:
                    oversubscribed = {4 if hashlib.md5(family.encode()).hexdigest()[0] in "02468ace" else 3}
                if np not in oversubscribed:
                    continue
            if not set(properties.get("FIXTURES_REQUIRED", [])) <= fixtures:
                continue
            yield name, command, properties

    def emit(self, name, command, properties):
        self.lines.append("add_test(" + " ".join(bracket(a) for a in [name] + command) + ")")
        values = []
        for key, value in properties.items():
            if isinstance(value, list):  # a list property (LABELS, ENVIRONMENT, FIXTURES_*)
                value = ";".join(value)
            elif isinstance(value, str):  # one value (a regular expression): its ';' are not separators
                value = value.replace(";", "\\;")
            if isinstance(value, bool):
                value = "TRUE" if value else "FALSE"
            values.append(f"{key} {value}" if isinstance(value, int) else f"{key} {bracket(value)}")
        self.lines.append(f"set_tests_properties({bracket(name)} PROPERTIES {' '.join(values)})")


def procs_of(block, matrix):
    procs = block.get("procs", "test_procs")
    return matrix[procs] if isinstance(procs, str) else procs


def expectations(templates, values):
    return [fill(part, values) for pair in templates for part in pair]


def forced_env(registry, collectives, spec):
    return [f"{registry.forcing_variable(c)}={spec}" for c in collectives]


def run_args(context, block, registry, spec, values, expected, extra_env=()):
    """--preload, the forcing variables, the block's environment, the expectations, the program."""
    args = ["--preload", context["shim"]]
    for assignment in forced_env(registry, block["force"], spec) + list(extra_env) + [fill(e, values) for e in block.get("env", [])]:
        args += ["--env", assignment]
    args += expected + expectations(block["expect"].get("always", []), values)
    return args + ["--", context["programs"][block["program"]]] + [fill(a, values) for a in block.get("program_args", [])]


def variant_labels(spec, marker):
    """Labels of a matrix test: `variant` too where the spec is a parameter variant of an algorithm that
    also runs plain (`marker` in the spec: a forced block's variants, hierarchical's rotated inter=).
    A variant differs from its algorithm in the schedule, which the unit tests check at every p; the
    MPICH and sanitizer stages of tools/test.sh leave variants to the Open MPI stage (-LE variant)."""
    return ("mpi", "variant") if marker in spec else ("mpi",)


def spec_values(registry, collective, spec, np):
    facts = registry.specs[(collective, spec)]
    return {"np": np, "spec": spec, "logged": facts["spec"], "name": facts["name"], "safe": safe_name(spec),
            "fallback": facts["fallback"], "nonblocking_fallback": facts.get("nonblocking_fallback", "")}


# Each kind of block: which specs run where (the data says which), the expectations each case takes.

def spec_procs(specs, block, matrix):
    """The p each of `specs` runs at. By default the sets of the matrix's `proc_sets` in turn (spec i
    at set i mod n), so each spec runs at a few p, odd and even, and the block at every p of the sets;
    with only k < n specs, spec i takes every set j with j mod k = i mod k (one spec: every p). A block
    with `procs` runs every spec at each of those p instead."""
    if "procs" in block:
        return {spec: procs_of(block, matrix) for spec in specs}
    sets = matrix["proc_sets"]["sets"]
    k = max(1, min(len(sets), len(specs)))
    return {spec: sorted({np for j, procs in enumerate(sets) if j % k == i % k for np in procs})
            for i, spec in enumerate(specs)}


def forced_specs(block, matrix, registry):
    """(np, spec) of a `forced` block: every registry algorithm of the collective (but `except` and
    `native`) and every variant of its `rotate` groups at the p `spec_procs` gives it; forced `native`
    at `native_procs`, `at_procs` specs at theirs. With `procs` given, the `rotate` groups' variants
    instead take turns at each p (`per_p` of a group at a time)."""
    collective = block["collective"]
    plain = [a["name"] for a in registry.algorithms(collective) if a["name"] not in block.get("except", {})]
    flat = [name for name in plain if name != "native"]
    if "procs" not in block:
        flat += [spec for group in block.get("rotate", []) for spec in group["specs"]]
    where = spec_procs(flat, block, matrix)
    every = sorted({np for procs in where.values() for np in procs} | set(procs_of(block, matrix)))
    cells = []
    for index, np in enumerate(every):
        if "native" in plain and np in block.get("native_procs", []):
            cells.append((np, "native"))
        cells += [(np, spec) for spec in flat if np in where[spec]]
        for group in block.get("rotate", []) if "procs" in block else []:
            specs = group["specs"]
            for turn in range(group.get("per_p", 1)):
                cells.append((np, specs[(index + turn) % len(specs)]))
        for extra in block.get("at_procs", []):
            if np in extra["procs"]:
                cells.append((np, extra["spec"]))
    return cells


def add_forced(block, matrix, registry, writer, context):
    collective = block["collective"]
    expect = block["expect"]
    for np, spec in forced_specs(block, matrix, registry):
        values = spec_values(registry, collective, spec, np)
        facts = registry.specs[(collective, spec)]
        if spec == "native":
            case = expect["native"]
        elif np == 1:
            case = expect["one_process"]
        elif np in facts["ineligible_procs"]:
            case = expect["fallback"]
        else:
            case = expect["runs"]
        expected = expectations(case, values)
        if np > 1 and facts["needs_commutative"]:
            expected += expectations(expect.get("non_commutative", []), values)
        writer.add(fill(block["name"], values), np, run_args(context, block, registry, spec, values, expected),
                   rotate=True, labels=variant_labels(spec, ":"))


def add_cells(block, matrix, registry, writer, context):
    """Explicit cells: each a dict of values (np, or procs for several, spec, and whatever the
    templates name). Expectations: `one_process` at p = 1 where given, else `runs` and the cell's
    `case` (a key of `expect`)."""
    for group in block["cells"]:
        for np in group.get("procs", [group.get("np")]):
            values = dict(group, np=np)
            values.update(spec_values(registry, block["collective"], group["spec"], np))
            values.update({k: v for k, v in group.items() if k not in ("spec", "procs")})
            expect = block["expect"]
            if np == 1 and "one_process" in expect:
                expected = expectations(expect["one_process"], values)
            else:
                expected = expectations(expect.get("runs", []) + expect.get(group.get("case", ""), []), values)
            writer.add(fill(block["name"], values), np,
                       run_args(context, block, registry, group["spec"], values, expected),
                       timeout=block.get("timeout", 240), rotate=block.get("rotate_mpich", True))


def add_hierarchical_placements(block, matrix, registry, writer, context):
    """Hierarchical on the real placement at `real_procs` (default: every p) and, at `faked_procs`, on
    two faked placements per p in turn; two of every three (p, placement) cells also run intra=shm and
    an `inter` of the registry (every algorithm its `inter` accepts but the default), in turn, with
    p2p and shm."""
    collective = block["collective"]
    hierarchical = registry.algorithm(collective, "hierarchical")
    inter_param = next(p for p in hierarchical["params"] if p["name"] == "inter")
    inters = [name for name in inter_param["accepts_algorithms"] if name != inter_param["default"]]
    faked_procs = block["faked_procs"]
    real_procs = block.get("real_procs", procs_of(block, matrix))
    cell = rotation = 0
    for np in procs_of(block, matrix):
        faked_index = faked_procs.index(np) if np in faked_procs else -1
        for placement_index, placement in enumerate(block["placements"], start=1):
            if placement != "real" and (faked_index < 0 or (placement_index + faked_index) % 3 != 1):
                continue
            if placement == "real" and np not in real_procs:
                continue
            topology = [] if placement == "real" else [f"COLLSHIM_TOPOLOGY=nodes={placement['nodes']},mapping={placement['mapping']}"]
            placement_name = "real" if placement == "real" else f"{placement['mapping']}{placement['nodes']}"
            specs = ["hierarchical"]
            third = cell % 3
            cell += 1
            if third != 1:
                rotated = inters[rotation % len(inters)]
                odd = (rotation // len(inters) + rotation) % 2
                rotation += 1
                specs += ["hierarchical:intra=shm",
                          f"hierarchical:inter={rotated}" if odd else f"hierarchical:inter={rotated},intra=shm"]
            for spec in specs:
                values = spec_values(registry, collective, spec, np)
                values["placement"] = placement_name
                values["logged"] = "native \\(one process" if np == 1 else spec + " "
                expected = expectations(block["expect"]["runs"], values)
                writer.add(fill(block["name"], values), np,
                           run_args(context, block, registry, spec, values, expected, topology), rotate=True,
                           labels=variant_labels(spec, "inter="))


def add_rotating_placements(block, matrix, registry, writer, context):
    """One spec per p, placement and shape taking turns (node_grid); `also` blocks at some p."""
    for index, np in enumerate(block["procs"]):
        placement = block["placements"][index % len(block["placements"])]
        spec = block["specs"][index % len(block["specs"])]
        topology = [] if placement == "real" else [f"COLLSHIM_TOPOLOGY=nodes={placement['nodes']},mapping={placement['mapping']}"]
        for part in [block] + [b for b in block.get("also", []) if np in b["procs"]]:
            part = dict(block, **{k: v for k, v in part.items() if k != "procs"})
            values = spec_values(registry, part["collective"], spec, np)
            values["placement"] = "real" if placement == "real" else f"{placement['mapping']}{placement['nodes']}"
            values["logged"] = "native \\(one process" if np == 1 else spec + " "
            expected = expectations(part["expect"]["runs"], values)
            writer.add(fill(part["name"], values), np, run_args(context, part, registry, spec, values, expected, topology),
                       rotate=True)


def add_failure_policy(block, matrix, registry, writer, context):
    """Every registry algorithm of the collective (but `except`) plus `variants`, at each cell of `runs`.
    `sanitize` puts some in the sanitizer subset: every spec of its `algorithms` (a spec's algorithm is
    its name before ':') at each of its `runs` (default: every run)."""
    collective = block["collective"]
    specs = [a["name"] for a in registry.algorithms(collective) if a["name"] not in block.get("except", {})]
    specs += block.get("variants", [])
    sanitize = block.get("sanitize", {})
    sanitized_runs = sanitize.get("runs", block["runs"])
    if any(run not in block["runs"] for run in sanitized_runs):
        sys.exit(f"generate_mpi_tests.py: block {block['name']}: a `sanitize` run that is not one of its `runs`")
    for spec in specs:
        for run in block["runs"]:
            values = dict(spec_values(registry, collective, spec, run["np"]), **run)
            sanitized = spec.split(":")[0] in sanitize.get("algorithms", []) and run in sanitized_runs
            writer.add(fill(block["name"], values), run["np"], run_args(context, block, registry, spec, values, []),
                       timeout=block.get("timeout", 240), labels=("mpi", "sanitize") if sanitized else ("mpi",))


def add_forms(block, matrix, registry, writer, context):
    """Every registry algorithm (but `except`) of each part's collective in the block's `form`
    (nonblocking or persistent: the program's --form), at the p of `procs`, one entry (a list of p)
    per algorithm in turn across the parts; the log checked per entry point of `functions`: the
    algorithm, its fallback where p makes it ineligible, or its nonblocking fallback where the
    registry declares it blocking-only."""
    turn = 0
    for part in block["parts"]:
        part = dict(block, **part)
        collective = part["collective"]
        names = [a["name"] for a in registry.algorithms(collective) if a["name"] not in part.get("except", {})]
        for spec in names:
            for np in part["procs"][turn % len(part["procs"])]:
                values = dict(spec_values(registry, collective, spec, np), form=part["form"], program=part["program"],
                              collective=collective)
                facts = registry.specs[(collective, spec)]
                # Blocking-only (the registry says why): its nonblocking fallback runs, at every p.
                case = ("blocking_only" if facts.get("blocking_only") else
                        "fallback" if np in facts["ineligible_procs"] else "runs")
                expected = [fill(arg, dict(values, function=function))
                            for function in part["functions"] for arg in expectations(part["expect"][case], values)]
                writer.add(fill(part["name"], values), np,
                           run_args(context, part, registry, spec, values, expected), timeout=part.get("timeout", 240))
            turn += 1


# The other tests (tests/test_cases.json): one entry per test or family, no registry needed.

def is_choice(value):
    return isinstance(value, dict) and "else" in value


def chosen(value, flags):
    """A value that differs by build, {"mpich": A, "else": B}: the first key that is a flag of this
    build (its MPI flavour, sanitize, fortran, cuda) picks, else `else`; anything else is itself."""
    if is_choice(value):
        return next((v for key, v in value.items() if key in flags), value["else"])
    return value


def applies(case, flags):
    """`when`: flags that must all hold (`!flag`: must not)."""
    return all((flag[1:] not in flags) if flag.startswith("!") else (flag in flags) for flag in case.get("when", []))


def filled(item, values, flags):
    """Templates filled and build choices made; a choice inside a list (a list) is spliced into it."""
    item = chosen(item, flags)
    if isinstance(item, str):
        return fill(item, values)
    if isinstance(item, list):
        out = []
        for part in item:
            if is_choice(part):
                out += filled(part, values, flags)
            else:
                out.append(filled(part, values, flags))
        return out
    return item


def case_rows(case, flags):
    """The values of each test of an entry: the product of its `for` lists (each a list of value
    sets), every p of `procs`; one test when it has neither."""
    rows = [{}]
    for group in case.get("for", []):
        rows = [dict(row, **values) for row in rows for values in chosen(group, flags)]
    procs = chosen(case.get("procs"), flags)
    if procs is not None:
        rows = [dict(row, np=np) for np in procs for row in rows]
    elif "np" in case:
        rows = [dict(row, np=case["np"]) for row in rows]
    return rows


def runner_args(case, values, flags):
    """An MPI test's options to run_mpi_test.sh, from the entry's fields."""
    def f(key, default):
        return filled(case.get(key, default), values, flags)

    args = ["--preload", f("preload", "")] if "preload" in case else []
    for assignment in f("env", []):
        args += ["--env", assignment]
    if case.get("expect_failure"):
        args.append("--expect-failure")
    for count, regex in f("expect_lines", []):
        args += ["--expect-lines", str(count), regex]
    for regex in f("expect", []):
        args += ["--expect-output", regex]
    for regex in f("forbid", []):
        args += ["--forbid-output", regex]
    return args + ["--"] + f("run", [])


PROPERTIES = {"timeout": "TIMEOUT", "pass": "PASS_REGULAR_EXPRESSION", "fail": "FAIL_REGULAR_EXPRESSION",
              "will_fail": "WILL_FAIL", "fixtures_setup": "FIXTURES_SETUP", "fixtures_required": "FIXTURES_REQUIRED",
              "skip_return_code": "SKIP_RETURN_CODE"}


COMMON_FIELDS = {"about", "name", "np", "procs", "for", "values", "when", "labels", "sanitize"} | set(PROPERTIES)
RUN_FIELDS = {"run", "preload", "env", "expect", "forbid", "expect_lines", "expect_failure"}
COMMAND_FIELDS = {"command", "mpi"}


def check_case(case):
    """An entry is an MPI test (`run`) or a command (`command`), with only the fields of its kind: a
    misspelt field would otherwise drop a check unseen."""
    kind = RUN_FIELDS if "run" in case else COMMAND_FIELDS
    unknown = set(case) - COMMON_FIELDS - kind
    if ("run" in case) == ("command" in case) or unknown:
        sys.exit(f"generate_mpi_tests.py: test_cases entry {case.get('name')}: needs one of run and command; "
                 f"fields not known for its kind: {sorted(unknown)}")


def add_cases(cases, context, writer, write_files=True):
    """Every entry of tests/test_cases.json whose `when` holds, one test per row of values. `sanitize`
    (true: every test of the entry; a list: those at these p) adds label sanitize."""
    flags = set(context["flags"])
    for name, text in cases.get("files", {}).items() if write_files else []:
        with open(os.path.join(context["paths"]["tests_build"], name), "w") as f:
            f.write("".join(text))
    base = dict(context["paths"], **context["programs"])
    for case in cases["cases"]:
        check_case(case)
        if not applies(case, flags):
            continue
        rows = case_rows(case, flags)
        sanitize = chosen(case.get("sanitize", False), flags)
        if isinstance(sanitize, list) and not set(sanitize) <= {row.get("np") for row in rows}:
            sys.exit(f"generate_mpi_tests.py: test_cases entry {case['name']}: `sanitize` names a p it does not run at")
        for row in rows:
            values = {**base, **{k: chosen(v, flags) for k, v in case.get("values", {}).items()}, **row}
            values = {k: filled(v, values, flags) for k, v in values.items()}  # values made of values
            name = fill(case["name"], values)
            properties = {PROPERTIES[k]: filled(v, values, flags) for k, v in case.items() if k in PROPERTIES}
            labels = filled(case.get("labels", []), values, flags)
            if sanitize is True or (isinstance(sanitize, list) and row.get("np") in sanitize):
                labels = labels + ["sanitize"]
            if "run" in case:
                properties.pop("TIMEOUT", None)
                # A family Open MPI runs too runs once under MPICH (Writer.write); an MPICH-only one keeps its p.
                writer.add(name, values["np"], runner_args(case, values, flags), timeout=case.get("timeout", 240),
                           labels=["mpi"] + labels, properties=properties,
                           rotate="mpich" not in case.get("when", []))
                continue
            if case.get("mpi"):
                labels = ["mpi"] + labels
                properties["ENVIRONMENT"] = context["environment"]
            if labels:
                properties["LABELS"] = labels
            writer.add_command(name, values.get("np"), filled(case["command"], values, flags), properties)


def label_sanitized(tests, rule):
    """The matrix's rule for the sanitizer subset (its `sanitize`): label sanitize on every test at the
    rule's p but the parameter variants (label variant)."""
    for _, np, _, properties, _ in tests:
        labels = properties["LABELS"]
        if np in rule["procs"] and "variant" not in labels and "sanitize" not in labels:
            labels.append("sanitize")


KINDS = {"forced": add_forced, "cells": add_cells, "hierarchical_placements": add_hierarchical_placements,
         "rotating_placements": add_rotating_placements, "failure_policy": add_failure_policy, "forms": add_forms}


def specs_needed(matrix):
    """(collective, spec) of every variant the matrix names, for `collshim-config list --json --spec`."""
    needed = set()
    for block in matrix["blocks"]:
        collective = block.get("collective")
        for group in block.get("rotate", []):
            needed.update((collective, s) for s in group["specs"])
        needed.update((collective, e["spec"]) for e in block.get("at_procs", []))
        needed.update((collective, c["spec"]) for c in block.get("cells", []) if "spec" in c)
        needed.update((collective, s) for s in block.get("variants", []) + block.get("specs", []))
        for also in block.get("also", []):
            needed.update((also["collective"], s) for s in block.get("specs", []))
    return needed


def runs_here(block, context):
    """Whether this build runs the matrix block (`skip_flavours`: an MPI flavour or build flag)."""
    return not {context["flavour"], *context["flags"]} & set(block.get("skip_flavours", []))


def programs_named(command, programs):
    """The targets (of `programs`, target: file) whose files `command` names, as an argument or as a part
    of one between spaces, ':' and '=' (--preload SHIM:TOOL)."""
    parts = {part for arg in command for part in re.split(r"[\s:=]", str(arg))}
    return {target for target, path in programs.items() if path in parts}


def sanitizer_programs(writer, programs):
    """The targets the tests labelled sanitize name."""
    return set().union(*(programs_named(command, programs) for _, command, properties in writer.kept()
                         if "sanitize" in properties.get("LABELS", [])))


def list_sanitizer_programs(matrix, cases, context):
    """The targets the sanitizer subset (label sanitize) runs, for tests/CMakeLists.txt's target
    mpi_sanitizer_programs, at configure time: CMake must know a target's dependencies before anything
    is built, so before the registry (collshim-config) is. Hence the shim, the programs of every matrix
    block this build runs (each has tests in the subset: the rule's p, or the block's `sanitize`), and
    the targets the labelled tests of tests/test_cases.json name (those need no registry). The
    build-time run checks that the tests it writes need no other."""
    # The context CMake writes at configure time names each target's file as $<TARGET_FILE:name>,
    # which CMake fills in only later: a placeholder per target stands in.
    placeholders = {path: f"<{target}>" for target, path in context["programs"].items()}
    context["programs"] = {target: placeholders[path] for target, path in context["programs"].items()}
    context["shim"] = context["paths"]["shim"] = placeholders[context["shim"]]
    writer = Writer(context)
    add_cases(cases, context, writer, write_files=False)
    targets = sanitizer_programs(writer, context["programs"])
    targets |= {target for target, path in context["programs"].items() if path == context["shim"]}
    for block in matrix["blocks"]:
        if runs_here(block, context):
            parts = [block] + block.get("also", []) + block.get("parts", [])
            targets |= {part["program"] for part in parts if "program" in part}
    return sorted(targets)


def main():
    listing = sys.argv[1] == "--sanitizer-programs"
    matrix_file, cases_file, context_file, *output = sys.argv[2:] if listing else sys.argv[1:5]
    with open(matrix_file) as f:
        matrix = json.load(f)
    with open(cases_file) as f:
        cases = json.load(f)
    with open(context_file) as f:
        context = json.load(f)
    context["max_procs"] = int(context["max_procs"])
    for key in ("environment", "flags", "sanitizer_programs"):  # CMake lists
        context[key] = [e for e in context.get(key, "").split(";") if e]
    if listing:
        print(";".join(list_sanitizer_programs(matrix, cases, context)))
        return
    probe = Registry(context["tool"], [])
    needed = specs_needed(matrix)
    for collective, info in probe.collectives.items():
        needed.update((collective, a["name"]) for a in info["algorithms"])
    # Hierarchical's rotated inter= specs are made from the registry: list them all.
    for block in matrix["blocks"]:
        if block["kind"] == "hierarchical_placements":
            hierarchical = probe.algorithm(block["collective"], "hierarchical")
            inter = next(p for p in hierarchical["params"] if p["name"] == "inter")
            for name in inter["accepts_algorithms"]:
                needed.update({(block["collective"], s) for s in
                               ("hierarchical:intra=shm", f"hierarchical:inter={name}", f"hierarchical:inter={name},intra=shm")})
    registry = Registry(context["tool"], needed)
    writer = Writer(context)
    for block in matrix["blocks"]:
        if not runs_here(block, context):
            continue
        start = len(writer.tests)
        KINDS[block["kind"]](block, matrix, registry, writer, context)
        label_sanitized(writer.tests[start:], matrix["sanitize"])
    add_cases(cases, context, writer)
    missing = sanitizer_programs(writer, context["programs"]) - set(context["sanitizer_programs"])
    if missing:
        sys.exit(f"generate_mpi_tests.py: tests labelled sanitize run {', '.join(sorted(missing))}, which the target "
                 "mpi_sanitizer_programs does not build (its list, from --sanitizer-programs at configure time, "
                 "should hold every program those tests run)")
    text = "# Generated by tests/mpi/generate_mpi_tests.py from tests/mpi_matrix.json and tests/test_cases.json: do not edit.\n"
    text += "\n".join(writer.write()) + "\n"
    with open(output[0], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
