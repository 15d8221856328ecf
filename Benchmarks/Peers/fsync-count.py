#!/usr/bin/env python3
"""Counts the fsync and fdatasync calls of a command and all its threads and children.

Usage (root or ptrace rights):
  fsync-count.py --output FILE.json --jobs N [--from TEXT --to TEXT] -- COMMAND...

Runs COMMAND under `strace -f --seccomp-bpf -e trace=fsync,fdatasync,write` (only those calls
stop the tracee). With --from/--to, only the calls between the command's write of a line
starting with FROM and its write of a line starting with TO count (to isolate one phase of a
benchmark that prints a line per phase).
"""
import argparse, json, os, re, subprocess, sys, tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--output", required=True)
parser.add_argument("--jobs", type=int, required=True, help="jobs the command runs (recorded)")
parser.add_argument("--from", dest="start")
parser.add_argument("--to", dest="end")
parser.add_argument("command", nargs=argparse.REMAINDER)
args = parser.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command
if not command:
    sys.exit("fsync-count: no command given")

log = tempfile.NamedTemporaryFile(prefix="fsync-count-", suffix=".strace", delete=False).name
try:
    run = subprocess.run(["strace", "-f", "-q", "--seccomp-bpf", "-s", "80", "-o", log,
                          "-e", "trace=fsync,fdatasync,write", *command],
                         stdout=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit(f"fsync-count: {' '.join(command)} exited with {run.returncode}")
    counting = args.start is None
    counts = {"fsync": 0, "fdatasync": 0}
    with open(log) as f:
        for line in f:
            written = re.search(r'write\(1, "(.*)', line)
            if written and args.start and written.group(1).startswith(args.start):
                counting = True
            elif written and args.end and written.group(1).startswith(args.end):
                break
            call = re.match(r"^\d+\s+(fsync|fdatasync)\(", line)
            if call and counting:
                counts[call.group(1)] += 1
    if not counting:
        sys.exit(f"fsync-count: the command never wrote a line starting with {args.start!r}")
    result = {"command": " ".join(command), "jobs": args.jobs, **counts,
              "per_job": (counts["fsync"] + counts["fdatasync"]) / args.jobs}
    with open(args.output, "w") as f:
        json.dump(result, f)
    print(json.dumps(result))
finally:
    os.unlink(log)
