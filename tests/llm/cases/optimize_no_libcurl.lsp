# libcurl missing (HOTLINE_LIBCURL names a library that is not there; the
# server links none: server/llm/curl_dl.c): everything but the request to
# the endpoint works, and picking "Optimize this" is answered with an error
# that says what to install; nothing is sent; the server keeps serving.
write-file prog.py "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 191, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}, \"dropped\": 0, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"6\": {\"python_s\": 0.3, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.3, \"samples\": 30}, \"7\": {\"python_s\": 1.5, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.6, \"samples\": 160}, \"10\": {\"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}}, \"functions\": [{\"name\": \"work\", \"first_line\": 4, \"last_line\": 8, \"python_s\": 1.8, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9000000000000001, \"samples\": 190}, {\"name\": \"<module>\", \"first_line\": 1, \"last_line\": 10, \"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}], \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}, "workspace": {"applyEdit": true, "codeLens": {"refreshSupport": true}}}, "initializationOptions": {"llm": {"base_url": "${LLM_URL}/v1", "model": "test-model", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id":1,"result":{"capabilities":{"codeActionProvider":{"codeActionKinds":["refactor.rewrite.hotline.optimize"],"resolveProvider":true}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}}}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}, "context": {"diagnostics": []}}}
<-- {"id": 4, "result": [{"title": "re:^Hotline: Optimize this \\(sends the code to 127\\.0\\.0\\.1:[0-9]+\\)$", "kind": "refactor.rewrite.hotline.optimize"}]}
--> {"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 5, "error": {"message": "re:^Optimize this needs libcurl \\(/nonexistent/libcurl\\.so\\.4\\), which could not be loaded .*apt-get install libcurl4"}}
# and again: the same sentence, nothing cached wrong
--> {"jsonrpc": "2.0", "id": 6, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"id": 6, "error": {"message": "re:needs libcurl"}}
# the rest of the server is untouched
--> {"jsonrpc": "2.0", "id": 7, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 7, "result": [{"command": {"title": "re:py"}}, "..."]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-requests 0
