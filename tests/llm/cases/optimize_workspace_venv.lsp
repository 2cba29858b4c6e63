# Issue 20, item 2: a cloned repository brings .venv/bin/python (a symlink
# to the system's python3), its pyvenv.cfg, a .pth file in that venv's
# site-packages and a saved profile; the client names that interpreter
# (the Neovim plugin picks <root>/.venv by itself). Picking "Optimize this"
# before any run must not execute it: python -I still runs .pth files. The
# optimization still goes through (python3 on PATH checks the edit), and no
# marker exists afterwards.
write-file prog.py "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"
symlink .venv/bin/python /usr/bin/python3
write-file .venv/pyvenv.cfg "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n"
write-file .venv/lib/python3.9/site-packages/evil.pth "import os, sys; open(os.path.join(sys.prefix, '..', 'MARKER-pth'), 'w').close()\n"
write-file .venv/lib/python3.10/site-packages/evil.pth "import os, sys; open(os.path.join(sys.prefix, '..', 'MARKER-pth'), 'w').close()\n"
write-file .venv/lib/python3.11/site-packages/evil.pth "import os, sys; open(os.path.join(sys.prefix, '..', 'MARKER-pth'), 'w').close()\n"
write-file .venv/lib/python3.12/site-packages/evil.pth "import os, sys; open(os.path.join(sys.prefix, '..', 'MARKER-pth'), 'w').close()\n"
write-file .venv/lib/python3.13/site-packages/evil.pth "import os, sys; open(os.path.join(sys.prefix, '..', 'MARKER-pth'), 'w').close()\n"
write-file .venv/lib/python3.14/site-packages/evil.pth "import os, sys; open(os.path.join(sys.prefix, '..', 'MARKER-pth'), 'w').close()\n"
write-file .venv/lib/python3.15/site-packages/evil.pth "import os, sys; open(os.path.join(sys.prefix, '..', 'MARKER-pth'), 'w').close()\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 191, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}, \"dropped\": 0, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"6\": {\"python_s\": 0.3, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.3, \"samples\": 30}, \"7\": {\"python_s\": 1.5, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.6, \"samples\": 160}, \"10\": {\"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}}, \"functions\": [{\"name\": \"work\", \"first_line\": 4, \"last_line\": 8, \"python_s\": 1.8, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9000000000000001, \"samples\": 190}, {\"name\": \"<module>\", \"first_line\": 1, \"last_line\": 10, \"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}], \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9100000000000001, \"samples\": 191}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"applyEdit": true}}, "initializationOptions": {"python": "${WORK}/.venv/bin/python", "llm": {"base_url": "${LLM_URL}/v1", "model": "test-model", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"method": "window/logMessage", "params": {"message": "re:optimize: .*/\\.venv/bin/python is in the workspace and no run of this session used it"}}
<-- {"method": "workspace/applyEdit", "params": {"edit": {"documentChanges": [{"edits": [{"range": {"start": {"line": 5, "character": 0}, "end": {"line": 7, "character": 0}}, "newText": "    total += sum(i * i for i in range(n))\n"}]}]}}}
reply {"result": {"applied": true}}
<-- {"id": 2, "result": {"applied": true}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"content": "```python\ntotal += sum(i * i for i in range(n))\n```\nFaster."}]
llm-requests 1
# the version sent is the profile's (python3's is not the target's)
llm-expect {"body": {"messages": [{"role": "system"}, {"role": "user", "content": "re:Environment: Python 3\\.11\\.2\\."}]}}
no-file MARKER-pth
no-file .venv/MARKER-pth
