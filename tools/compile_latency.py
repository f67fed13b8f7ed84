#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Cold compile latency of the CPU backend over kiln-suite --smoke and the examples (issue 15).

Runs `kiln-suite --smoke` and each CPU example with the kernel cache off and KILN_LOG=compile, --runs rounds
interleaved (every program once per round), and prints per kernel the median over the rounds of the whole cold
compile (trace + kiln passes + code generation + load, as KILN_LOG=compile reports them), of codegen alone,
of codegen's CPU time (all threads) and of its longest part, then the median and maximum over all kernels.
The load average before and after is printed with them: wall times on a shared machine include waiting for a
core, so compare configurations measured interleaved or on an idle machine.

  tools/compile_latency.py [--build build] [--runs 5] [--compile-threads T] [--env NAME=VALUE ...]
                           [--versus NAME=VALUE ...] [--csv F]
  tools/compile_latency.py --callgrind [--build build] [--filter a,b]
  tools/compile_latency.py --warm [--build build] [--runs 7] [--filter a,b] [--versus NAME=VALUE ...]
  tools/compile_latency.py --warm --callgrind [--build build] [--filter a,b] [--versus NAME=VALUE ...] [--jobs J]

--compile-threads sets KILN_COMPILE_THREADS (1: every kernel compiled whole, what a machine without an idle
core gets). --callgrind counts instead the instructions executed by each kernel's compile_to_object (kiln IR -> LLVM IR
-> optimized -> object, compiled whole) under valgrind's callgrind, one number per kernel that does not depend on the
machine's load; valgrind presents its own CPU to LLVM (CPUID), so compare these counts only with counts taken
the same way.

