# executeCommand path (client without codeAction resolve), OpenAI dialect:
# the action is offered on the hot line (not on a cold one, not when only
# quickfixes are asked for), nothing is sent before it is picked, the request
# carries the model, the region (the innermost loop around the hot line), the
# profile numbers of its lines and the key only in its header; the answer
# comes back as workspace/applyEdit replacing exactly the loop, re-indented;
# the explanation is shown; the edit is an ordinary text edit (applied and
# undone through didChange); the lens over the new code offers Verify.
write-file prog.py "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 191, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}, \"dropped\": 0, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"6\": {\"python_s\": 0.3, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.3, \"samples\": 30}, \"7\": {\"python_s\": 1.5, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.6, \"samples\": 160}, \"10\": {\"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}}, \"functions\": [{\"name\": \"work\", \"first_line\": 4, \"last_line\": 8, \"python_s\": 1.8, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9000000000000001, \"samples\": 190}, {\"name\": \"<module>\", \"first_line\": 1, \"last_line\": 10, \"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}], \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"applyEdit": true, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"llm": {"base_url": "${LLM_URL}/v1", "model": "test-model", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id":1,"result":{"capabilities":{"codeActionProvider":{"codeActionKinds":["refactor.rewrite.hotline.optimize"],"resolveProvider":true}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
# the saved profile loads off the event loop: wait until it is in
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 3}}, "context": {"diagnostics": []}}}
<-- {"id": 2, "result": []}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}, "context": {"diagnostics": [], "only": ["quickfix"]}}}
<-- {"id": 3, "result": []}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}, "context": {"diagnostics": []}}}
<-- {"id": 4, "result": [{"title": "re:^Hotline: Optimize this \\(sends the code to 127\\.0\\.0\\.1:[0-9]+\\)$", "kind": "refactor.rewrite.hotline.optimize", "command": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6}}}]}}]}
--> {"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"method": "window/workDoneProgress/create", "params": {"token": "hotline-optimize-1"}}
reply {"result": null}
<-- {"method": "$/progress", "params": {"token": "hotline-optimize-1", "value": {"kind": "begin", "title": "re:^Hotline: optimizing with 127\\.0\\.0\\.1:", "cancellable": true}}}
<-- {"method": "workspace/applyEdit", "params": {"label": "re:Hotline", "edit": {"documentChanges": [{"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 1}, "edits": [{"range": {"start": {"line": 5, "character": 0}, "end": {"line": 7, "character": 0}}, "newText": "    total += sum(i * i for i in range(n))\n"}]}]}}}
reply {"result": {"applied": true}}
<-- {"id": 5, "result": {"applied": true, "explanation": "re:^Use sum over a generator: .*loop overhead\\.$"}}
<-- {"method": "window/showMessage", "params": {"type": 3, "message": "re:rewrote lines 6-7 \\(undo to revert\\)"}}
<-- {"method": "workspace/codeLens/refresh"}
# the editor applies the edit, then the user undoes it
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 2}, "contentChanges": [{"range": {"start": {"line": 5, "character": 0}, "end": {"line": 7, "character": 0}}, "text": "    total += sum(i * i for i in range(n))\n"}]}}
--> {"jsonrpc": "2.0", "id": 6, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 6, "result": [{"range": {"start": {"line": 5}}, "command": {"title": "Hotline: Verify \u2014 re-run to compare (was 1.90 s)", "command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}, "..."]}
--> {"jsonrpc": "2.0", "id": 7, "method": "hotline/debug/state", "params": {"uri": "${WORK_URI}/prog.py"}}
<-- {"id": 7, "result": {"document": {"text": "re:^import time\\nimport json\\n\\ndef work\\(n\\):\\n    total = 0\\n    total \\+= sum\\(i \\* i for i in range\\(n\\)\\)\\n    return total\\n"}, "optimize": {"inflight": 0, "done": 1}}}
--> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 3}, "contentChanges": [{"range": {"start": {"line": 5, "character": 0}, "end": {"line": 6, "character": 0}}, "text": "    for i in range(n):\n        total += i * i\n"}]}}
--> {"jsonrpc": "2.0", "id": 8, "method": "hotline/debug/state", "params": {"uri": "${WORK_URI}/prog.py"}}
<-- {"id": 8, "result": {"document": {"text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}}}
--> {"jsonrpc": "2.0", "id": 9, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 9}
<!- {"id": 9, "result": [{"command": {"title": "re:Verify"}}, "..."]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"content": "Use sum over a generator:\n\n```python\ntotal += sum(i * i for i in range(n))\n```\n\nThis removes the per-iteration loop overhead."}]
llm-requests 1
llm-expect {"path": "/v1/chat/completions", "headers": {"authorization": "Bearer ${KEY}", "content-type": "application/json"}, "body": {"model": "test-model", "messages": [{"role": "system", "content": "re:behaviour identical"}, {"role": "user", "content": "re:(?s)Environment: Python ${PY_VERSION}\\. Library versions: none known\\..*import time\\nimport json\\n.*def work\\(n\\):\\n    total = 0\\n```.*region to rewrite:\\n```python\\n    for i in range\\(n\\):\\n        total \\+= i \\* i\\n```.*region 1\\.900 s of a 1\\.910 s profile \\(99\\.5%\\), 190 samples.*\\| 6 \\| 15\\.7 \\| 0\\.300 \\| 0\\.000 \\| 0\\.000 \\| for i in range\\(n\\): \\|\\n\\| 7 \\| 83\\.8 \\| 1\\.500 \\| 0\\.100 \\| 0\\.000 \\| total \\+= i \\* i \\|\\n.*exactly ONE"}]}}
