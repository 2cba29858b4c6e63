# the names in hotline/executing, computed by the server for every editor:
# a frame's name is "module.function", the module being the path after
# site-packages (or lib/pythonX.Y) without .py and /__init__; "call" is the
# library frame just outside the program's innermost own frame (pkg.outer),
# not the innermost frame; the fallback diagnostic names the same call;
# "text" (the status line) names the chain, the program's call first, as the
# line in the editor reads it (lib.outer), then the library function it
# entered by module (pkg.outer), then the innermost function (spin)
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"experimental": {"hotlineExecuting": true}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file py/lib/python3.99/json2/decoder.py "import time\ndef spin(seconds):\n    t = time.monotonic()\n    while time.monotonic() - t < seconds:\n        pass\n"
write-file venv/lib/python3.99/site-packages/pkg/__init__.py "from json2 import decoder\ndef outer(seconds):\n    decoder.spin(seconds)\n"
write-file app/prog.py "import os, sys\nhere = os.path.dirname(os.path.abspath(__file__))\nsys.path[:0] = [os.path.join(here, '..', 'py', 'lib', 'python3.99'), os.path.join(here, '..', 'venv', 'lib', 'python3.99', 'site-packages')]\nimport pkg as lib\ndef main():\n    lib.outer(1.5)  # é🎉\nmain()\n"
--> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"${WORK_URI}/app/prog.py","languageId":"python","version":1,"text":"import os, sys\nhere = os.path.dirname(os.path.abspath(__file__))\nsys.path[:0] = [os.path.join(here, '..', 'py', 'lib', 'python3.99'), os.path.join(here, '..', 'venv', 'lib', 'python3.99', 'site-packages')]\nimport pkg as lib\ndef main():\n    lib.outer(1.5)  # é🎉\nmain()\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/app/prog.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "hotline/executing", "params": {"uri": "${WORK_URI}/app/prog.py", "line": 5, "stack": [{"function": "spin", "library": true, "user": false, "name": "json2.decoder.spin"}, {"function": "outer", "library": true, "name": "pkg.outer"}, {"function": "main", "library": false, "user": true, "name": "prog.main"}, {"function": "<module>", "library": false, "name": "prog.<module>"}], "call": "pkg.outer", "text": "re:^▶ [0-9]+\\.[0-9] s on this line · lib\\.outer → pkg\\.outer → spin$"}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
<-- {"method": "hotline/runEnded", "params": {"outcome": "done"}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
