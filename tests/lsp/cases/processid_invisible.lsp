# a processId that names no process here (the client lives in another PID
# namespace) is not watched: the server must not exit after 3 s because
# that pid "died". A 3.5 s run is the clock.
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": 2147480000, "rootUri": "${WORK_URI}", "capabilities": {}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
write-file wait.py "import time\ntime.sleep(3.5)\n"
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/wait.py"}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:wait.py exited 0"}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
