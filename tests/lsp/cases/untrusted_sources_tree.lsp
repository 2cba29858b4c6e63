# the same 57 MB of empty arrays as sources.json beside a good profile.json:
# the profile loads, the snapshots are refused for what their tree would
# take (every line shows as stale: nothing wrong is drawn), the server stays
# small.
write-file prog.py "x = 1\n"
write-file .hotline/profile.json "{\"version\":1,\"program\":\"${WORK}/prog.py\",\"files\":{\"${WORK}/prog.py\":{\"lines\":{\"1\":{\"python_s\":1.0,\"samples\":100}}}}}"
write-repeat .hotline/sources.json 19000000 {"head": "[", "piece": "[],", "tail": "[]]"}
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"type": 3, "message": "re:loaded the last profile"}}
max-rss 300
--> {"jsonrpc": "2.0", "id": 2, "method": "hotline/debug/state", "params": {}}
<-- {"id": 2, "result": {"profile": true}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
