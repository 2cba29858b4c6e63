# Issue 10, item 9: OPENAI_API_KEY (here the case's secret) is in the server's
# environment and llm.base_url names another host (the fake endpoint, as in
# the docs' local-model example) without llm.api_key_env: the request goes
# without any key, and the 401 says why. With llm.api_key_env naming the
# variable the key goes. Plain http to a host that is not loopback: the
# action's title says so before the pick (listing actions sends nothing).
llm-env OPENAI_API_KEY
llm-env ANTHROPIC_API_KEY
write-file prog.py "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 191, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}, \"dropped\": 0, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"6\": {\"python_s\": 0.3, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.3, \"samples\": 30}, \"7\": {\"python_s\": 1.5, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.6, \"samples\": 160}, \"10\": {\"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}}, \"functions\": [{\"name\": \"work\", \"first_line\": 4, \"last_line\": 8, \"python_s\": 1.8, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9000000000000001, \"samples\": 190}, {\"name\": \"<module>\", \"first_line\": 1, \"last_line\": 10, \"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}], \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"applyEdit": true}}, "initializationOptions": {"llm": {"base_url": "${LLM_URL}/v1", "model": "no-key-model"}}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
# the saved profile loads off the event loop: wait until it is in
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}, "context": {"diagnostics": []}}}
<-- {"id": 2, "result": [{"title": "re:^Hotline: Optimize this \\(sends the code to 127\\.0\\.0\\.1:[0-9]+\\)$"}]}
--> {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 3, "error": {"code": -32803, "message": "re:^127\\.0\\.0\\.1:[0-9]+ refused the request \\(401\\): no API key was sent \\(OPENAI_API_KEY goes only to the provider's own host; name it in llm\\.api_key_env to send it to this one\\)"}}
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"llm": {"provider": "anthropic", "base_url": "${LLM_URL}", "model": "no-key-anthropic"}}}}}
--> {"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 4, "error": {"code": -32803, "message": "re:no API key was sent \\(ANTHROPIC_API_KEY goes only to"}}
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"llm": {"provider": "openai", "base_url": "${LLM_URL}/v1", "model": "keyed-model", "api_key_env": "OPENAI_API_KEY"}}}}}
--> {"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 5, "error": {"code": -32803, "message": "re:refused the request \\(401\\): check the API key"}}
# plain http to a host that is not loopback (TEST-NET-1, nothing is sent)
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"llm": {"base_url": "http://192.0.2.1:9/v1", "api_key_env": "OPENAI_API_KEY"}}}}}
--> {"jsonrpc": "2.0", "id": 6, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}, "context": {"diagnostics": []}}}
<-- {"id": 6, "result": [{"title": "Hotline: Optimize this (sends the code and the API key unencrypted to 192.0.2.1:9)"}]}
--> {"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"hotline": {"llm": {"base_url": "http://192.0.2.1:9/v1", "api_key_env": ""}}}}}
--> {"jsonrpc": "2.0", "id": 7, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}, "context": {"diagnostics": []}}}
<-- {"id": 7, "result": [{"title": "Hotline: Optimize this (sends the code unencrypted to 192.0.2.1:9)"}]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"status": 401, "json": {"error": {"message": "missing key"}}}, {"status": 401, "json": {"error": {"message": "missing key"}}}, {"status": 401, "json": {"error": {"message": "bad key"}}}]
llm-requests 3
llm-expect-not {"headers": {"authorization": "re:"}, "body": {"model": "no-key-model"}}
llm-expect-not {"headers": {"x-api-key": "re:"}, "body": {"model": "no-key-anthropic"}}
llm-expect {"path": "/v1/messages", "body": {"model": "no-key-anthropic"}}
llm-expect {"path": "/v1/chat/completions", "body": {"model": "no-key-model"}}
llm-expect {"headers": {"authorization": "Bearer ${KEY}"}, "body": {"model": "keyed-model"}}
