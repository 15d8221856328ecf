#!/usr/bin/env python3
"""The daemon's footprint: idle wake-ups, memory, `status --json` time, package size.

Usage (root: the daemon runs in a network namespace this script creates and deletes):
  Scripts/package   # or: swift build -c release --static-swift-stdlib --product backgrounder
  python3 Benchmarks/DaemonFootprint/daemon-footprint.py [--binary PATH] [--deb PATH]
          [--idle-seconds 60] [--jobs 100] [--many-jobs 1000] [--status-runs 20]

1. Starts `backgrounder run` with JOBS periodic jobs (`every = "1d"`, so after their first run
   none is due for a day) and waits until each has run once.
2. Counts, over IDLE seconds each, the system calls of all its threads (`strace -f -c`) and
   their voluntary context switches (/proc/PID/task/*/status), and its threads: idle; after a
   control request (`schedule` of a delayed job); after a network change (a veth pair in its
   namespace comes up and gets an address); after a job run (`trigger`).
3. VmRSS with JOBS and with MANY jobs (a fresh daemon, 2 s after it serves), and the growth per
   job; then with MANY jobs idle: each ran once, and 12 s after the last run (the daemon gives
   back what a burst used a second after its last work, at most every ten seconds).
4. Wall time of `status --json` with MANY jobs, daemon running and stopped: median, minimum
   and maximum of STATUS_RUNS runs, measured by `hyperfine -N` when installed.
5. The .deb's size and Installed-Size, when --deb is given.
"""
import argparse, json, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/backgrounder")
parser.add_argument("--deb")
parser.add_argument("--idle-seconds", type=int, default=60)
parser.add_argument("--jobs", type=int, default=100)
parser.add_argument("--many-jobs", type=int, default=1000)
parser.add_argument("--status-runs", type=int, default=20)
args = parser.parse_args()
binary = os.path.abspath(args.binary)
if os.geteuid() != 0:
    sys.exit("daemon-footprint: needs root (network namespace, strace -p)")
for tool in ("ip", "strace"):
    if shutil.which(tool) is None:
        sys.exit(f"daemon-footprint: {tool} is not installed (.ci/install-deps)")

work = tempfile.mkdtemp(prefix="bg-footprint-")
namespace = f"bg-footprint-{os.getpid()}"
subprocess.run(["ip", "netns", "add", namespace], check=True)


def ns(*command):
    subprocess.run(["ip", "-n", namespace, *command], check=True)


ns("link", "set", "lo", "up")
ns("link", "add", "fp0", "type", "veth", "peer", "name", "fp1")


def write_config(name, jobs):
    directory = f"{work}/{name}"
    os.makedirs(directory)
    with open(f"{directory}/config.toml", "w") as f:
        f.write(f'[store]\npath = "{directory}/state.sqlite"\n'
                f'[control]\nsocket = "{directory}/control.sock"\n'
                f'[daemon]\nmax-concurrent = 16\n')
        for index in range(jobs):
            f.write(f'[[job]]\nid = "dev.bench.job-{index:04}"\n'
                    f'command = ["/bin/sh", "-c", "echo run >> {directory}/runs"]\n'
                    f'every = "1d"\n')
    return directory


def runs(directory):
    try:
        with open(f"{directory}/runs") as f:
            return len(f.readlines())
    except FileNotFoundError:
        return 0


def start_daemon(directory, jobs):
    daemon = subprocess.Popen(
        ["ip", "netns", "exec", namespace, binary, "run", "--config", f"{directory}/config.toml"],
        stderr=open(f"{directory}/daemon.log", "w"))
    deadline = time.monotonic() + 120 + jobs / 10
    while runs(directory) < jobs:
        if daemon.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"daemon-footprint: the daemon ran {runs(directory)} of {jobs} jobs; "
                     f"see {directory}/daemon.log")
        time.sleep(0.1)
    time.sleep(3)  # let the last completions be recorded
    return daemon


def voluntary_switches(pid):
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                total += int(re.search(r"voluntary_ctxt_switches:\s+(\d+)", f.read()).group(1))
        except (FileNotFoundError, AttributeError):
            pass
    return total


