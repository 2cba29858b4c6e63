# Every failure path changes nothing and says why: 401 (the key echoed by the
# endpoint is scrubbed), 403, 404, 429 with Retry-After, 5xx, not JSON, no text,
# cut off by the token limit, no code block, code that does not parse, a
# timeout, a refused connection, and a key variable that is not set (nothing sent).
write-file prog.py "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 191, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}, \"dropped\": 0, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"6\": {\"python_s\": 0.3, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.3, \"samples\": 30}, \"7\": {\"python_s\": 1.5, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.6, \"samples\": 160}, \"10\": {\"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}}, \"functions\": [{\"name\": \"work\", \"first_line\": 4, \"last_line\": 8, \"python_s\": 1.8, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9000000000000001, \"samples\": 190}, {\"name\": \"<module>\", \"first_line\": 1, \"last_line\": 10, \"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}], \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"applyEdit": true}}, "initializationOptions": {"llm": {"base_url": "${LLM_URL}/v1", "model": "test-model", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
# the saved profile loads off the event loop: wait until it is in
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}}}
<!- {"method": "workspace/applyEdit"}
--> {"jsonrpc": "2.0", "id": 10, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"method": "window/showMessage", "params": {"type": 1, "message": "re:^Hotline: Optimize this: 127\\.0\\.0\\.1:[0-9]+ refused the request \\(401\\).*\\*\\*\\*"}}
<-- {"id": 10, "error": {"code": -32803, "message": "re:^127\\.0\\.0\\.1:[0-9]+ refused the request \\(401\\): check the API key \\(the variable named by llm\\.api_key_env, default OPENAI_API_KEY\\): Incorrect API key provided: \\*\\*\\*\\.$"}}
--> {"jsonrpc": "2.0", "id": 11, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 11, "error": {"code": -32803, "message": "re:refused the request \\(403\\)"}}
--> {"jsonrpc": "2.0", "id": 12, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 12, "error": {"code": -32803, "message": "re:answered 404: no model \\\"test-model\\\" or wrong llm\\.base_url \\(http://127\\.0\\.0\\.1:[0-9]+/v1/chat/completions\\): The model does not exist"}}
--> {"jsonrpc": "2.0", "id": 13, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 13, "error": {"code": -32803, "message": "re:rate limiting \\(429\\): retry after 7 s"}}
--> {"jsonrpc": "2.0", "id": 14, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 14, "error": {"code": -32803, "message": "re:server error \\(503\\): try again later"}}
--> {"jsonrpc": "2.0", "id": 15, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 15, "error": {"code": -32803, "message": "re:answered with something that is not JSON"}}
--> {"jsonrpc": "2.0", "id": 16, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 16, "error": {"code": -32803, "message": "re:answered JSON without a message text \\(OpenAI chat completions format expected\\)"}}
--> {"jsonrpc": "2.0", "id": 17, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 17, "error": {"code": -32803, "message": "re:cut off by the token limit: nothing changed"}}
--> {"jsonrpc": "2.0", "id": 18, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 18, "error": {"code": -32803, "message": "re:has no code block: nothing changed"}}
--> {"jsonrpc": "2.0", "id": 19, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 19, "error": {"code": -32803, "message": "re:is not valid Python: .*\\(line 1 of the suggestion\\)\\. Nothing changed"}}
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"llm": {"timeout_s": 0.5}}}}}
--> {"jsonrpc": "2.0", "id": 20, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 20, "error": {"code": -32803, "message": "re:did not answer: timed out"}}
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"llm": {"base_url": "http://127.0.0.1:1/v1"}}}}}
--> {"jsonrpc": "2.0", "id": 21, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 21, "error": {"code": -32803, "message": "re:^127\\.0\\.0\\.1:1 did not answer: "}}
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"llm": {"base_url": "${LLM_URL}/v1", "api_key_env": "HOTLINE_TEST_NO_SUCH_KEY"}}}}}
--> {"jsonrpc": "2.0", "id": 22, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 22, "error": {"code": -32803, "message": "re:the environment variable HOTLINE_TEST_NO_SUCH_KEY \\(llm\\.api_key_env\\) is not set"}}
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"llm": {"provider": "gemini"}}}}}
--> {"jsonrpc": "2.0", "id": 90, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}, "context": {"diagnostics": []}}}
<-- {"id": 90, "result": []}
--> {"jsonrpc": "2.0", "id": 23, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 23, "error": {"code": -32803, "message": "re:llm\\.provider must be \\\"openai\\\" or \\\"anthropic\\\", not \\\"gemini\\\""}}
--> {"jsonrpc": "2.0", "id": 98, "method": "hotline/debug/state", "params": {"uri": "${WORK_URI}/prog.py"}}
<-- {"id": 98, "result": {"document": {"text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n", "version": 1}, "optimize": {"inflight": 0, "done": 0, "http": 0}}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"status": 401, "json": {"error": {"message": "Incorrect API key provided: ${KEY}."}}}, {"status": 403, "json": {"error": {"message": "forbidden"}}}, {"status": 404, "json": {"error": {"message": "The model does not exist"}}}, {"status": 429, "headers": {"Retry-After": "7"}, "json": {"error": {"message": "slow down"}}}, {"status": 503, "raw": "upstream down"}, {"raw": "{not json"}, {"json": {"choices": []}}, {"finish": "length", "content": "```python\nfor i in range(n):\n"}, {"content": "I would not change anything."}, {"content": "```python\nfor i in range(n)\n    total += i * i\n```\nFaster."}, {"delay_s": 5, "content": "```python\npass\n```"}]
llm-requests 11
