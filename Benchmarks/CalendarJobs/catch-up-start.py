#!/usr/bin/env python3
"""A per-second calendar job whose last elapse is far back: daemon start → ready, the one
catch-up run, and SIGTERM → exit (issue #40: the catch-up used to walk every missed elapse,
31.5 million for a year, spinning at start for minutes and deaf to SIGTERM meanwhile).

Usage:
  swift build --product backgrounder            # or -c release
  python3 Benchmarks/CalendarJobs/catch-up-start.py [--binary PATH] [--years 1] [--rounds 3]

Each round: a fresh store; the daemon runs the job (`calendar = "*:*:*"`, appending the time to
a file) once and is stopped; the store's `lastElapse` (and `nextRun`) are moved YEARS back, as
after a machine off that long; the daemon is started again. Reported: start → "daemon ready",
start → the catch-up run (its line in the file), SIGTERM → exit, and SIGTERM 50 ms after a
start (while it computes schedules) → exit. Not a test: timings vary
with the machine.
"""
import argparse, os, signal, sqlite3, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/debug/backgrounder")
parser.add_argument("--years", type=float, default=1.0)
parser.add_argument("--rounds", type=int, default=3)
args = parser.parse_args()
binary = os.path.abspath(args.binary)


def wait_for(predicate, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.005)
    sys.exit(f"catch-up-start: timed out waiting for {what}")


def lines(path):
    try:
        with open(path) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def start(directory, log):
    return subprocess.Popen([binary, "run", "--config", f"{directory}/config.toml"],
                            stderr=open(log, "w"), stdout=subprocess.DEVNULL)


def stop(daemon):
    sent = time.time()
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(timeout=60)
    return time.time() - sent


def one_round(index):
    directory = tempfile.mkdtemp(prefix="bg-catch-up-")
    os.chmod(directory, 0o700)
    runs = f"{directory}/runs"
    with open(f"{directory}/config.toml", "w") as f:
        f.write(f'[store]\npath = "{directory}/state.sqlite"\n'
                f'[control]\nsocket = "{directory}/control.sock"\n'
                f'[[job]]\nid = "dev.bench.per-second"\n'
                f'command = ["/bin/sh", "-c", "date +%s.%N >> {runs}"]\n'
                f'calendar = "*:*:*"\n')
    first = start(directory, f"{directory}/first.log")
    wait_for(lambda: len(lines(runs)) >= 1, 30, "the first run")
    stop(first)
    back = int(args.years * 365.25 * 86400 * 1e9)
    with sqlite3.connect(f"{directory}/state.sqlite") as db:
        db.execute("UPDATE task SET lastElapse = lastElapse - ?, nextRun = nextRun - ?",
                   (back, back))
    before = len(lines(runs))
    log = f"{directory}/second.log"
    started = time.time()
    second = start(directory, log)
    ready = wait_for(lambda: "daemon ready" in open(log).read() and time.time(), 600,
                     "daemon ready") - started
    caught_up = wait_for(lambda: len(lines(runs)) > before and time.time(), 600,
                         "the catch-up run") - started
    exit_time = stop(second)
    # Once more a year behind, SIGTERM while the daemon is still starting (computing schedules).
    with sqlite3.connect(f"{directory}/state.sqlite") as db:
        db.execute("UPDATE task SET lastElapse = lastElapse - ?, nextRun = nextRun - ?",
                   (back, back))
    third = start(directory, f"{directory}/third.log")
    time.sleep(0.05)
    early_exit = stop(third)
    print(f"round {index}: {args.years:g} year(s) behind: start → ready {ready * 1000:.0f} ms, "
          f"start → catch-up run {caught_up * 1000:.0f} ms, SIGTERM → exit "
          f"{exit_time * 1000:.0f} ms; SIGTERM 50 ms after start → exit "
          f"{early_exit * 1000:.0f} ms")
    subprocess.run(["rm", "-rf", directory])


for index in range(1, args.rounds + 1):
    one_round(index)
