# a run through a symlinked folder while the editor shows the file by its
# real path: the live line (the Information diagnostic of a client that did
# not opt in to hotline/executing) goes to the URI the editor has open
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file real/prog.py "import time\ndef spin(seconds):\n    t = time.monotonic()\n    while time.monotonic() - t < seconds:\n        pass\nspin(1.5)\n"
symlink link real
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/real/prog.py", "languageId": "python", "version": 1, "text": "import time\ndef spin(seconds):\n    t = time.monotonic()\n    while time.monotonic() - t < seconds:\n        pass\nspin(1.5)\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/link/prog.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/real/prog.py", "diagnostics": [{"severity": 3, "code": "running"}]}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/real/prog.py", "diagnostics": []}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
