# Closing the loop: run, optimize the hot loop, save, re-run; the lens over the
# new code first offers Verify (hotline.run on the program), then shows before
# and after from the two profiles' comparison (the region's rows against the
# new code's, each with the kind its time was mostly: issue 25). Real runs
# (the real agent).
write-file prog.py "import time\n\ndef spin(seconds):\n    t = time.monotonic()\n    while time.monotonic() - t < seconds:\n        pass\n\nspin(1.0)\n"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"applyEdit": true}}, "initializationOptions": {"llm": {"base_url": "${LLM_URL}/v1", "model": "m", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\n\ndef spin(seconds):\n    t = time.monotonic()\n    while time.monotonic() - t < seconds:\n        pass\n\nspin(1.0)\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"type": 3, "message": "re:prog.py exited 0"}}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 4, "character": 6}, "end": {"line": 4, "character": 6}}, "context": {"diagnostics": []}}}
<-- {"id": 3, "result": [{"kind": "refactor.rewrite.hotline.optimize", "command": {"command": "hotline.optimize"}}]}
--> {"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 4, "character": 6}, "end": {"line": 4, "character": 6}}}]}}
<-- {"method": "workspace/applyEdit", "params": {"edit": {"documentChanges": [{"edits": [{"range": {"start": {"line": 4, "character": 0}, "end": {"line": 6, "character": 0}}, "newText": "    while time.monotonic() - t < seconds / 4:\n        pass\n"}]}]}}}
reply {"result": {"applied": true}}
<-- {"id": 4, "result": {"applied": true}}
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 2}, "contentChanges": [{"range": {"start": {"line": 4, "character": 0}, "end": {"line": 6, "character": 0}}, "text": "    while time.monotonic() - t < seconds / 4:\n        pass\n"}]}}
write-file prog.py "import time\n\ndef spin(seconds):\n    t = time.monotonic()\n    while time.monotonic() - t < seconds / 4:\n        pass\n\nspin(1.0)\n"
--> {"jsonrpc": "2.0", "id": 5, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 5, "result": [{"range": {"start": {"line": 4}}, "command": {"title": "re:^Hotline: Verify \u2014 re-run to compare \\(was [0-9.]+ s\\)$", "command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}, "..."]}
--> {"jsonrpc": "2.0", "id": 6, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 6, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"type": 3, "message": "re:prog.py exited 0"}}
--> {"jsonrpc": "2.0", "id": 7, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 7, "result": [{"range": {"start": {"line": 4}}, "command": {"title": "re:^Hotline: was [0-9.]+ s \\(python [0-9.]+\\) \u2192 now [0-9.]+ s \\(python [0-9.]+\\), [2-9]\\.[0-9]\u00d7 faster$", "command": "hotline.run"}}, "..."]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"content": "Stop earlier:\n```python\nwhile time.monotonic() - t < seconds / 4:\n    pass\n```"}]
llm-requests 1
llm-expect {"body": {"messages": [{"role": "system"}, {"role": "user", "content": "re:(?s)\\| 5 \\| [0-9.]+ \\| [0-9.]+ \\|.*while time"}]}}