--warm measures instead the first call of a fresh process whose disk cache holds its kernels (issue 15: <= 1 ms):
one process per kiln-suite kernel (`--smoke --filter`) and per example, each with a cache directory of its own
filled by one run beforehand, then --runs fresh processes. Per kernel the median over the processes of its first
call, split as KILN_LOG=compile reports it: the whole call, its compile part (the time to find its code: trace,
the cache key (store opened, target described, canonical IR printed and hashed), reading and checking the entry,
linking its objects) and those parts, and the run; "first" marks the first kernel of its process (which also pays
for the process's one-time set-up: the host's description, the JIT, the OpenMP team). The summary gives the median
and maximum of the compile part and of the whole call over the first kernels and over all kernels.
With --callgrind, per program the instructions its kernels' first calls executed to find their code (trace, key,
read, link: KernelCore's compile, not the run), the cache filled under valgrind too (its CPU is another); --jobs runs
that many programs at once (counts do not depend on the load).
"""
import argparse
import concurrent.futures
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile

EXAMPLES = ["pi", "saxpy", "dot", "softmax", "logistic_regression", "black_scholes", "normalize", "histogram",
            "jacobi2d", "heat3d", "smooth1d", "conv2d", "life"]
RECORD = re.compile(r"kiln: compile (\S+) target=cpu cache=\S+ trace=([\d.]+)us passes=([\d.]+)us "
                    r"codegen=([\d.]+)ms load=([\d.]+)us(?: codegen_cpu=([\d.]+)ms)?(?: longest_part_cpu=([\d.]+)ms)?")


def programs(build, example_n, filters):
    """(label, argv) of every program to run; `filters` limits kiln-suite to some kernels (and drops examples
    not named)."""
    out = []
    suite = os.path.join(build, "bench", "kiln-suite")
    suite_filters = [f for f in filters if f not in EXAMPLES]
    if os.path.exists(suite) and (suite_filters or not filters):
        argv = [suite, "--smoke"]
        if suite_filters:
            argv += ["--filter", ",".join(suite_filters)]
        out.append(("kiln-suite", argv))
    for ex in EXAMPLES:
        path = os.path.join(build, "examples", ex)
        if os.path.exists(path) and (not filters or ex in filters):
            out.append((ex, [path, str(example_n), "--reps", "1"]))
    if not out:
        sys.exit(f"compile_latency: no kiln-suite or examples under {build} (build kiln-suite and the examples)")
    return out


def environment(extra, threads):
    env = dict(os.environ)
    env.update({"KILN_CACHE": "off", "KILN_LOG": "compile"})
    if threads:
        env["KILN_COMPILE_THREADS"] = str(threads)
    for kv in extra:
        name, _, value = kv.partition("=")
        env[name] = value
    return env


def records(stderr):
    """(kernel, whole ms, codegen ms, codegen CPU ms, longest part CPU ms) per compile, in order."""
    out = []
    for m in RECORD.finditer(stderr):
        trace_us, passes_us, codegen_ms, load_us = (float(m.group(i)) for i in range(2, 6))
        cpu = float(m.group(6)) if m.group(6) else float("nan")
        longest = float(m.group(7)) if m.group(7) else cpu
        out.append((m.group(1), (trace_us + passes_us + load_us) / 1e3 + codegen_ms, codegen_ms, cpu, longest))
    return out


def run(argv, env):
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 77):
        sys.exit(f"compile_latency: {' '.join(argv)} exited with {p.returncode}:\n{p.stderr[-2000:]}")
    return p.stderr


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def wall(args):
    """Per configuration (the given one, and with --versus also the one with those settings on top), rounds
    interleaved: round r runs every program once in every configuration before round r + 1."""
    configs = [("", environment(args.env, args.compile_threads))]
    if args.versus:
        configs.append((" ".join(args.versus), environment(args.env + args.versus, args.compile_threads)))
    samples = [{} for _ in configs]  # per configuration: kernel -> list of (whole, codegen, cpu, longest)
    before = loadavg()
    for _ in range(args.runs):
        for c, (_, env) in enumerate(configs):
            for _, argv in programs(args.build, args.example_n, args.filter):
                seen = set()
                for kernel, *times in records(run(argv, env)):
                    # A kernel compiled twice in one process (another signature) counts once: its first compile.
                    if kernel not in seen:
                        seen.add(kernel)
                        samples[c].setdefault(kernel, []).append(times)
    after = loadavg()
    print(f"cold compile, cache off, {args.runs} interleaved runs, per kernel the median (ms); "
          f"KILN_COMPILE_THREADS={args.compile_threads or 'default'}; load average before {before}, after {after}")
    for (name, _), per_kernel in zip(configs, samples):
        rows = [(kernel, *(statistics.median(r[i] for r in runs) for i in range(4))) for kernel, runs in per_kernel.items()]
        rows.sort(key=lambda r: -r[1])
        if len(configs) > 1:
            print(f"--- {name or 'as given'}")
        print(f"{'kernel':24} {'whole':>8} {'codegen':>8} {'cg_cpu':>8} {'longest':>8}")
        for r in rows:
            print(f"{r[0]:24} {r[1]:8.1f} {r[2]:8.1f} {r[3]:8.1f} {r[4]:8.1f}")
        whole = [r[1] for r in rows]
        print(f"{len(rows)} kernels: whole median {statistics.median(whole):.1f} ms, max {max(whole):.1f} ms "
              f"({rows[0][0]}); codegen CPU median {statistics.median(r[3] for r in rows):.1f}, "
              f"max {max(r[3] for r in rows):.1f}")
        if args.csv:
            path = args.csv if len(configs) == 1 else args.csv.replace(".csv", f".{zip_index(configs, name)}.csv")
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["kernel", "whole_ms", "codegen_ms", "codegen_cpu_ms", "longest_part_cpu_ms"])
                w.writerows(rows)


def zip_index(configs, name):
    return [n for n, _ in configs].index(name)


FIRST_CALL = re.compile(r"kiln: first call (\S+) total=([\d.]+)us compile=([\d.]+)us run=([\d.]+)us "
                        r"faults=(\d+)/(\d+)")
HIT = re.compile(r"kiln: compile (\S+) target=cpu cache=disk trace=([\d.]+)us .*? keying=([\d.]+)us "
                 r"read=([\d.]+)us link=([\d.]+)us")


def first_calls(stderr):
    """[(kernel, total, compile, trace, keying, read, link, run, faults, first)]: times in µs (compile: the first
    call's time to find its code, trace + key + read + link, as KernelCore measures it), the minor page faults of the
    whole first call; one per first call of a kernel loaded from the disk cache (a kernel compiled again, or found in
    this process's memory, is left out)."""
    hits = {}
    for m in HIT.finditer(stderr):
        hits.setdefault(m.group(1), [float(m.group(i)) for i in range(2, 6)])
    out = []
    for i, m in enumerate(FIRST_CALL.finditer(stderr)):
        kernel = m.group(1)
        if kernel in hits and all(o[0] != kernel for o in out):
            out.append((kernel, float(m.group(2)), float(m.group(3)), *hits[kernel], float(m.group(4)),
                        int(m.group(5)) + int(m.group(6)), i == 0))
    return out


def per_kernel_programs(args):
    """(label, argv) of one process per kiln-suite kernel (`--smoke --filter`), then the examples."""
    suite = os.path.join(args.build, "bench", "kiln-suite")
    progs = [(c, [suite, "--smoke", "--filter", c]) for c in suite_cases(args.build)
             if not args.filter or c in args.filter]
    return progs + [(label, argv) for label, argv in programs(args.build, args.example_n, args.filter)
                    if label != "kiln-suite"]


def warm_configs(args):
    """(name, environment) of the libraries compared: as given, then --versus's if any."""
    return [("", args.env)] + ([(" ".join(args.versus), args.env + args.versus)] if args.versus else [])


def warm(args):
    progs, configs = per_kernel_programs(args), warm_configs(args)
    samples = [{} for _ in configs]  # kernel -> list of (total, compile, trace, keying, read, link, run, faults, first)
    before = loadavg()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {}
        for c, (_, extra) in enumerate(configs):
            for label, argv in progs:
                d = os.path.join(tmp, f"{c}-{label}")
                dirs[(c, label)] = d
                env = environment(extra, args.compile_threads)
                env.update({"KILN_CACHE": "on", "KILN_CACHE_DIR": d})
                run(argv, env)  # fills the cache (entries are on disk when it exits)
        for _ in range(args.runs):
            for c, (_, extra) in enumerate(configs):
                for label, argv in progs:
                    env = environment(extra, args.compile_threads)
                    env.update({"KILN_CACHE": "on", "KILN_CACHE_DIR": dirs[(c, label)]})
                    for kernel, *times in first_calls(run(argv, env)):
                        samples[c].setdefault(kernel, []).append(times)
    after = loadavg()
    print(f"first call in a fresh process, kernels in the disk cache, {args.runs} processes per program, per kernel "
          f"the median (ms); load average before {before}, after {after}")
    for (name, _), per_kernel in zip(configs, samples):
        if len(configs) > 1:
            print(f"--- {name or 'as given'}")
        cols = ["total", "compile", "trace", "keying", "read", "link", "run"]
        rows = []
        for kernel, runs in per_kernel.items():
            med = [statistics.median(r[i] for r in runs) / 1e3 for i in range(7)]
            rows.append((kernel, *med, statistics.median(r[7] for r in runs), sum(r[8] for r in runs) * 2 > len(runs)))
        rows.sort(key=lambda r: -r[2])
        print(f"{'kernel':24} " + " ".join(f"{c:>8}" for c in cols) + "  faults  first")
        for r in rows:
            print(f"{r[0]:24} " + " ".join(f"{v:8.3f}" for v in r[1:8]) + f" {r[8]:7.0f}" + ("  *" if r[9] else ""))
        # The compile part is what the cache decides; the whole first call also starts the OpenMP team where the
        # kernel opens a parallel region, which a loaded machine delays by up to seconds.
        for label, subset in (("first kernels", [r for r in rows if r[9]]), ("all kernels", rows)):
            if subset:
                for col, i in (("compile part", 2), ("whole first call", 1)):
                    v = [r[i] for r in subset]
                    print(f"{len(subset)} {label}, {col}: median {statistics.median(v):.3f} ms, max {max(v):.3f} ms "
                          f"({max(subset, key=lambda r: r[i])[0]})")
        if args.csv:
            path = args.csv if len(configs) == 1 else args.csv.replace(".csv", f".{zip_index(configs, name)}.csv")
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["kernel"] + [c + "_ms" for c in cols] + ["faults", "first"])
                w.writerows(rows)


def warm_callgrind(args):
    progs, configs = per_kernel_programs(args), warm_configs(args)
    counts = [{} for _ in configs]
    with tempfile.TemporaryDirectory() as tmp:
        def count(job):
            c, extra, label, argv = job
            env = environment(extra, 1)
            env.update({"KILN_CACHE": "on", "KILN_CACHE_DIR": os.path.join(tmp, f"{c}-{label}"), "KILN_NUM_THREADS": "1"})
            run(["valgrind", "--tool=none"] + argv, env)  # fills the cache as valgrind's CPU describes itself
            out = os.path.join(tmp, f"cg.{c}.{label}")
            vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                  "--toggle-collect=kiln::detail::KernelCore::Impl::compile*"]
            hits = len(first_calls(run(vg + argv, env)))
            with open(out) as f:
                total = next(int(line.split()[1]) for line in f if line.startswith(("summary:", "totals:")))
            print(f"  {label}{' (' + configs[c][0] + ')' if c else ''}: {total / 1e6:.3f} M ({hits} kernels from the cache)",
                  file=sys.stderr)
            return c, label, total, hits

        # Counts do not depend on the machine's load, so --jobs programs may run at once.
        jobs = [(c, extra, label, argv) for c, (_, extra) in enumerate(configs) for label, argv in progs]
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            for c, label, total, hits in pool.map(count, jobs):
                counts[c][label] = (total, hits)
    print("instructions executed by the first calls' compile (trace, key, read, link) of kernels found in the disk "
          "cache, per program (its first kernel pays the process's one-time set-up), callgrind, millions")
    for (name, _), per in zip(configs, counts):
        if len(configs) > 1:
            print(f"--- {name or 'as given'}")
        for label, (n, hits) in sorted(per.items(), key=lambda kv: -kv[1][0]):
            print(f"{label:24} {n / 1e6:10.3f}  ({hits} kernels)")
        print(f"{len(per)} programs: median {statistics.median(v[0] for v in per.values()) / 1e6:.3f} M, "
              f"max {max(v[0] for v in per.values()) / 1e6:.3f} M")


