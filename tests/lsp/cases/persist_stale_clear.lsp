# the last profile is saved under <root>/.hotline and shown again after a
# restart; a file changed on disk gets a stale lens; hotline.clear forgets it
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}, "diagnostics": {"hotLines": 1}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file prog.py "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 1.0: n += 1\n    return n\nhot()\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/prog.py", "diagnostics": [{"range": {"start": {"line": 4}}, "severity": 3, "code": "hot-line", "source": "hotline", "message": "re:hot line #1: (9[0-9]|100)\\.[0-9]% of the run"}]}}
wait-file .hotline/profile.json
wait-file .hotline/sources.json
--> {"jsonrpc":"2.0","id":3,"method":"shutdown"}
<-- {"id":3,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
restart
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}, "diagnostics": {"hotLines": 1}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/prog.py", "diagnostics": [{"range": {"start": {"line": 4}}, "code": "hot-line"}]}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 1.0: n += 1\n    return n\nhot()\n"}}}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 4, "result": [{"position": {"line": 4}, "label": "re:^.(9[0-9]|100)% (python|· [0-9]+ py( · [0-9]+ (native|waiting))+)( · (\\+[0-9]+ MB kept|[0-9]+ MB alloc))?$"}]}
--> {"jsonrpc": "2.0", "id": 5, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 5, "result": [{"command": {"title": "re:^⏱ 100%"}}, {"range": {"start": {"line": 1}}}]}
# the file changes on disk (the open document still shows the profiled text)
write-file prog.py "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 1.0: n += 1\n    return n\nhot()\nprint('changed')\n"
--> {"jsonrpc": "2.0", "id": 6, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 6, "result": [{"range": {"start": {"line": 0}}, "command": {"title": "re:profile is stale"}}, {"command": {"title": "re:^⏱ 100%"}}, {"range": {"start": {"line": 1}}}]}
--> {"jsonrpc": "2.0", "id": 7, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 7, "result": [{"position": {"line": 4}}]}
--> {"jsonrpc": "2.0", "id": 8, "method": "workspace/executeCommand", "params": {"command": "hotline.clear"}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/prog.py", "diagnostics": []}}
<-- {"id": 8, "result": {"cleared": true}}
--> {"jsonrpc": "2.0", "id": 9, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 9, "result": []}
--> {"jsonrpc": "2.0", "id": 10, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 10, "result": []}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
restart
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 1.0: n += 1\n    return n\nhot()\n"}}}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 4, "result": []}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
