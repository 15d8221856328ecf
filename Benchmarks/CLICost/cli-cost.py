#!/usr/bin/env python3
"""The CLI's fixed cost beside `ip -j route`, and `calendar` with many expressions beside
`systemd-analyze calendar` (issue #35), CPU time of each whole process, interleaved runs.

Usage:
  Scripts/package   # or: swift build -c release --static-swift-stdlib --product backgrounder
  python3 Benchmarks/CLICost/cli-cost.py --binary B [--baseline OLD_B] [--runs 30]
      [--expressions 10000]

Each round runs every command once, in turn (A B A B …), so that drift in the machine's speed
affects all alike; a command's CPU time is the user + system time of the process and its
children (`wait4`'s rusage). Printed per command: median and min–max CPU in ms, the ratio of
the medians to `ip -j route` (for `calendar` with many expressions: to systemd-analyze), and
the threads the command started (`clone`/`clone3` calls counted with `strace -f`, when
installed). `status --json` runs with no daemon, once with an empty store (a config in a
temporary directory) and once with a store holding one job (made by `schedule` of the measured
binary, as a store of a daemon that is not running). With `--baseline`, an older binary is
measured in the same rounds.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/backgrounder")
parser.add_argument("--baseline", help="an older binary, measured in the same rounds")
parser.add_argument("--runs", type=int, default=30)
parser.add_argument("--expressions", type=int, default=10000)
parser.add_argument("--many-runs", type=int, default=3, help="rounds with many expressions")
args = parser.parse_args()

work = tempfile.mkdtemp(prefix="bg-cli-cost-")
config = f"{work}/config.toml"
with open(config, "w") as f:
    f.write(f'[store]\npath = "{work}/state.sqlite"\n[control]\nsocket = "{work}/control.sock"\n')
# The same with a store that holds one job: a one-shot status opens (and leaves) a connection.
one_job = f"{work}/one-job.toml"
with open(one_job, "w") as f:
    f.write(f'[store]\npath = "{work}/one-job.sqlite"\n[control]\nsocket = "{work}/one-job.sock"\n')
subprocess.run([os.path.abspath(args.binary), "schedule", "bench.one-job", "--once", "--config",
                one_job, "--command", "/bin/true"], check=True, stdout=subprocess.DEVNULL)
binaries = [("ours", os.path.abspath(args.binary))]
if args.baseline:
    binaries.insert(0, ("before", os.path.abspath(args.baseline)))


def cpu_ms(command):
    """CPU time (user + system, children included) of one run of `command`, in ms."""
    with open(os.devnull, "wb") as null:
        process = subprocess.Popen(command, stdout=null, stderr=null, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"cli-cost: {command[:3]} exited with {status}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def threads(command):
    """Threads (and processes) the command started: its clone/clone3 calls."""
    if not shutil.which("strace"):
        return None
    trace = subprocess.run(["strace", "-f", "-qq", "-e", "trace=clone,clone3", "-o", "/dev/stdout",
                            *command], capture_output=True, text=True)
    return sum(1 for line in trace.stdout.splitlines() if "clone" in line)


def table(title, commands, runs, reference):
    samples = {name: [] for name, _ in commands}
    for _ in range(runs):
        for name, command in commands:
            samples[name].append(cpu_ms(command))
    floor = statistics.median(samples[reference])
    print(f"\n{title} ({runs} interleaved rounds)")
    print(f"{'command':<44} {'CPU median':>11} {'min–max':>17} {'÷ ' + reference:>14} threads")
    for name, command in commands:
        values = samples[name]
        median = statistics.median(values)
        spawned = threads(command)
        print(f"{name:<44} {median:>8.2f} ms {min(values):>7.2f}–{max(values):<7.2f} "
              f"{median / floor:>13.1f}× {'' if spawned is None else spawned}")


try:
    fixed = [("ip -j route", ["ip", "-j", "route"])]
    for label, binary in binaries:
        fixed += [
            (f"{label}: calendar daily", [binary, "calendar", "daily"]),
            (f"{label}: status --json (no daemon)", [binary, "status", "--json", "--config", config]),
            (f"{label}: status --json (one job)", [binary, "status", "--json", "--config", one_job]),
            (f"{label}: --help", [binary, "--help"]),
        ]
    table("CLI fixed cost", fixed, args.runs, "ip -j route")
    expressions = ["daily"] * args.expressions
    many = [("systemd-analyze calendar", ["systemd-analyze", "calendar", *expressions])]
    for label, binary in binaries:
        many.append((f"{label}: calendar ×{args.expressions}", [binary, "calendar", *expressions]))
    table(f"calendar with {args.expressions} expressions", many, args.many_runs,
          "systemd-analyze calendar")
finally:
    shutil.rmtree(work, ignore_errors=True)
