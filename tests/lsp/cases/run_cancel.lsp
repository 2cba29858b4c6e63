# one run at a time: a second hotline.run is refused while the first runs;
# cancelling the progress stops the program (no process left), partial profile kept
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file longrun.py "import time\ndef forever():\n    while True:\n        time.sleep(0.01)\nforever()\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/longrun.py"}]}}
<-- {"method": "window/workDoneProgress/create"}
reply {"result":null}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "$/progress", "params": {"value": {"kind": "report", "message": "re:[1-9][0-9]* samples"}}}
--> {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/longrun.py"}]}}
<-- {"id": 3, "error": {"code": -32803, "message": "re:already running"}}
--> {"jsonrpc": "2.0", "method": "window/workDoneProgress/cancel", "params": {"token": "hotline-run-1"}}
<-- {"method": "window/showMessage", "params": {"type": 3, "message": "re:longrun.py stopped"}}
<-- {"method": "$/progress", "params": {"value": {"kind": "end", "message": "stopped"}}}
no-process ${WORK}/longrun.py
--> {"jsonrpc": "2.0", "id": 4, "method": "hotline/debug/state", "params": {}}
--> {"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "hotline.showProfile", "arguments": [{"show": false}]}}
<-- {"id": 4, "result": {"text": "re:(?s)stopped.*forever"}}
--> {"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/longrun.py"}]}}
<-- {"id": 5, "result": {"started": true}}
--> {"jsonrpc": "2.0", "id": 6, "method": "workspace/executeCommand", "params": {"command": "hotline.stop"}}
<-- {"id": 6, "result": {"stopped": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:longrun.py stopped"}}
no-process ${WORK}/longrun.py
# restart: true stops the running program and starts the new run after it
--> {"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/longrun.py"}]}}
<-- {"id": 7, "result": {"started": true}}
--> {"jsonrpc": "2.0", "id": 8, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/longrun.py", "restart": true}]}}
<-- {"id": 8, "result": {"started": false, "restarting": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:longrun.py stopped"}}
<-- {"method": "window/workDoneProgress/create", "params": {"token": "hotline-run-4"}}
--> {"jsonrpc": "2.0", "id": 9, "method": "hotline/debug/state", "params": {}}
<-- {"id": 9, "result": {"run": {"running": true}}}
--> {"jsonrpc": "2.0", "id": 10, "method": "workspace/executeCommand", "params": {"command": "hotline.stop"}}
<-- {"id": 10, "result": {"stopped": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:longrun.py stopped"}}
no-process ${WORK}/longrun.py
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
