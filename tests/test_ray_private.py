"""A local Ray instance that boardzoo starts listens on the loopback interface only (one Ray
start, in a fresh process; Linux only: it reads the sockets from /proc)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

#: Starts Ray through boardzoo, runs a task, then prints the address of every TCP socket that
#: this process or its descendants (GCS, raylet, workers, agents) listen on, and the GCS port.
LISTENERS = r'''
import json, os, socket
from boardzoo.agents.distributed import connect

conn = connect(None, 1)
ray = conn.ray
ray.get(ray.remote(lambda: 1).remote())
parents = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        continue
    parents[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])
tree, grew = {os.getpid()}, True
while grew:
    new = {p for p, pp in parents.items() if pp in tree} - tree
    tree |= new
    grew = bool(new)
inodes = set()
for pid in tree:
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    except OSError:
        continue
found = []
for name, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
    for line in open(f"/proc/net/{name}").read().splitlines()[1:]:
        cols = line.split()
        if cols[3] != "0A" or cols[9] not in inodes:  # 0A: LISTEN
            continue
        host, port = cols[1].split(":")
        raw = b"".join(bytes.fromhex(host[i:i + 8])[::-1] for i in range(0, len(host), 8))
        found.append([socket.inet_ntop(family, raw), int(port, 16)])
gcs_port = int(ray._private.worker._global_node.gcs_address.rsplit(":", 1)[1])
conn.close()
print(json.dumps({"listen": found, "gcs_port": gcs_port}))
'''


def test_a_local_ray_instance_listens_on_loopback_only():
    pytest.importorskip("ray")
    proc = subprocess.run([sys.executable, "-c", LISTENERS], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["gcs_port"] in [port for _, port in got["listen"]]  # the sockets were found
    assert len(got["listen"]) >= 3  # GCS, raylet (two servers), workers, agents
    exposed = [a for a in got["listen"] if a[0] not in ("127.0.0.1", "::ffff:127.0.0.1", "::1")]
    assert exposed == [], got
