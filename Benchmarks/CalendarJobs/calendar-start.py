#!/usr/bin/env python3
"""Many calendar jobs beside as many `every` jobs: daemon start → ready, → first dispatch, RSS.

Usage:
  swift build -c release --product backgrounder
  python3 Benchmarks/CalendarJobs/calendar-start.py [--binary PATH] [--jobs 10000] [--lead 60]

For each kind, a fresh store and a config of JOBS jobs running `/bin/sh -c 'date +%s.%N >> F'`:
- `every`: `every = "1d"`: each is due when the daemon schedules it;
- `calendar`: `calendar = "*-*-* HH:MM:SS UTC"`, one elapse LEAD seconds after the start, so
  that every job is scheduled before it.
Reported: start → "daemon ready" (every job scheduled and stored), start → first dispatch (the
first line of F) — for calendar jobs also elapse → first dispatch —, and VmRSS once ready (for
calendar jobs: before the elapse, every job waiting). The daemon is stopped after the first
dispatch plus a few seconds; not every job's run is waited for.
"""
import argparse, os, re, shutil, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/backgrounder")
parser.add_argument("--jobs", type=int, default=10000)
parser.add_argument("--lead", type=int, default=60)
args = parser.parse_args()
binary = os.path.abspath(args.binary)
work = tempfile.mkdtemp(prefix="bg-calendar-")


def write_config(kind, elapse):
    directory = f"{work}/{kind}"
    os.makedirs(directory)
    schedule = ('every = "1d"' if kind == "every" else
                'calendar = "*-*-* ' + time.strftime("%H:%M:%S", time.gmtime(elapse)) + ' UTC"')
    with open(f"{directory}/config.toml", "w") as f:
        f.write(f'[store]\npath = "{directory}/state.sqlite"\n'
                f'[control]\nsocket = "{directory}/control.sock"\n'
                f'[daemon]\nmax-concurrent = 16\n')
        for index in range(args.jobs):
            f.write(f'[[job]]\nid = "dev.bench.job-{index:05}"\n'
                    f'command = ["/bin/sh", "-c", "date +%s.%N >> {directory}/runs"]\n'
                    f'{schedule}\n')
    return directory


def first_run(directory):
    try:
        with open(f"{directory}/runs") as f:
            line = f.readline().strip()
            return float(line) if line else None
    except FileNotFoundError:
        return None


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def measure(kind):
    elapse = int(time.time()) + args.lead
    directory = write_config(kind, elapse)
    log = f"{directory}/daemon.log"
    started = time.time()
    daemon = subprocess.Popen([binary, "run", "--config", f"{directory}/config.toml"],
                              stderr=open(log, "w"), stdout=subprocess.DEVNULL)
    ready = rss = None
    try:
        deadline = started + args.lead + 120
        while time.time() < deadline and daemon.poll() is None:
            if ready is None and "daemon ready" in open(log).read():
                ready = time.time() - started
                rss = rss_kib(daemon.pid)
            dispatched = first_run(directory)
            if ready is not None and dispatched is not None:
                break
            time.sleep(0.02)
        else:
            sys.exit(f"calendar-start: {kind}: no dispatch; see {log}")
        line = (f"{kind:<9} {args.jobs} jobs: start → ready {ready * 1000:.0f} ms, "
                f"start → first dispatch {(dispatched - started) * 1000:.0f} ms")
        if kind == "calendar":
            line += f" (elapse → first dispatch {(dispatched - elapse) * 1000:.0f} ms)"
        print(line + f", VmRSS when ready {rss / 1024:.1f} MiB", flush=True)
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()


try:
    print(f"binary: {binary}")
    measure("every")
    measure("calendar")
finally:
    shutil.rmtree(work, ignore_errors=True)
