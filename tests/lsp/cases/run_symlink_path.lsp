# a program run through a symlinked folder is profiled under that path; the
# file opened by its real path (or the other way round) gets its hints and
# lenses all the same: paths are compared by their real path
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file real/prog.py "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 0.6: n += 1\n    return n\nhot()\n"
symlink link real
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/link/prog.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/real/prog.py", "languageId": "python", "version": 1, "text": "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 0.6: n += 1\n    return n\nhot()\n"}}}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/real/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 3, "result": [{"position": {"line": 4}}, "..."]}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/real/prog.py"}}}
<-- {"id": 4, "result": [{"command": {"title": "re:^⏱"}}, "..."]}
# an edit above the hot line: the hint follows it
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/real/prog.py", "version": 2}, "contentChanges": [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "# note\n"}]}}
--> {"jsonrpc": "2.0", "id": 5, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/real/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 5, "result": [{"position": {"line": 5}}, "..."]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