def suite_cases(build):
    """kiln-suite's case names (what --filter takes), from a --smoke run's table."""
    suite = os.path.join(build, "bench", "kiln-suite")
    if not os.path.exists(suite):
        return []
    env = dict(os.environ, KILN_CACHE="off")
    out = subprocess.run([suite, "--smoke"], env=env, capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines()[1:] if line.split()[2:3] == ["ok"]]


def callgrind(args):
    env = environment(args.env, 1)
    runs = per_kernel_programs(args)
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, argv in runs:
            # One process per suite kernel or example, collecting only inside compile_to_object (callgrind's
            # --dump-before/--dump-after do not fire together with --toggle-collect here, valgrind 3.19): a
            # program that compiles several kernels gets their sum, under their names joined by '+'.
            out = os.path.join(tmp, "cg.out")
            vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                  "--toggle-collect=kiln::codegen::cpu::compile_to_object*"]
            names = [r[0] for r in records(run(vg + argv, env))]
            with open(out) as f:
                total = next(int(line.split()[1]) for line in f if line.startswith(("summary:", "totals:")))
            counts["+".join(dict.fromkeys(names))] = total
            print(f"  {label}: {total / 1e6:.1f} M", file=sys.stderr)
    print("instructions executed by compile_to_object (kiln IR -> object, compiled whole), callgrind, millions")
    for kernel, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"{kernel:24} {n / 1e6:10.1f}")
    print(f"{len(counts)} programs: total {sum(counts.values()) / 1e6:.1f} M, median "
          f"{statistics.median(counts.values()) / 1e6:.1f} M, max {max(counts.values()) / 1e6:.1f} M")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["kernel", "instructions"])
            w.writerows(sorted(counts.items()))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--compile-threads", type=int, default=0)
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the programs (repeatable)")
    p.add_argument("--filter", type=lambda s: [x for x in s.split(",") if x], default=[],
                   help="kiln-suite kernels and examples to run (comma-separated)")
    p.add_argument("--example-n", type=int, default=10000, help="problem size given to the examples")
    p.add_argument("--versus", action="append", default=[],
                   help="NAME=VALUE: also run every round with these settings on top, interleaved (an A/B "
                        "comparison in one measurement, e.g. LD_LIBRARY_PATH=/other/build)")
    p.add_argument("--csv")
    p.add_argument("--callgrind", action="store_true")
    p.add_argument("--jobs", type=int, default=1, help="with --warm --callgrind: programs counted at once")
    p.add_argument("--warm", action="store_true", help="first call of fresh processes with a warm disk cache")
    args = p.parse_args()
    if args.warm:
        (warm_callgrind if args.callgrind else warm)(args)
    else:
        (callgrind if args.callgrind else wall)(args)


if __name__ == "__main__":
    main()
