"""The program `hotline run --listen-tcp` runs in tests/dist (tcp_* cases):
starts remote_agent.py with the run's address (its host replaced by
HOST when given) and TOKEN ("right": $HOTLINE_TOKEN; "wrong": another),
outside the run (no HOTLINE_SOCKET, no bootstrap), optionally under a
command prefix (ip netns exec NS), and prints the child's JSON line.
HOTLINE_TEST_DELAY=S: sleep S seconds before starting the child."""
import os
import subprocess
import sys
import time


def main():
    which, host = sys.argv[1], sys.argv[2]
    prefix = sys.argv[3:]
    addr = os.environ["HOTLINE_TCP"]
    if host != "-":
        addr = "%s:%s" % (host, addr.rpartition(":")[2])
    token = os.environ["HOTLINE_TOKEN"]
    if which == "wrong":
        token = "%064x" % (int(token, 16) ^ 1)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("HOTLINE_") and k != "LD_PRELOAD"}
    env["PYTHONPATH"] = os.environ["HOTLINE_TEST_PKGS"]
    here = os.path.dirname(os.path.abspath(__file__))
    # the timeline check: the child starts this late after the run's origin
    time.sleep(float(os.environ.get("HOTLINE_TEST_DELAY", "0")))
    out = subprocess.run(prefix + [sys.executable, os.path.join(here, "remote_agent.py"), addr,
                                   token, "1.0"], env=env, stdout=subprocess.PIPE, text=True,
                         timeout=120)
    sys.stdout.write(out.stdout)
    sys.exit(out.returncode)


if __name__ == "__main__":
    main()
