# a client that opts in gets hotline/executing naming the running line of the
# program and the library frames under it, each frame with "library" and the
# name to show, the library call and the status text (computed by the server,
# not the editors), then a final {"uri": null}, then hotline/runEnded
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}, "experimental": {"hotlineExecuting": true}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file lib/slowlib.py "import time\ndef spin(seconds):\n    t = time.monotonic()\n    while time.monotonic() - t < seconds:\n        pass\n"
write-file app/prog.py "import os, sys\nsys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), \"..\", \"lib\")))\nimport slowlib\ndef main():\n    slowlib.spin(1.5)\nmain()\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/app/prog.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "hotline/executing", "params": {"uri": "${WORK_URI}/app/prog.py", "line": 4, "thread": "MainThread", "stack": [{"function": "spin", "file": "${WORK}/lib/slowlib.py", "user": false, "library": true, "name": "slowlib.spin"}, {"function": "main", "line": 5, "user": true, "library": false, "name": "prog.main"}, "..."], "call": "slowlib.spin", "text": "re:^▶ [0-9]+\\.[0-9] s on this line · slowlib\\.spin$"}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
<-- {"method": "hotline/executing", "params": {"uri": null}}
<-- {"method": "hotline/runEnded", "params": {"uri": "${WORK_URI}/app/prog.py", "outcome": "done", "reason": "exited 0", "exitStatus": 0, "signal": 0}}
<!- {"method":"textDocument/publishDiagnostics","params":{"diagnostics":[{"code":"running"}]}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
