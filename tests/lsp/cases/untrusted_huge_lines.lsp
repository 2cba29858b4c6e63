# a saved profile naming line 1,000,000 (as big as a source file can have)
# in several files used to allocate an array of a million lines per file
# (over 100 MB each) while initialize waited. Lines are stored sparsely and
# loaded off the event loop: initialize answers, the memory stays small, the
# profile is usable; a line past the cap is dropped, not an error.
write-file prog.py "import time\nx = sum(range(10))\n"
write-file .hotline/profile.json "{\"version\":1,\"program\":\"${WORK}/prog.py\",\"files\":{\"${WORK}/prog.py\":{\"lines\":{\"2\":{\"python_s\":10.0,\"samples\":1000},\"1000000\":{\"python_s\":0.1,\"samples\":10},\"1000001\":{\"python_s\":0.1,\"samples\":10}},\"functions\":[]},\"/w/f0.py\":{\"lines\":{\"1000000\":{\"python_s\":0.01,\"samples\":1}}},\"/w/f1.py\":{\"lines\":{\"1000000\":{\"python_s\":0.01,\"samples\":1}}},\"/w/f2.py\":{\"lines\":{\"1000000\":{\"python_s\":0.01,\"samples\":1}}},\"/w/f3.py\":{\"lines\":{\"1000000\":{\"python_s\":0.01,\"samples\":1}}},\"/w/f4.py\":{\"lines\":{\"1000000\":{\"python_s\":0.01,\"samples\":1}}},\"/w/f5.py\":{\"lines\":{\"1000000\":{\"python_s\":0.01,\"samples\":1}}}}}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"inlayHint": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"type": 3, "message": "re:loaded the last profile"}}
max-rss 200
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\nx = sum(range(10))\n"}}}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 4, "result": [{"position": {"line": 1}}]}
--> {"jsonrpc": "2.0", "id": 5, "method": "hotline/debug/state", "params": {}}
<-- {"id": 5, "result": {"profile": true, "samples": 0}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
