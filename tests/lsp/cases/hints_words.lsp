# Hint and lens wording (docs/lsp.md, "Lenses, hints, hover"), on a saved
# profile with exact numbers (1.002 s in all): the share, then the kinds that
# hold >= 10% of the line in words, then memory. A sleeping line reads
# "42% waiting" (it read "42% py/nat 0/0"), a mixed one "19% · 15 py ·
# 4 native", one kind alone its word; no "sys 0" noise in lenses.
write-file prog.py "import time\ndef main():\n    time.sleep(0.42)\n    x = sum(i * i for i in range(10**6))\n    y = heavy_native()\n    z = [bytearray(2**20) for _ in range(40)]\nmain()\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"elapsed_s\": 1.0, \"interval_ms\": 10, \"samples\": 100, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 0.21, \"native_s\": 0.372, \"system_s\": 0.42, \"cpu_s\": 0.582, \"samples\": 100}, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"3\": {\"python_s\": 0, \"native_s\": 0, \"system_s\": 0.42, \"cpu_s\": 0, \"samples\": 42}, \"4\": {\"python_s\": 0.15, \"native_s\": 0.04, \"system_s\": 0, \"cpu_s\": 0.19, \"samples\": 19}, \"5\": {\"python_s\": 0, \"native_s\": 0.33, \"system_s\": 0, \"cpu_s\": 0.33, \"samples\": 33, \"alloc_mb\": 5.0}, \"6\": {\"python_s\": 0.06, \"native_s\": 0.002, \"system_s\": 0, \"cpu_s\": 0.062, \"samples\": 6, \"alloc_mb\": 40.0, \"freed_mb\": 40.0}}, \"functions\": [{\"name\": \"main\", \"first_line\": 2, \"last_line\": 6, \"python_s\": 0.21, \"native_s\": 0.372, \"system_s\": 0.42, \"cpu_s\": 0.582, \"samples\": 100}], \"totals\": {\"python_s\": 0.21, \"native_s\": 0.372, \"system_s\": 0.42, \"cpu_s\": 0.582, \"samples\": 100}}}}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}, "initializationOptions": {"hints": {"threshold": 1}}}}
<-- {"id": 1, "result": {"capabilities": {}}}
--> {"jsonrpc": "2.0", "method": "initialized", "params": {}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\ndef main():\n    time.sleep(0.42)\n    x = sum(i * i for i in range(10**6))\n    y = heavy_native()\n    z = [bytearray(2**20) for _ in range(40)]\nmain()\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 2, "result": [{"position": {"line": 2}, "label": "▌42% waiting"}, {"position": {"line": 3}, "label": "▎19% · 15 py · 4 native"}, {"position": {"line": 4}, "label": "▍33% native · +5 MB kept"}, {"position": {"line": 5}, "label": "▏6% python · 40 MB alloc"}]}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 3, "result": [{"range": {"start": {"line": 0}}, "command": {"title": "⏱ 100% · 21 py · 37 native · 42 waiting · +5 MB kept", "arguments": [{"function": "<module>"}]}}, {"range": {"start": {"line": 1}}, "command": {"title": "⏱ 100% · 21 py · 37 native · 42 waiting · +5 MB kept", "arguments": [{"function": "main"}]}}]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
