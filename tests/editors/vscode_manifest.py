#!/usr/bin/env python3
"""Issue 10, item 9: a workspace must not choose what VS Code runs or where
the API key goes. Checks editors/vscode/package.json: hotline.serverPath,
hotline.python and every hotline.llm.* setting are machine-scoped (VS Code
ignores them in a workspace's .vscode/settings.json), and the extension
declares that it does not run in untrusted workspaces (it runs the
workspace's programs).

Usage: vscode_manifest.py [package.json]
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def problems(manifest):
    out = []
    props = manifest.get("contributes", {}).get("configuration", {}).get("properties", {})
    guarded = ["hotline.serverPath", "hotline.python"] + sorted(k for k in props if k.startswith("hotline.llm."))
    if not any(k.startswith("hotline.llm.") for k in props):
        out.append("no hotline.llm.* settings found (the check would be empty)")
    for k in guarded:
        if k not in props:
            out.append("%s is not declared" % k)
        elif props[k].get("scope") != "machine":
            out.append("%s has scope %r, not \"machine\": a workspace could set it" % (k, props[k].get("scope")))
    ut = manifest.get("capabilities", {}).get("untrustedWorkspaces")
    if not isinstance(ut, dict):
        out.append("capabilities.untrustedWorkspaces is not declared")
    elif ut.get("supported") is not False:
        out.append("capabilities.untrustedWorkspaces.supported is %r, not false" % ut.get("supported"))
    elif not ut.get("description"):
        out.append("capabilities.untrustedWorkspaces has no description")
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "editors", "vscode", "package.json")
    with open(path, encoding="utf-8") as f:
        found = problems(json.load(f))
    for p in found:
        print("FAIL " + p)
    if not found:
        print("PASS %s: serverPath, python, llm.* machine-scoped; untrusted workspaces: off" % os.path.basename(path))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
