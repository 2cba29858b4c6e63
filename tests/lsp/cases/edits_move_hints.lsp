# edits move hints with their lines and drop them where the text changed;
# hint columns are UTF-16 ends of lines with non-ASCII text before them
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file prog.py "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 1.0: n += 1  # é😀 hot\n    return n\nhot()\n"
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\ndef hot():\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < 1.0: n += 1  # é😀 hot\n    return n\nhot()\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 3, "result": [{"position": {"line": 4, "character": 55}}]}
# two lines inserted above: the hint moves down by two
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 2}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# a\n# b\n"}]}}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 4, "result": [{"position": {"line": 6, "character": 55}, "data": {"line": 5}}]}
# one of them deleted again
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 3}, "contentChanges": [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}, "text": ""}]}}
--> {"jsonrpc": "2.0", "id": 5, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 5, "result": [{"position": {"line": 5, "character": 55}}]}
--> {"jsonrpc": "2.0", "id": 6, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 6, "result": [{"range": {"start": {"line": 0}}}, {"range": {"start": {"line": 2}}, "command": {"arguments": [{"function": "hot"}]}}]}
--> {"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "position": {"line": 5, "character": 3}}}
<-- {"id": 7, "result": {"contents": {"value": "re:line 5"}}}
# typing inside the def line drops its lens, the hint stays
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 4}, "contentChanges": [{"range": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 4}}, "text": "x"}]}}
--> {"jsonrpc": "2.0", "id": 8, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 8, "result": [{"range": {"start": {"line": 0}}}]}
--> {"jsonrpc": "2.0", "id": 9, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 9, "result": [{"position": {"line": 5}}]}
# editing inside the hot line drops the hint; putting the text back does not
# bring it back on a line we can no longer vouch for
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 5}, "contentChanges": [{"range": {"start": {"line": 5, "character": 10}, "end": {"line": 5, "character": 10}}, "text": "y"}]}}
--> {"jsonrpc": "2.0", "id": 10, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 10, "result": []}
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 6}, "contentChanges": [{"range": {"start": {"line": 5, "character": 10}, "end": {"line": 5, "character": 11}}, "text": ""}]}}
--> {"jsonrpc": "2.0", "id": 11, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 11, "result": []}
--> {"jsonrpc": "2.0", "id": 12, "method": "textDocument/hover", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "position": {"line": 5, "character": 3}}}
<-- {"id": 12, "result": null}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
