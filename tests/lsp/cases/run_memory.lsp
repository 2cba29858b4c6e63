# Memory from a real run (agent with memory on, the default): the line that
# keeps 1 MB per iteration gets a leak Warning (publishDiagnostics, source
# hotline, code leak, rate in MB/s); its hover shows the kept-MB timeline as a
# sparkline with min/max MB; the copying line's hover shows the copy volume
# (MB, and MB/s of the line's own time: the line copies 160 MB per iteration
# so that it always has samples);
# the churn line (3 MB allocated and freed per iteration) is no leak.
# (8 MB copies: 40 MB per iteration left the copy line without a single
# time sample on a loaded machine, and MB/s needs its time.)
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"window": {"workDoneProgress": true}}}}
<-- {"id":1,"result":{"capabilities":{}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file prog.py "import time\nkeep = []\ndef main():\n    big = bytearray(8 << 20)\n    for i in range(40):\n        keep.append(bytearray(1 << 20))\n        tmp = bytearray(3 << 20); del tmp\n        for _ in range(20): c = bytes(big); del c\n        time.sleep(0.04)\nmain()\ndef churn():\n    for _ in range(30): b = bytearray(4 << 20); del b\n    time.sleep(0.2)\nchurn()\n"
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\nkeep = []\ndef main():\n    big = bytearray(8 << 20)\n    for i in range(40):\n        keep.append(bytearray(1 << 20))\n        tmp = bytearray(3 << 20); del tmp\n        for _ in range(20): c = bytes(big); del c\n        time.sleep(0.04)\nmain()\ndef churn():\n    for _ in range(30): b = bytearray(4 << 20); del b\n    time.sleep(0.2)\nchurn()\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"method": "window/workDoneProgress/create", "params": {"token": "hotline-run-1"}}
reply {"result":null}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/prog.py", "diagnostics": [{"range": {"start": {"line": 5, "character": 0}}, "severity": 2, "source": "hotline", "code": "leak", "message": "re:^likely leak: memory grows [0-9.]+ MB/s here, (39|40)\\.[0-9] MB still held at the end"}]}}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "position": {"line": 5, "character": 9}}}
<-- {"id": 3, "result": {"contents": {"kind": "markdown", "value": "re:(?s)line 6.*kept over the run\\*\\* `▁[▁▂▃▄▅▆▇█]*█` min [0-9.]+ MB, max (39|40)\\.[0-9] MB, over [0-9.]+ s"}}}
--> {"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "position": {"line": 7, "character": 9}}}
<-- {"id": 4, "result": {"contents": {"kind": "markdown", "value": "re:(?s)line 8.*copied 6[0-9][0-9][0-9]\\.[0-9] MB\n- copies [0-9.]+ MB/s"}}}
# hints: the share and its kinds in words, then "+N MB kept" only on a line
# that keeps memory; a line that allocates and frees says "N MB alloc" (a
# "+" there would read as memory kept)
--> {"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"hotline":{"hints":{"threshold":0}}}}}
--> {"jsonrpc": "2.0", "id": 5, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 5, "character": 0}, "end": {"line": 5, "character": 99}}}}
<-- {"id": 5, "result": [{"position": {"line": 5}, "label": "re:^.[0-9]+%( (python|native|waiting)|( · [0-9]+ (py|native|waiting))+)? · \\+(39|40) MB kept$"}]}
--> {"jsonrpc": "2.0", "id": 6, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "range": {"start": {"line": 7, "character": 0}, "end": {"line": 7, "character": 99}}}}
<-- {"id": 6, "result": [{"position": {"line": 7}, "label": "re:^.[0-9]+%( (python|native|waiting)|( · [0-9]+ (py|native|waiting))+)? · 6[0-9][0-9][0-9] MB alloc$"}]}
# lenses: "+N MB kept" over the function that keeps memory, "N MB alloc"
# (no "+") over one that only allocates and frees (it sleeps so that it has
# time samples, hence a lens); a function's memory is its lines' sum
--> {"jsonrpc": "2.0", "id": 7, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}}}
<-- {"id": 7, "result": [{"range": {"start": {"line": 0}}}, {"range": {"start": {"line": 2}}, "command": {"title": "re: \u00b7 \\+(39|40) MB kept$"}}, {"range": {"start": {"line": 10}}, "command": {"title": "re: \u00b7 1[12][0-9] MB alloc$"}}]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
