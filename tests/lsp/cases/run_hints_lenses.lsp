# hotline.run from the editor: progress begins and ends, then one hint sits at
# the end of the hot loop line, lenses over the module and hot(), hover, showProfile
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file prog.py "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 1.0: n += 1\n    return n\nhot()\n"
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 1.0: n += 1\n    return n\nhot()\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"method": "window/workDoneProgress/create", "params": {"token": "hotline-run-1"}}
reply {"result":null}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "$/progress", "params": {"token": "hotline-run-1", "value": {"kind": "begin", "cancellable": true}}}
<-- {"method": "$/progress", "params": {"token": "hotline-run-1", "value": {"kind": "report", "message": "re:samples"}}}
<-- {"method": "window/showMessage", "params": {"type": 3, "message": "re:prog.py exited 0"}}
<-- {"method": "$/progress", "params": {"token": "hotline-run-1", "value": {"kind": "end"}}}
<-- {"method": "workspace/inlayHint/refresh"}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 3, "result": [{"position": {"line": 4, "character": 44}, "label": "re:^.(9[0-9]|100)% (python|· [0-9]+ py( · [0-9]+ (native|waiting))+)( · (\\+[0-9]+ MB kept|[0-9]+ MB alloc))?$", "tooltip": {"kind": "markdown", "value": "re:python"}}]}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 4, "result": [{"range": {"start": {"line": 0}}, "command": {"title": "re:^⏱ 100% (python|· [0-9]+ py( · [0-9]+ (native|waiting))+)( · (\\+[0-9]+ MB kept|[0-9]+ MB alloc))?$", "command": "hotline.showProfile"}}, {"range": {"start": {"line": 1}}, "command": {"title": "re:^⏱ (9[0-9]|100)% (python|· [0-9]+ py( · [0-9]+ (native|waiting))+)( · (\\+[0-9]+ MB kept|[0-9]+ MB alloc))?$", "arguments": [{"function": "hot", "line": 1}]}}]}
--> {"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "position": {"line": 4, "character": 3}}}
<-- {"id": 5, "result": {"contents": {"kind": "markdown", "value": "re:(?s)line 5.*python.*Who calls this line.*█{10} 100%  <module> \\(prog.py:7\\).*Call stacks.*hot \\(prog.py:5\\)"}}}
--> {"jsonrpc": "2.0", "id": 6, "method": "textDocument/hover", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "position": {"line": 0, "character": 3}}}
<-- {"id": 6, "result": null}
--> {"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand", "params": {"command": "hotline.showProfile", "arguments": [{"show": false}]}}
<-- {"id": 7, "result": {"text": "re:(?s)exited 0.*Top functions.*hot"}}
wait-file .hotline/profile.json
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
