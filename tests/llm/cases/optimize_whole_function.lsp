# Issue 20, item 6: the model answers with the whole function (a common
# shape) although it was shown the loop inside it. Put at the loop's place
# that was a nested def: the file still compiled, the edit was applied and
# hot(100) returned -3 instead of 197. The answer redefines the function
# around the region: it replaces that function, at its own indentation,
# and the edited file computes what the original did.
write-file prog.py "def hot(n):\n    total = -3\n    for i in range(n):\n        total += 2\n    return total\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 190, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.9, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 1.9, \"samples\": 190}, \"dropped\": 0, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"3\": {\"python_s\": 0.4, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.4, \"samples\": 40}, \"4\": {\"python_s\": 1.5, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 1.5, \"samples\": 150}}, \"functions\": [{\"name\": \"hot\", \"first_line\": 1, \"last_line\": 5, \"python_s\": 1.9, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 1.9, \"samples\": 190}], \"totals\": {\"python_s\": 1.9, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 1.9, \"samples\": 190}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"applyEdit": true}}, "initializationOptions": {"llm": {"base_url": "${LLM_URL}/v1", "model": "test-model", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "def hot(n):\n    total = -3\n    for i in range(n):\n        total += 2\n    return total\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 3, "character": 8}, "end": {"line": 3, "character": 8}}}]}}
<-- {"method": "window/logMessage", "params": {"message": "re:the answer redefines the function around lines 3-4 \\(hot\\): it replaces lines 1-5"}}
<-- {"method": "workspace/applyEdit", "params": {"edit": {"documentChanges": [{"edits": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}, "newText": "def hot(n):\n    return 2 * n - 3\n"}]}]}}}
reply {"result": {"applied": true}}
<-- {"id": 2, "result": {"applied": true}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"content": "Use the closed form.\n```python\ndef hot(n):\n    return 2 * n - 3\n```\n"}]
llm-requests 1
edited-run prog.py hot(100) 197
edited-run prog.py hot(0) -3
