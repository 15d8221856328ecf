#!/usr/bin/env python3
"""Daemon CPU from exec to a serving control socket with many jobs: on a fresh store and on a
restart with the config unchanged (issue #35), beside `systemd-analyze calendar` given the
same number of expressions, in the same run.

Usage:
  Scripts/package   # or: swift build -c release --static-swift-stdlib --product backgrounder
  python3 Benchmarks/CalendarJobs/start-cpu.py --binary B [--baseline OLD_B] [--jobs 10000]
      [--rounds 3]

Each round, for each binary: a fresh store and a config of JOBS calendar jobs (each
`calendar = "*-*-* HH:MM:00 UTC"`, an elapse more than an hour away, so nothing runs), the
daemon started, and once the log says "daemon ready" and the control socket accepts a
connection its CPU time (user + system of every thread, /proc/PID/stat) is read; the daemon is
stopped (SIGTERM) and started again on the same store and config, and read the same way. The
peer: `systemd-analyze calendar` with JOBS expressions (CPU from wait4's rusage).
"""
import argparse, os, shutil, socket, statistics, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/backgrounder")
parser.add_argument("--baseline", help="an older binary, measured in the same rounds")
parser.add_argument("--jobs", type=int, default=10000)
parser.add_argument("--rounds", type=int, default=3)
args = parser.parse_args()
work = tempfile.mkdtemp(prefix="bg-start-cpu-")
ticks = os.sysconf("SC_CLK_TCK")
binaries = [("ours", os.path.abspath(args.binary))]
if args.baseline:
    binaries.insert(0, ("before", os.path.abspath(args.baseline)))
elapse = time.strftime("%H:%M", time.gmtime(time.time() + 2 * 3600))


def write_config(directory):
    os.makedirs(directory)
    with open(f"{directory}/config.toml", "w") as f:
        f.write(f'[store]\npath = "{directory}/state.sqlite"\n'
                f'[control]\nsocket = "{directory}/control.sock"\n')
        for index in range(args.jobs):
            f.write(f'[[job]]\nid = "dev.bench.job-{index:05}"\n'
                    f'command = ["/bin/true"]\ncalendar = "*-*-* {elapse}:00 UTC"\n')


def serving(path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        try:
            client.connect(path)
            return True
        except OSError:
            return False


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def start(binary, directory, label):
    log = f"{directory}/daemon-{label}.log"
    daemon = subprocess.Popen([binary, "run", "--config", f"{directory}/config.toml"],
                              stderr=open(log, "w"), stdout=subprocess.DEVNULL)
    try:
        deadline = time.time() + 600
        while time.time() < deadline and daemon.poll() is None:
            if "daemon ready" in open(log).read() and serving(f"{directory}/control.sock"):
                return cpu_seconds(daemon.pid)
            time.sleep(0.01)
        sys.exit(f"start-cpu: not ready; see {log}")
    finally:
        daemon.terminate()
        daemon.wait(timeout=120)


def peer():
    command = ["systemd-analyze", "calendar", *([f"*-*-* {elapse}:00 UTC"] * args.jobs)]
    with open(os.devnull, "wb") as null:
        process = subprocess.Popen(command, stdout=null, stderr=null)
        _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_utime + usage.ru_stime


try:
    results = {}
    for round in range(args.rounds):
        results.setdefault("systemd-analyze calendar", []).append(peer())
        for name, binary in binaries:
            directory = f"{work}/{name}-{round}"
            write_config(directory)
            results.setdefault(f"{name}: fresh store", []).append(start(binary, directory, "fresh"))
            results.setdefault(f"{name}: restart, same config", []).append(
                start(binary, directory, "restart"))
    print(f"{args.jobs} calendar jobs, {args.rounds} rounds: CPU seconds, median (min–max)")
    for name, values in results.items():
        print(f"{name:<34} {statistics.median(values):6.2f} s "
              f"({min(values):.2f}–{max(values):.2f})")
finally:
    shutil.rmtree(work, ignore_errors=True)
