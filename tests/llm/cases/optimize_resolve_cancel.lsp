# codeAction/resolve path, Anthropic dialect: the action carries only data (nothing
# is sent when actions are listed); picking it sends the request, and the resolved
# action carries the edit. Two actions in flight at once against a slow endpoint:
# inlay hints are answered while both wait, the fast one resolves, the slow one
# is cancelled by $/cancelRequest (-32800, progress ends), a third by progress
# cancel. Nothing is left in flight.
write-file prog.py "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 191, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}, \"dropped\": 0, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"6\": {\"python_s\": 0.3, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.3, \"samples\": 30}, \"7\": {\"python_s\": 1.5, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.6, \"samples\": 160}, \"10\": {\"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}}, \"functions\": [{\"name\": \"work\", \"first_line\": 4, \"last_line\": 8, \"python_s\": 1.8, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9000000000000001, \"samples\": 190}, {\"name\": \"<module>\", \"first_line\": 1, \"last_line\": 10, \"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}], \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "textDocument": {"codeAction": {"resolveSupport": {"properties": ["edit"]}}}}, "initializationOptions": {"llm": {"provider": "anthropic", "base_url": "${LLM_URL}", "model": "claude-test", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
# the saved profile loads off the event loop: wait until it is in
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 3, "character": 0}, "end": {"line": 8, "character": 0}}, "context": {"diagnostics": []}}}
<-- {"id": 2, "result": [{"title": "re:^Hotline: Optimize this \\(sends the code to 127\\.0\\.0\\.1:[0-9]+\\)$", "kind": "refactor.rewrite.hotline.optimize", "data": {"hotline": "optimize", "args": {"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 3}, "end": {"line": 8}}}}}]}
--> {"jsonrpc": "2.0", "id": 10, "method": "codeAction/resolve", "params": {"title": "Hotline: Optimize this", "kind": "refactor.rewrite.hotline.optimize", "data": {"hotline": "optimize", "args": {"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 3, "character": 0}, "end": {"line": 8, "character": 0}}}}}}
<-- {"method": "window/workDoneProgress/create", "params": {"token": "hotline-optimize-1"}}
reply {"result": null}
<-- {"method": "$/progress", "params": {"token": "hotline-optimize-1", "value": {"kind": "report", "message": "re:^waiting for 127\\.0\\.0\\.1:[0-9]+ \\(claude-test\\)$"}}}
--> {"jsonrpc": "2.0", "id": 12, "method": "codeAction/resolve", "params": {"title": "Hotline: Optimize this", "kind": "refactor.rewrite.hotline.optimize", "data": {"hotline": "optimize", "args": {"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 2}, "end": {"line": 6, "character": 2}}}}}}
<-- {"method": "window/workDoneProgress/create", "params": {"token": "hotline-optimize-2"}}
--> {"jsonrpc": "2.0", "id": 11, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 10, "character": 0}}}}
<-- {"id": 11, "result": [{"position": {"line": 5}}, {"position": {"line": 6}}]}
--> {"jsonrpc": "2.0", "id": 15, "method": "hotline/debug/state", "params": {}}
<-- {"id": 15, "result": {"optimize": {"inflight": 2}}}
<-- {"id": 12, "result": {"title": "Hotline: Optimize this", "edit": {"documentChanges": [{"textDocument": {"uri": "${WORK_URI}/prog.py", "version": 1}, "edits": [{"range": {"start": {"line": 5, "character": 0}, "end": {"line": 7, "character": 0}}, "newText": "    total += sum(i * i for i in range(n))\n"}]}]}}}
--> {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 10}}
<-- {"method": "$/progress", "params": {"token": "hotline-optimize-1", "value": {"kind": "end", "message": "cancelled"}}}
<-- {"id": 10, "error": {"code": -32800}}
--> {"jsonrpc": "2.0", "id": 13, "method": "codeAction/resolve", "params": {"title": "Hotline: Optimize this", "kind": "refactor.rewrite.hotline.optimize", "data": {"hotline": "optimize", "args": {"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 3, "character": 0}, "end": {"line": 8, "character": 0}}}}}}
<-- {"method": "window/workDoneProgress/create", "params": {"token": "hotline-optimize-3"}}
reply {"result": null}
<-- {"method": "$/progress", "params": {"token": "hotline-optimize-3", "value": {"kind": "report", "message": "re:^waiting for"}}}
--> {"jsonrpc": "2.0", "method": "window/workDoneProgress/cancel", "params": {"token": "hotline-optimize-3"}}
<-- {"id": 13, "error": {"code": -32800}}
--> {"jsonrpc": "2.0", "id": 98, "method": "hotline/debug/state", "params": {"uri": "${WORK_URI}/prog.py"}}
<-- {"id": 98, "result": {"document": {"text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}, "optimize": {"inflight": 0, "done": 1, "http": 0}}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"match": "(lines 4-8)", "delay_s": 60, "content": "```python\npass\n```"}, {"match": "(lines 4-8)", "delay_s": 60, "content": "```python\npass\n```"}, {"match": "(lines 6-7)", "delay_s": 3, "content": "Faster:\n```py\n    total += sum(i * i for i in range(n))\n```"}]
llm-expect {"path": "/v1/messages", "headers": {"x-api-key": "${KEY}", "anthropic-version": "2023-06-01"}, "body": {"model": "claude-test", "max_tokens": 4096, "system": "re:behaviour identical", "messages": [{"role": "user", "content": "re:(?s)\\(lines 6-7\\).*\\| 7 \\| 83\\.8 \\|"}]}}
llm-expect {"path": "/v1/messages", "body": {"messages": [{"role": "user", "content": "re:(?s)\\(lines 4-8\\).*```python\\ndef work\\(n\\):\\n    total = 0\\n    for i in range\\(n\\):\\n        total \\+= i \\* i\\n    return total\\n```"}]}}
