# hotline.showProfile with no arguments answers "no profile yet" and leaks
# nothing (the ASan build's LeakSanitizer turns a leak into a non-zero exit)
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.showProfile"}}
<-- {"id": 2, "error": {"code": -32803, "message": "re:no profile yet"}}
--> {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "hotline.showProfile", "arguments": []}}
<-- {"id": 3, "error": {"code": -32803, "message": "re:no profile yet"}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
