# "params": null is the same as no params (several clients send it): it is
# accepted on requests and notifications, `initialized` with null still
# republishes the reloaded profile, and `exit` with null (or with params
# that are plainly wrong) exits
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}, "initializationOptions": {"diagnostics": {"hotLines": 1}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":null}
<-- {"method": "window/logMessage", "params": {"message": "re:ready"}}
--> {"jsonrpc":"2.0","id":2,"method":"hotline/debug/state","params":null}
<-- {"id":2,"result":{"documents":0}}
write-file prog.py "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 0.5: n += 1\n    return n\nhot()\n"
--> {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 3, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
wait-file .hotline/profile.json
--> {"jsonrpc":"2.0","id":4,"method":"shutdown","params":null}
<-- {"id":4,"result":null}
--> {"jsonrpc":"2.0","method":"exit","params":null}
exit 0
restart
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}, "initializationOptions": {"diagnostics": {"hotLines": 1}}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"initialized","params":null}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/prog.py", "diagnostics": [{"range": {"start": {"line": 4}}, "code": "hot-line"}]}}
--> {"jsonrpc":"2.0","id":2,"method":"shutdown"}
<-- {"id":2,"result":null}
--> {"jsonrpc":"2.0","method":"exit","params":5}
exit 0
<!- {"error": {"code": -32600}}
