"""An agent on "another host" for tests/dist (tcp_* cases): streams to
`hotline run --listen-tcp` at ADDR with TOKEN (hotline's TCP gate), burns
in remote_burn() for SECONDS, stops, and prints one JSON line: its pid and
whether the agent ran."""
import json
import os
import sys
import time


def remote_burn(seconds):
    t0 = time.perf_counter()
    x = 0
    while time.perf_counter() - t0 < seconds:
        x += 1
    return x


def main():
    addr, token, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    from _hotline_agent import _remote
    import _hotline_agent
    started = _remote.start_tcp(addr, token, memory=False)
    remote_burn(seconds)
    if started:
        _hotline_agent.stop()
    print(json.dumps({"pid": os.getpid(), "started": started}), flush=True)


if __name__ == "__main__":
    main()
