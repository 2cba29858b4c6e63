# a program that forks children and floods its output (20 MB): the server keeps
# answering, reports the exit status with the last line of output, and no
# process is left
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file flood.py "import os, sys, time\nfor i in range(20):\n    if os.fork() == 0:\n        time.sleep(0.2)\n        os._exit(0)\nchunk = \"x\" * 1023 + \"\\n\"\nfor _ in range(20000):\n    sys.stdout.write(chunk)\nsys.stdout.flush()\nt = time.monotonic()\nwhile time.monotonic() - t < 0.5: pass\nfor _ in range(20):\n    os.wait()\nprint(\"the end\", file=sys.stderr)\nsys.exit(3)\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/flood.py"}]}}
<-- {"id": 2, "result": {"started": true}}
--> {"jsonrpc": "2.0", "id": 3, "method": "hotline/debug/state", "params": {}}
<-- {"id": 3, "result": {"run": {}}}
<-- {"method": "window/showMessage", "params": {"type": 2, "message": "re:flood.py exited 3"}}
<-- {"method": "window/showMessage", "params": {"type": 2, "message": "re:flood.py: the end$"}}
--> {"jsonrpc": "2.0", "id": 4, "method": "hotline/debug/state", "params": {}}
<-- {"id": 4, "result": {"profile": true}}
no-process ${WORK}/flood.py
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
