# a crashing program: the server says what happened (exit status and the
# exception), keeps the partial profile, and keeps answering
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file crash.py "import time\ndef boom():\n    t = time.monotonic()\n    while time.monotonic() - t < 0.5: pass\n    raise RuntimeError(\"kaboom from the test\")\nboom()\n"
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/crash.py", "languageId": "python", "version": 1, "text": "import time\ndef boom():\n    t = time.monotonic()\n    while time.monotonic() - t < 0.5: pass\n    raise RuntimeError(\"kaboom from the test\")\nboom()\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/crash.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"type": 2, "message": "re:crash.py exited 1"}}
<-- {"method": "window/showMessage", "params": {"type": 2, "message": "re:RuntimeError: kaboom from the test"}}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/crash.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 3, "result": [{"position": {"line": 3}}]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
