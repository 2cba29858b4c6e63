# the editor kills the server (SIGKILL) during a run: the program does not
# outlive it; an exit during a run stops the program too
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file longrun.py "import time\ndef forever():\n    while True:\n        time.sleep(0.01)\nforever()\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/longrun.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"diagnostics": [{"code": "running"}]}}
kill-server
no-process ${WORK}/longrun.py
restart
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/longrun.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"diagnostics": [{"code": "running"}]}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
no-process ${WORK}/longrun.py