def idle(pid, label):
    """System calls and voluntary context switches of every thread over the idle window."""
    time.sleep(2)
    trace = subprocess.Popen(["strace", "-f", "-c", "-q", "-p", str(pid)],
                             stderr=subprocess.PIPE, text=True)
    # Switches are counted inside the traced window, not across strace's attach and detach
    # (each ptrace stop of each thread is a voluntary switch).
    time.sleep(1)
    before = voluntary_switches(pid)
    time.sleep(args.idle_seconds)
    switches = voluntary_switches(pid) - before
    trace.send_signal(signal.SIGINT)
    report = trace.communicate(timeout=30)[1]
    # Rows of `strace -c`: % time, seconds, usecs/call, calls, [errors,] syscall.
    calls = {}
    for line in report.splitlines():
        fields = line.split()
        if len(fields) >= 5 and re.match(r"^[\d.]+$", fields[0]) and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3])
    # Attaching interrupts a thread blocked with a timeout (the dispatch loop's sleep until the
    # next due time), and the kernel resumes it with restart_syscall: strace's doing, not a
    # wake-up. It is shown, not counted.
    restarted = calls.pop("restart_syscall", 0)
    detail = ", ".join(f"{name} {count}" for name, count in sorted(
        calls.items(), key=lambda item: -item[1])[:4])
    note = f"  [+{restarted} restart_syscall from strace's attach]" if restarted else ""
    threads = len(os.listdir(f"/proc/{pid}/task"))
    print(f"{label:<34} {sum(calls.values()):>6} syscalls  {switches:>6} voluntary switches"
          f"  {threads:>3} threads  over {args.idle_seconds} s"
          f"{'  (' + detail + ')' if detail else ''}{note}", flush=True)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def status_ms(directory):
    """Wall times of `status --json` in ms over STATUS_RUNS runs (after 3 warm-ups), with
    hyperfine when it is installed (no shell: -N), else timed here around each child."""
    command = [binary, "status", "--json", "--config", f"{directory}/config.toml"]
    if shutil.which("hyperfine"):
        report = f"{directory}/hyperfine.json"
        subprocess.run(["hyperfine", "-N", "--warmup", "3", "--runs", str(args.status_runs),
                        "--export-json", report, "--style", "none", " ".join(command)],
                       stdout=subprocess.DEVNULL, check=True)
        with open(report) as f:
            times = [seconds * 1000 for seconds in json.load(f)["results"][0]["times"]]
    else:
        times = []
        for run in range(3 + args.status_runs):
            started = time.monotonic()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True)
            if run >= 3:
                times.append((time.monotonic() - started) * 1000)
    return statistics.median(times), min(times), max(times)


def stop(daemon):
    daemon.terminate()
    daemon.wait(timeout=20)


daemons = []
try:
    print(f"binary: {binary} ({os.path.getsize(binary) / 1e6:.1f} MB)")
    few = write_config("few", args.jobs)
    daemon = start_daemon(few, args.jobs)
    daemons.append(daemon)
    pid = daemon.pid
    idle(pid, f"idle, {args.jobs} jobs not due")
    subprocess.run([binary, "schedule", "dev.bench.later", "--once", "--delay", "1d",
                    "--config", f"{few}/config.toml", "--command", "/bin/true"],
                   check=True, capture_output=True)
    idle(pid, "after a control request")
    ns("link", "set", "fp0", "up")
    ns("link", "set", "fp1", "up")
    ns("address", "add", "192.0.2.1/24", "dev", "fp0")
    idle(pid, "after a network change")
    before = runs(few)
    subprocess.run([binary, "trigger", "dev.bench.job-0000", "--config", f"{few}/config.toml"],
                   check=True, capture_output=True)
    while runs(few) == before:
        time.sleep(0.05)
    idle(pid, "after a job run")
    rss_few = rss_kib(pid)
    stop(daemon)

    many = write_config("many", args.many_jobs)
    daemon = start_daemon(many, args.many_jobs)
    daemons.append(daemon)
    time.sleep(2)
    rss_many = rss_kib(daemon.pid)
    per_job = (rss_many - rss_few) * 1024 / (args.many_jobs - args.jobs)
    print(f"VmRSS: {rss_few / 1024:.1f} MiB with {args.jobs} jobs, "
          f"{rss_many / 1024:.1f} MiB with {args.many_jobs} jobs ({per_job:.0f} bytes/job)")
    # Idle: every job ran, and the daemon gave back what the burst used (a second after the
    # last work, at most every ten seconds: HeapTuning.releaseIdleMemory).
    deadline = time.monotonic() + 300
    while runs(many) < args.many_jobs and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(12)
    print(f"VmRSS idle with {args.many_jobs} jobs (each ran once, 12 s after the last run): "
          f"{rss_kib(daemon.pid) / 1024:.1f} MiB")
    running = status_ms(many)
    stop(daemon)
    stopped = status_ms(many)
    print(f"status --json, {args.many_jobs} jobs, {args.status_runs} runs: median "
          f"{running[0]:.1f} ms ({running[1]:.1f}–{running[2]:.1f}) daemon running; median "
          f"{stopped[0]:.1f} ms ({stopped[1]:.1f}–{stopped[2]:.1f}) daemon stopped")
    if args.deb:
        installed = subprocess.run(["dpkg-deb", "-f", args.deb, "Installed-Size"],
                                   capture_output=True, text=True, check=True).stdout.strip()
        print(f"package: {os.path.getsize(args.deb) / 1e6:.1f} MB .deb, "
              f"{int(installed) / 1024:.1f} MiB installed")
finally:
    for daemon in daemons:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    subprocess.run(["ip", "netns", "delete", namespace])
    shutil.rmtree(work, ignore_errors=True)
