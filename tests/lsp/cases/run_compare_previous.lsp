# compareWithPrevious (issue 25): run, make the hot loop shorter and insert
# lines above it (so its line moves), run again. The hint on the moved hot
# line and hot()'s lens then say how much time went since the run before,
# paired through hot()'s move; the setting off, they say nothing of it.
# Columns are UTF-16: the hot line ends in "é😀" (52 code points, 53 units).
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"inlayHint": {"refreshSupport": true}, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}, "persist": false}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file prog.py "import time\ndef hot(s):\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < s: n += 1  # é😀 hot\n    return n\nhot(1.2)\n"
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\ndef hot(s):\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < s: n += 1  # é😀 hot\n    return n\nhot(1.2)\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
# the first run has nothing before it: no change, even with the setting on
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"compareWithPrevious": true}}}}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 3, "result": [{"position": {"line": 4, "character": 53}, "label": "re:^[^▲▼]*(python|waiting|native|alloc|kept)$"}]}
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"compareWithPrevious": false}}}}
# two lines above hot() (the hot line moves from 5 to 7), a fifth of the loop
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 2}, "contentChanges": [{"text": "import time\n# the loop, shorter — ça va\n\ndef hot(s):\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < s: n += 1  # é😀 hot\n    return n\nhot(0.24)\n"}]}}
write-file prog.py "import time\n# the loop, shorter — ça va\n\ndef hot(s):\n    t = time.monotonic()\n    n = 0\n    while time.monotonic() - t < s: n += 1  # é😀 hot\n    return n\nhot(0.24)\n"
--> {"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 4, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
# setting off (the default): the hint and the lens as ever
--> {"jsonrpc": "2.0", "id": 5, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 5, "result": [{"position": {"line": 6, "character": 53}, "label": "re:^[^▲▼]*(python|waiting|native|alloc|kept)$", "tooltip": {"value": "re:^(?![\\s\\S]*Previous run)"}}]}
--> {"jsonrpc": "2.0", "id": 6, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 6, "result": [{"range": {"start": {"line": 0}}}, {"range": {"start": {"line": 3}}, "command": {"title": "re:^⏱ [^▲▼]*$", "arguments": [{"function": "hot", "line": 3}]}}]}
# setting on: about a second less on the moved line, and in hot(); its
# allocations (the loop's ints) went down with it (3.14+ reuse freed ints
# from a freelist: no MB there, so the memory part is asked only when shown;
# the normal pass's 3.11 shows it)
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"compareWithPrevious": true}}}}
--> {"jsonrpc": "2.0", "id": 7, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 7, "result": [{"position": {"line": 6, "character": 53}, "label": "re:^.[0-9]+% [^▲▼]+ ▼(0\\.[6-9]|1\\.[01])[0-9] s( · [0-9]+ MB alloc ▼[0-9]+ MB)?$", "tooltip": {"value": "re:Previous run:\\*\\* 1\\.[0-9]+ s \\(line 5\\), now 0\\.[0-9]+ s \\(-"}, "data": {"line": 7}}]}
--> {"jsonrpc": "2.0", "id": 8, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 8, "result": [{"range": {"start": {"line": 0}}, "command": {"title": "re:^⏱ [^▲▼]*$"}}, {"range": {"start": {"line": 3}}, "command": {"title": "re:^⏱ [0-9]+% [^▲▼]+ ▼(0\\.[6-9]|1\\.[01])[0-9] s( · .*)?$", "arguments": [{"function": "hot", "line": 3}]}}]}
# hotline.clear: the run before goes too; a third run has nothing to compare
--> {"jsonrpc": "2.0", "id": 9, "method": "workspace/executeCommand", "params": {"command": "hotline.clear", "arguments": []}}
<-- {"id": 9, "result": {"cleared": true}}
--> {"jsonrpc": "2.0", "id": 10, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 10, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
--> {"jsonrpc": "2.0", "id": 11, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 11, "result": [{"position": {"line": 6, "character": 53}, "label": "re:^[^▲▼]*(python|waiting|native|alloc|kept)$"}]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
