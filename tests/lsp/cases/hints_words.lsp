# Hint and lens wording (docs/lsp.md, "Lenses, hints, hover"), on a saved
# profile with exact numbers (1.00 s in all): the share, then in words the
# kinds holding >= 20% of the line or >= 5% of the run, then memory. A
# sleeping line reads "10% waiting" (it read "10% py/nat 0/0"), one kind
# alone its word, several their shares; line 4's 1% waiting is left out,
# line 6's 6% waiting (10% of the line) is not; no "sys 0" in lenses.
write-file prog.py "import time\ndef main():\n    time.sleep(0.10)\n    x = sum(i * i for i in range(10**6))\n    y = heavy_native()\n    z = [bytearray(2**20) for _ in range(40)]\nmain()\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"elapsed_s\": 1.0, \"interval_ms\": 10, \"samples\": 100, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 0.68, \"native_s\": 0.15, \"system_s\": 0.17, \"cpu_s\": 0.83, \"samples\": 100}, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"3\": {\"python_s\": 0, \"native_s\": 0, \"system_s\": 0.1, \"cpu_s\": 0, \"samples\": 10}, \"4\": {\"python_s\": 0.14, \"native_s\": 0.05, \"system_s\": 0.01, \"cpu_s\": 0.19, \"samples\": 20}, \"5\": {\"python_s\": 0, \"native_s\": 0.1, \"system_s\": 0, \"cpu_s\": 0.1, \"samples\": 10, \"alloc_mb\": 5.0}, \"6\": {\"python_s\": 0.54, \"native_s\": 0, \"system_s\": 0.06, \"cpu_s\": 0.54, \"samples\": 60, \"alloc_mb\": 40.0, \"freed_mb\": 40.0}}, \"functions\": [{\"name\": \"main\", \"first_line\": 2, \"last_line\": 6, \"python_s\": 0.68, \"native_s\": 0.15, \"system_s\": 0.17, \"cpu_s\": 0.83, \"samples\": 100}], \"totals\": {\"python_s\": 0.68, \"native_s\": 0.15, \"system_s\": 0.17, \"cpu_s\": 0.83, \"samples\": 100}}}}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}, "initializationOptions": {"hints": {"threshold": 1}}}}
<-- {"id": 1, "result": {"capabilities": {}}}
--> {"jsonrpc": "2.0", "method": "initialized", "params": {}}
# the saved profile loads off the event loop: wait until it is in
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\ndef main():\n    time.sleep(0.10)\n    x = sum(i * i for i in range(10**6))\n    y = heavy_native()\n    z = [bytearray(2**20) for _ in range(40)]\nmain()\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 2, "result": [{"position": {"line": 2}, "label": "▏10% waiting"}, {"position": {"line": 3}, "label": "▎20% · 14 py · 5 native"}, {"position": {"line": 4}, "label": "▏10% native · +5 MB kept"}, {"position": {"line": 5}, "label": "▋60% · 54 py · 6 waiting · 40 MB alloc"}]}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 3, "result": [{"range": {"start": {"line": 0}}, "command": {"title": "⏱ 100% · 68 py · 15 native · 17 waiting · +5 MB kept", "arguments": [{"function": "<module>"}]}}, {"range": {"start": {"line": 1}}, "command": {"title": "⏱ 100% · 68 py · 15 native · 17 waiting · +5 MB kept", "arguments": [{"function": "main"}]}}]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
