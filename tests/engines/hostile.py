"""A boardzoo engine that plays the first legal move (feature legal) while misbehaving in one
way, for the arena's bounds and containment tests. The first argument picks the way:
  info      sends 20,000 info lines of distinct keys (and numbers no JSON holds) each move
  feature   sends 200,000 feature lines in the handshake
  longmove  answers a 1 MB bestmove
  setsid    starts a `sleep 300` in a new session (escaping a process-group kill) and a
            double-forked one, then plays normally
"""

import os
import subprocess
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "play"
out = sys.stdout
first = ""
if mode == "setsid":
    subprocess.Popen(["sleep", "300"], start_new_session=True)
    if os.fork() == 0:  # double fork: the grandchild's parent exits at once
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "301"])
        os._exit(0)
    os.wait()
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "boardzoo":
        out.write("id name hostile.py\nprotocol 1\ngames loa ultima whistling\nfeature legal\n")
        if mode == "feature":
            for k in range(200_000):
                out.write(f"feature f{k} {'x' * 50}\n")
        out.write("ok\n")
    elif words[0] == "isready":
        out.write("readyok\n")
    elif words[0] == "legal":
        first = words[1]
    elif words[0] == "go":
        if mode == "info":
            for k in range(20_000):
                out.write(f"info key{k} {k} big 1e999 long {'9' * 5000} name {'y' * 1000}\n")
        out.write(f"bestmove {'z' * 1_000_000 if mode == 'longmove' else first}\n")
    elif words[0] == "quit":
        break
    out.flush()
