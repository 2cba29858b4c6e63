"""The program `hotline run --listen-tcp` runs in tests/dist (case
tcp_gate_guards): raw connections to the run's gate that break its rules,
each of which the gate must close. Prints one JSON line: for each probe,
whether the server closed the connection."""
import json
import os
import socket


def closed_by_server(payload, close_write=False):
    host, _, port = os.environ["HOTLINE_TCP"].rpartition(":")
    s = socket.create_connection((host, int(port)), timeout=5)
    try:
        s.sendall(payload)
        if close_write:
            s.shutdown(socket.SHUT_WR)
        s.settimeout(5)
        return s.recv(1) == b""
    except OSError:
        return True  # reset: closed as well
    finally:
        s.close()


def main():
    res = {
        # 200 bytes and no newline: longer than a token line may be
        "long_line": closed_by_server(b"x" * 200),
        # a token line of the right shape with the wrong digits
        "wrong_token": closed_by_server(b"hotline-token " + b"0" * 64 + b"\n" + b"{}\n"),
        # no token at all: a hello straight away
        "no_token": closed_by_server(b'{"t":"hello","v":1,"pid":1}\n'),
        # gone before its line ended
        "half_line": closed_by_server(b"hotline-tok", close_write=True),
    }
    print(json.dumps(res))


if __name__ == "__main__":
    main()
