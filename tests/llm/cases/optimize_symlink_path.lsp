# "Optimize this" on a file that the profile names by a symlinked path (a
# run through a symlinked folder) while the editor opened it by its real
# path: the action is offered on the hot line and the request carries the
# profile numbers of the region, as for a file opened under the profile's
# own name (providers/optimize.c finds the file as the hints do, lsp_pview_file).
write-file real/prog.py "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"
symlink link real
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/link/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 191, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}, \"dropped\": 0, \"files\": {\"${WORK}/link/prog.py\": {\"lines\": {\"6\": {\"python_s\": 0.3, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.3, \"samples\": 30}, \"7\": {\"python_s\": 1.5, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.6, \"samples\": 160}, \"10\": {\"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}}, \"functions\": [{\"name\": \"work\", \"first_line\": 4, \"last_line\": 8, \"python_s\": 1.8, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9000000000000001, \"samples\": 190}, {\"name\": \"<module>\", \"first_line\": 1, \"last_line\": 10, \"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}], \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"applyEdit": true, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"llm": {"base_url": "${LLM_URL}/v1", "model": "test-model", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id":1,"result":{"capabilities":{"codeActionProvider":{"codeActionKinds":["refactor.rewrite.hotline.optimize"],"resolveProvider":true}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/real/prog.py", "languageId": "python", "version": 1, "text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}}}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/real/prog.py"}, "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}, "context": {"diagnostics": []}}}
<-- {"id": 4, "result": [{"title": "re:^Hotline: Optimize this", "kind": "refactor.rewrite.hotline.optimize", "command": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/real/prog.py", "range": {"start": {"line": 6}}}]}}]}
--> {"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/real/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"method": "workspace/applyEdit", "params": {"edit": {"documentChanges": [{"textDocument": {"uri": "${WORK_URI}/real/prog.py", "version": 1}, "edits": [{"range": {"start": {"line": 5, "character": 0}, "end": {"line": 7, "character": 0}}, "newText": "    total += sum(i * i for i in range(n))\n"}]}]}}}
reply {"result": {"applied": true}}
<-- {"id": 5, "result": {"applied": true}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"content": "Use sum over a generator:\n\n```python\ntotal += sum(i * i for i in range(n))\n```\n\nThis removes the per-iteration loop overhead."}]
llm-requests 1
llm-expect {"path": "/v1/chat/completions", "body": {"messages": [{"role": "system"}, {"role": "user", "content": "re:(?s)region 1\\.900 s of a 1\\.910 s profile \\(99\\.5%\\), 190 samples.*\\| 6 \\| 15\\.7 \\| 0\\.300 \\| 0\\.000 \\| 0\\.000 \\| for i in range\\(n\\): \\|\\n\\| 7 \\| 83\\.8 \\| 1\\.500 \\| 0\\.100 \\| 0\\.000 \\| total \\+= i \\* i \\|"}]}}
