# hover's "who calls this line" is a small text flame upside down: the
# line's callers (a 2/3, b 1/3 of its time), each with its own callers
# indented under it (main at lines 10 and 11, then <module>), three calls out
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}}}
<-- {"id":1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file prog.py "import time\ndef spin(s):\n    t = time.monotonic()\n    while time.monotonic() - t < s: pass\ndef a():\n    spin(0.6)\ndef b():\n    spin(0.3)\ndef main():\n    a()\n    b()\nmain()\n"
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\ndef spin(s):\n    t = time.monotonic()\n    while time.monotonic() - t < s: pass\ndef a():\n    spin(0.6)\ndef b():\n    spin(0.3)\ndef main():\n    a()\n    b()\nmain()\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"type": 3, "message": "re:prog.py exited 0"}}
--> {"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py"}, "position": {"line": 3, "character": 5}}}
<-- {"id": 3, "result": {"contents": {"kind": "markdown", "value": "re:(?s)Who calls this line[^\\n]*\\n\\n    [█░]{10}  *[5-7][0-9]%  a \\(prog.py:6\\)\\n    [█░]{10}  *[5-7][0-9]%    main \\(prog.py:10\\)\\n    [█░]{10}  *[5-7][0-9]%      <module> \\(prog.py:12\\)\\n    [█░]{10}  *[2-4][0-9]%  b \\(prog.py:8\\)\\n    [█░]{10}  *[2-4][0-9]%    main \\(prog.py:11\\)\\n    [█░]{10}  *[2-4][0-9]%      <module> \\(prog.py:12\\)\\n\\n\\*\\*Call stacks"}}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
