"""python -m hotline [-m module | script.py] args...: run a program under the
Hotline agent, exactly as plain python would (sys.argv, sys.path[0],
__main__), writing the profile to HOTLINE_SOCKET / HOTLINE_OUT /
hotline-<pid>.jsonl."""
import os
import runpy
import sys

import _hotline_agent

USAGE = "usage: python -m hotline [-m module | script.py] [args...]\n"


def main():
    argv = sys.argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        sys.stderr.write(USAGE)
        return 2
    # as plain python: the program's own `import hotline` looks along its
    # sys.path (its folder first), not at this package that runpy imported
    sys.modules.pop("hotline", None)
    if argv[0] == "-m":
        if len(argv) < 2:
            sys.stderr.write(USAGE)
            return 2
        mod = argv[1]
        sys.argv = argv[1:]
        sys.path[0] = os.getcwd()
        _hotline_agent.start(main="-m " + mod)
        runpy.run_module(mod, run_name="__main__", alter_sys=True)
    else:
        script = os.path.abspath(argv[0])
        sys.argv = argv
        sys.path[0] = os.path.dirname(script)
        _hotline_agent.start(main=script)
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
