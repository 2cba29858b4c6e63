# hotline.run: a missing `cwd` is named (not "cannot start python3"); the
# program's stdin is /dev/null unless `stdin` names a file (relative to cwd)
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file sub/echo.py "import sys\ndata = sys.stdin.read()\nprint('stdin was %r' % data)\nsys.exit(0 if data == sys.argv[1].replace('|', '\\n') else 3)\n"
write-file sub/input.txt "line one\nline two\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/sub/echo.py", "cwd": "${WORK}/no-such-dir", "args": [""]}]}}
<-- {"id": 2, "error": {"code": -32803, "message": "re:working folder .*/no-such-dir does not exist"}}
<-- {"method": "window/showMessage", "params": {"type": 1, "message": "re:no-such-dir does not exist"}}
# no stdin given: /dev/null, the program reads nothing
--> {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/sub/echo.py", "args": [""]}]}}
<-- {"id": 3, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:echo.py exited 0"}}
# stdin from a file, relative to the program's folder (its cwd)
--> {"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/sub/echo.py", "stdin": "input.txt", "args": ["line one|line two|"]}]}}
<-- {"id": 4, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:echo.py exited 0"}}
# a stdin file that is not there: refused, named
--> {"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/sub/echo.py", "stdin": "${WORK}/missing.txt", "args": [""]}]}}
<-- {"id": 5, "error": {"code": -32803, "message": "re:cannot open .*/missing.txt for the program's stdin"}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
<!- {"method": "window/showMessage", "params": {"message": "re:exited 3"}}
