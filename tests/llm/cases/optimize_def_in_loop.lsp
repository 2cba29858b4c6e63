# Issue 20, item 6: an answer that defines another function while the
# region is inside a loop (the inner loop of two) cannot be placed safely:
# the def would run on every pass of the outer loop. Refused with a clear
# message; no edit is sent.
write-file prog.py "def grid(n):\n    total = 0\n    for i in range(n):\n        for j in range(n):\n            total += i * j\n    return total\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 190, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.9, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 1.9, \"samples\": 190}, \"dropped\": 0, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"4\": {\"python_s\": 0.4, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.4, \"samples\": 40}, \"5\": {\"python_s\": 1.5, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 1.5, \"samples\": 150}}, \"functions\": [{\"name\": \"grid\", \"first_line\": 1, \"last_line\": 6, \"python_s\": 1.9, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 1.9, \"samples\": 190}], \"totals\": {\"python_s\": 1.9, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 1.9, \"samples\": 190}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"applyEdit": true}}, "initializationOptions": {"llm": {"base_url": "${LLM_URL}/v1", "model": "test-model", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "def grid(n):\n    total = 0\n    for i in range(n):\n        for j in range(n):\n            total += i * j\n    return total\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 4, "character": 8}, "end": {"line": 4, "character": 8}}}]}}
<-- {"id": 2, "error": {"message": "re:defines row, and lines 4-5 are inside a loop.*Nothing changed"}}
<!- {"method": "workspace/applyEdit"}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"content": "```python\ndef row(i, n):\n    return i * n * (n - 1) // 2\ntotal += row(i, n)\n```\n"}]
llm-requests 1
