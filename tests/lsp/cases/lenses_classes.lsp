# lenses over a class (sum of its methods) and its method; the method's hint
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file cls.py "import time\nclass Worker:\n    n = 0\n    def spin(self):\n        t = time.monotonic()\n        while time.monotonic() - t < 0.6: self.n += 1\ndef main():\n    Worker().spin()\nmain()\n"
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/cls.py", "languageId": "python", "version": 1, "text": "import time\nclass Worker:\n    n = 0\n    def spin(self):\n        t = time.monotonic()\n        while time.monotonic() - t < 0.6: self.n += 1\ndef main():\n    Worker().spin()\nmain()\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/cls.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:cls.py exited 0"}}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/cls.py"}}}
<-- {"id": 3, "result": [{"range": {"start": {"line": 0}}, "command": {"arguments": [{"function": "<module>"}]}}, {"range": {"start": {"line": 3}}, "command": {"title": "re:^⏱ (9[0-9]|100)% (python|· [0-9]+ py( · [0-9]+ (native|waiting))+)( · (\\+[0-9]+ MB kept|[0-9]+ MB alloc))?$", "arguments": [{"function": "Worker.spin"}]}}, {"range": {"start": {"line": 1}}, "command": {"title": "re:^⏱ (9[0-9]|100)% (python|· [0-9]+ py( · [0-9]+ (native|waiting))+)( · (\\+[0-9]+ MB kept|[0-9]+ MB alloc))?$", "arguments": [{"function": "Worker"}]}}]}
# a line inserted above the class moves both lenses
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/cls.py", "version": 2}, "contentChanges": [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "# comment\n"}]}}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/cls.py"}}}
<-- {"id": 4, "result": [{"range": {"start": {"line": 0}}}, {"range": {"start": {"line": 4}}}, {"range": {"start": {"line": 2}}}]}
--> {"jsonrpc": "2.0", "id": 5, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/cls.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 5, "result": [{"position": {"line": 6}}]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
