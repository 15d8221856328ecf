#!/usr/bin/env python3
"""Wall and CPU time of `backgrounder status --json` with many jobs, daemon running and stopped.

Usage:
  Scripts/package   # or: swift build -c release --static-swift-stdlib --product backgrounder
  python3 Benchmarks/StatusLatency/status-latency.py [--binary PATH] [--jobs 1000] [--runs 30]
          [--keep DIR] [--history RUNS]

1. Writes a config with JOBS periodic jobs (`every = "1d"`, `/bin/true`) whose store and control
   socket live in a temporary directory, starts `backgrounder run` on it and waits until every
   job ran once (so the store holds JOBS tasks with one run each).
2. Times `status --json --config C` RUNS times (after 3 warm-ups) with the daemon running, then
   stopped: wall time by `hyperfine -N` when installed (else around each child here), and CPU
   time (user + system) per run from the children's rusage. Prints median, min and max of each,
   with the load average before and after: the numbers mean little on a busy machine.
3. With --history RUNS, first gives each task RUNS runs in all (one a day, interleaved across
   tasks, written into the store beside the idle daemon): the store as it is once the daemon
   has kept its full history (20 runs per task by default; `status` shows the newest 5).
"""
import argparse, json, os, resource, shutil, sqlite3, statistics, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/backgrounder")
parser.add_argument("--jobs", type=int, default=1000)
parser.add_argument("--runs", type=int, default=30)
parser.add_argument("--keep", help="reuse (or create and keep) this directory's config and store")
parser.add_argument("--history", type=int, default=1,
                    help="runs per task in the store while timing (default 1: each job ran once)")
args = parser.parse_args()
binary = os.path.abspath(args.binary)
work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="bg-status-")
os.makedirs(work, mode=0o700, exist_ok=True)
config = f"{work}/config.toml"
store = f"{work}/state.sqlite"


def write_config():
    with open(config, "w") as f:
        f.write(f'[store]\npath = "{store}"\n[control]\nsocket = "{work}/control.sock"\n'
                f'[daemon]\nmax-concurrent = 16\n')
        for index in range(args.jobs):
            f.write(f'[[job]]\nid = "dev.bench.job-{index:04}"\ncommand = ["/bin/true"]\n'
                    f'every = "1d"\n')


def runs_recorded():
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
            return db.execute("SELECT count(DISTINCT taskId) FROM run").fetchone()[0]
    except sqlite3.Error:
        return 0


def start_daemon():
    daemon = subprocess.Popen([binary, "run", "--config", config],
                              stderr=open(f"{work}/daemon.log", "w"))
    deadline = time.monotonic() + 120 + args.jobs / 10
    while runs_recorded() < args.jobs:
        if daemon.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"status-latency: the daemon ran {runs_recorded()} of {args.jobs} jobs; "
                     f"see {work}/daemon.log")
        time.sleep(0.2)
    return daemon


def fill_history():
    """Gives every task `--history` runs in all: copies of its latest, a day apart."""
    with sqlite3.connect(store, timeout=30) as db:
        have = db.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM run GROUP BY taskId)")
        missing = args.history - (have.fetchone()[0] or 0)
        day = 86_400 * 10**9
        for _ in range(missing):
            db.execute("""
                INSERT INTO run (taskId, attempt, startedAt, endedAt, outcome, reason)
                SELECT taskId, attempt, startedAt + ?1, endedAt + ?1, outcome, reason FROM run
                WHERE id IN (SELECT max(id) FROM run GROUP BY taskId) ORDER BY taskId
                """, (day,))


def load():
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def measure(label):
    command = [binary, "status", "--json", "--config", config]
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)  # fails loudly if broken
    walls, cpus = [], []
    if shutil.which("hyperfine"):
        report = f"{work}/hyperfine.json"
        subprocess.run(["hyperfine", "-N", "--warmup", "3", "--runs", str(args.runs),
                        "--export-json", report, "--style", "none", " ".join(command)],
                       stdout=subprocess.DEVNULL, check=True)
        with open(report) as f:
            result = json.load(f)["results"][0]
        walls = [seconds * 1000 for seconds in result["times"]]
        # hyperfine reports the mean CPU only; the per-run CPU comes from the loop below.
    for run in range(3 + args.runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
        wall = (time.monotonic() - started) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if run >= 3:
            cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                        * 1000)
            if not walls or len(walls) < args.runs:
                walls.append(wall)

    def summary(values):
        return (f"median {statistics.median(values):.1f} ms "
                f"(min {min(values):.1f}, max {max(values):.1f})")

    print(f"{label}: wall {summary(walls)}; CPU user+sys {summary(cpus)}", flush=True)


daemon = None
try:
    if not (args.keep and os.path.exists(config)):
        write_config()
    print(f"binary: {binary}; {args.jobs} jobs, {args.history} run(s) each in the store, "
          f"{args.runs} timed runs; load average {load()}",
          flush=True)
    daemon = start_daemon()
    if args.history > 1:
        fill_history()
    measure("daemon running")
    daemon.terminate()
    daemon.wait(timeout=30)
    daemon = None
    measure("daemon stopped")
    print(f"load average after: {load()}")
finally:
    if daemon is not None and daemon.poll() is None:
        daemon.kill()
        daemon.wait()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
