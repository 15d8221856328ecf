#!/usr/bin/env python3
"""1,000 `timeout 1 backgrounder status --watch` against a daemon under `ulimit -n 1024`.

Usage: swift build -c release --product backgrounder &&
       python3 Benchmarks/ControlLatency/watch-churn.py [--binary PATH] [--watchers 1000]
           [--parallel 50]

Starts the daemon (soft descriptor limit 1024, systemd's default) with one job, runs WATCHERS
`timeout 1 backgrounder status --watch`, PARALLEL at a time, then reports the daemon's open
descriptors (before, right after, 2 s after), its CPU time over the 3 s after (a daemon spinning
in its accept loop uses ~3 s), the warnings it logged, and whether `status`, `trigger` (until the
job ran) and `schedule` + `cancel` still work.
"""
import argparse, os, shutil, subprocess, sys, time

import tick_job

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/backgrounder")
parser.add_argument("--watchers", type=int, default=1000)
parser.add_argument("--parallel", type=int, default=50)
args = parser.parse_args()
binary = os.path.abspath(args.binary)
work, config, marker, _ = tick_job.workspace("bg-watch-churn-")
log = f"{work}/daemon.log"


def lines():
    return tick_job.runs(marker)


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def verb(*arguments):
    result = subprocess.run([binary, arguments[0], "--config", config, *arguments[1:]],
                            capture_output=True, timeout=60)
    return result.returncode


with open(log, "w") as daemon_log:
    daemon = subprocess.Popen(["/bin/sh", "-c", 'ulimit -n 1024 && exec "$0" run --config "$1"',
                               binary, config], stderr=daemon_log, stdout=daemon_log)
try:
    deadline = time.monotonic() + 30
    while lines() == 0:
        if time.monotonic() > deadline:
            sys.exit("the daemon never ran the job")
        time.sleep(0.01)
    time.sleep(0.5)
    baseline = descriptors(daemon.pid)
    started = time.monotonic()
    for first in range(0, args.watchers, args.parallel):
        batch = [subprocess.Popen(["timeout", "1", binary, "status", "--watch", "--config", config],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for _ in range(min(args.parallel, args.watchers - first))]
        for watcher in batch:
            watcher.wait()
    elapsed = time.monotonic() - started
    right_after = descriptors(daemon.pid)
    time.sleep(2)
    later = descriptors(daemon.pid)
    cpu_before = cpu_seconds(daemon.pid)
    time.sleep(3)
    cpu = cpu_seconds(daemon.pid) - cpu_before
    before = lines()
    trigger = verb("trigger", "dev.example.tick")
    deadline = time.monotonic() + 30
    while lines() == before and time.monotonic() < deadline:
        time.sleep(0.01)
    ran = lines() > before
    status = verb("status")
    schedule = verb("schedule", "dev.example.later", "--once", "--delay", "1h", "--command",
                    "/bin/true")
    cancel = verb("cancel", "dev.example.later")
    with open(log) as f:
        warnings = sum(1 for line in f if " warning " in line or " error " in line)
    print(f"{args.watchers} watchers ({args.parallel} at a time) in {elapsed:.1f} s")
    print(f"daemon descriptors: baseline {baseline}, right after {right_after}, 2 s later {later}")
    print(f"daemon CPU over the 3 s after: {cpu:.2f} s")
    print(f"verbs after: trigger exit {trigger} (job ran: {ran}), status exit {status}, "
          f"schedule exit {schedule}, cancel exit {cancel}")
    print(f"warnings/errors in the daemon's log: {warnings}")
finally:
    daemon.terminate()
    daemon.wait(timeout=15)
    shutil.rmtree(work, ignore_errors=True)
