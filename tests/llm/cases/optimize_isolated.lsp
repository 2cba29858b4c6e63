# Issue 10, item 8: picking "Optimize this" runs no workspace code. The probe
# (versions, does the file compile) and the check imports json / ast; a
# json.py and an ast.py in the workspace (the server's working directory)
# would write a marker if imported. The helpers run python -I from "/": the
# optimization goes through and no marker exists afterwards.
write-file prog.py "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"
write-file json.py "import os\nopen(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'MARKER-json'), 'w').close()\n"
write-file ast.py "import os\nopen(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'MARKER-ast'), 'w').close()\n"
write-file importlib/__init__.py "import os\nopen(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'MARKER-importlib'), 'w').close()\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 191, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}, \"dropped\": 0, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"6\": {\"python_s\": 0.3, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.3, \"samples\": 30}, \"7\": {\"python_s\": 1.5, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.6, \"samples\": 160}, \"10\": {\"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}}, \"functions\": [{\"name\": \"work\", \"first_line\": 4, \"last_line\": 8, \"python_s\": 1.8, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9000000000000001, \"samples\": 190}, {\"name\": \"<module>\", \"first_line\": 1, \"last_line\": 10, \"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}], \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"applyEdit": true}}, "initializationOptions": {"llm": {"base_url": "${LLM_URL}/v1", "model": "test-model", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
# the saved profile loads off the event loop: wait until it is in
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"method": "workspace/applyEdit", "params": {"edit": {"documentChanges": [{"edits": [{"range": {"start": {"line": 5, "character": 0}, "end": {"line": 7, "character": 0}}, "newText": "    total += sum(i * i for i in range(n))\n"}]}]}}}
reply {"result": {"applied": true}}
<-- {"id": 2, "result": {"applied": true}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"content": "```python\ntotal += sum(i * i for i in range(n))\n```\nFaster."}]
llm-requests 1
# the probe still answered: the prompt has the interpreter's version
llm-expect {"body": {"messages": [{"role": "system"}, {"role": "user", "content": "re:Environment: Python ${PY_VERSION}\\."}]}}
no-file MARKER-json
no-file MARKER-ast
no-file MARKER-importlib
