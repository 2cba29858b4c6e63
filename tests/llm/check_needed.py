#!/usr/bin/env python3
"""The hotline binary links no libcurl: its dynamic section (readelf -d)
names no libcurl*, and ldd resolves none (so none of curl's 30 libraries:
OpenSSL, GnuTLS, nghttp2, Kerberos, LDAP ...). libcurl is loaded only when
"Optimize this" is used (server/llm/curl_dl.c).

usage: check_needed.py HOTLINE"""
import subprocess
import sys


def main():
    exe = sys.argv[1]
    d = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True, timeout=30)
    if d.returncode:
        print("FAIL: readelf -d %s: %s" % (exe, d.stderr))
        return 1
    needed = [l.split("[", 1)[1].rstrip("]") for l in d.stdout.splitlines() if "(NEEDED)" in l]
    print("NEEDED:", " ".join(needed))
    if not needed:
        print("FAIL: no NEEDED entries read (is this a dynamic executable?)")
        return 1
    bad = [n for n in needed if "curl" in n]
    if bad:
        print("FAIL: links %s" % bad)
        return 1
    l = subprocess.run(["ldd", exe], capture_output=True, text=True, timeout=30)
    resolved = [x.split()[0] for x in l.stdout.splitlines() if x.strip()]
    print("ldd: %d libraries" % len(resolved))
    for name in ("libcurl", "libssl", "libgnutls", "libnghttp2", "libldap", "libgssapi"):
        if any(r.startswith(name) for r in resolved):
            print("FAIL: %s is loaded at start" % name)
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
