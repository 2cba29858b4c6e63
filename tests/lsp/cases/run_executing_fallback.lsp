# a client that did not opt in never gets hotline/executing nor
# hotline/runEnded; it sees the live line as an Information diagnostic naming
# the library call as the notification does, cleared when the run ends
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file lib/slowlib.py "import time\ndef spin(seconds):\n    t = time.monotonic()\n    while time.monotonic() - t < seconds:\n        pass\n"
write-file app/prog.py "import os, sys\nsys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), \"..\", \"lib\")))\nimport slowlib\ndef main():\n    slowlib.spin(1.5)\nmain()\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/app/prog.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/app/prog.py", "diagnostics": [{"range": {"start": {"line": 4}}, "severity": 3, "source": "hotline", "code": "running", "message": "re:^▶ running for [0-9.]+ s — in slowlib\\.spin$"}]}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/app/prog.py", "diagnostics": []}}
<!- {"method":"hotline/executing"}
<!- {"method":"hotline/runEnded"}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
