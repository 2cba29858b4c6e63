"""What a browser does to make `marimo edit --headless --no-token` run a
notebook, for tests/lsp/test_marimo.py (run with the marimo venv's Python,
which has `websockets`): open a session's websocket, then POST
/api/kernel/instantiate with the server token the page carries (marimo's
skew protection). Keeps the session open until stdin closes.

Usage: python marimo_session.py PORT [FILE]   (FILE: a notebook of the
folder `marimo edit` serves, relative to it)"""
import asyncio
import json
import re
import sys
import urllib.parse
import urllib.request

import websockets


async def main(port, file):
    base = "127.0.0.1:%d" % port
    query = "session_id=s-hotline" + ("&file=" + urllib.parse.quote(file) if file else "")
    async with websockets.connect("ws://%s/ws?%s" % (base, query)) as ws:
        await asyncio.wait_for(ws.recv(), 30)  # the kernel is ready
        page = urllib.request.urlopen("http://%s/%s" % (base, "?file=" + urllib.parse.quote(
            file) if file else ""), timeout=10).read().decode()
        token = re.search(r'serverToken"?\s*[:=]\s*"([^"]+)"', page)
        assert token, "no server token in marimo's page"
        req = urllib.request.Request(
            "http://%s/api/kernel/instantiate" % base,
            data=json.dumps({"objectIds": [], "values": [], "autoRun": True}).encode(),
            headers={"Content-Type": "application/json", "Marimo-Session-Id": "s-hotline",
                     "Marimo-Server-Token": token.group(1)})
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(req, timeout=30).read())
        print("instantiate:", body.decode(), flush=True)
        done = asyncio.ensure_future(asyncio.to_thread(sys.stdin.read))
        while not done.done():
            try:
                await asyncio.wait_for(ws.recv(), 0.5)
            except asyncio.TimeoutError:
                pass


asyncio.run(main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
