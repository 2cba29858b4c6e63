# a client that declares experimental.hotlineRunEnded (and not
# hotlineExecuting) gets hotline/runEnded at the end of every run, after the
# run's final refresh, with the run's outcome: "failed" for a non-zero exit,
# "stopped" for hotline.stop; it gets no hotline/executing
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"codeLens": {"refreshSupport": true}}, "experimental": {"hotlineRunEnded": true}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file fails.py "import sys, time\nt = time.monotonic()\nwhile time.monotonic() - t < 0.3:\n    pass\nsys.exit(3)\n"
write-file longrun.py "import time\ndef forever():\n    while True:\n        time.sleep(0.01)\nforever()\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/fails.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"type": 2, "message": "re:fails.py exited 3"}}
<-- {"method": "workspace/codeLens/refresh"}
<-- {"method": "hotline/runEnded", "params": {"uri": "${WORK_URI}/fails.py", "outcome": "failed", "reason": "exited 3", "exitStatus": 3, "signal": 0}}
--> {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/longrun.py"}]}}
<-- {"id": 3, "result": {"started": true}}
--> {"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "hotline.stop"}}
<-- {"id": 4, "result": {"stopped": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:longrun.py stopped"}}
<-- {"method": "hotline/runEnded", "params": {"uri": "${WORK_URI}/longrun.py", "outcome": "stopped", "reason": "stopped"}}
no-process ${WORK}/longrun.py
<!- {"method":"hotline/executing"}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
