"""The workspace the control-socket benchmarks share: a config with one hourly job whose
command appends a line to a marker file, and a count of those lines (the job's runs)."""
import tempfile


def workspace(prefix):
    """A new temporary directory with config.toml; returns (work, config, marker, socket)."""
    work = tempfile.mkdtemp(prefix=prefix)
    config, marker, sock = f"{work}/config.toml", f"{work}/runs.txt", f"{work}/run/control.sock"
    with open(config, "w") as f:
        f.write(f'''[store]
path = "{work}/state.sqlite"
[control]
socket = "{sock}"
[[job]]
id = "dev.example.tick"
command = ["/bin/sh", "-c", "echo run >> {marker}"]
every = "1h"
''')
    return work, config, marker, sock


def runs(marker):
    """How often the job has run so far."""
    try:
        with open(marker) as f:
            return len(f.readlines())
    except FileNotFoundError:
        return 0
