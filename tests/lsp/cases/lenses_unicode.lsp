# lenses are serialised without jansson (providers/view.c): non-ASCII function names
# and document URIs (percent-encoded) must come back intact, titles well formed
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file é_q.py "import time\nclass Café:\n    def brûle(self):\n        t = time.monotonic()\n        n = 0\n        while time.monotonic() - t < 0.6: n += 1\n        return n\nCafé().brûle()\n"
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/%C3%A9_q.py", "languageId": "python", "version": 1, "text": "import time\nclass Café:\n    def brûle(self):\n        t = time.monotonic()\n        n = 0\n        while time.monotonic() - t < 0.6: n += 1\n        return n\nCafé().brûle()\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/%C3%A9_q.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:_q.py exited 0"}}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/%C3%A9_q.py"}}}
<-- {"id": 3, "result": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "command": {"title": "re:^⏱ 100% (python|· [0-9]+ py( · [0-9]+ (native|waiting))+)( · (\\+[0-9]+ MB kept|[0-9]+ MB alloc))?$", "command": "hotline.showProfile", "arguments": [{"uri": "${WORK_URI}/%C3%A9_q.py", "line": 0, "function": "<module>"}]}}, {"range": {"start": {"line": 2}}, "command": {"title": "re:^⏱ (9[0-9]|100)% (python|· [0-9]+ py( · [0-9]+ (native|waiting))+)( · (\\+[0-9]+ MB kept|[0-9]+ MB alloc))?$", "arguments": [{"uri": "${WORK_URI}/%C3%A9_q.py", "line": 2, "function": "Café.brûle"}]}}, {"range": {"start": {"line": 1}}, "command": {"title": "re:^⏱ (9[0-9]|100)%", "arguments": [{"function": "Café"}]}}]}
--> {"jsonrpc": "2.0", "id": 9, "method": "shutdown"}
<-- {"id": 9, "result": null}
--> {"jsonrpc": "2.0", "method": "exit"}
