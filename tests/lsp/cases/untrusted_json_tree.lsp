# 57 MB of empty arrays in a saved profile.json (under the 64 MB size cap)
# built 19 million jansson arrays: the server peaked at 2.7 GB. The text is
# scanned first and refused for what its tree would take, with the reason
# logged; the server stays small.
write-repeat .hotline/profile.json 19000000 {"head": "{\"version\":1,\"files\":{},\"stacks\":[", "piece": "[],", "tail": "[]]}"}
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"type": 2, "message": "re:ignoring .*/\\.hotline/profile\\.json: holds too many JSON values to load \\(their tree would take about [0-9]+ MB; at most 768 MB\\)"}}
max-rss 300
--> {"jsonrpc": "2.0", "id": 2, "method": "hotline/debug/state", "params": {}}
<-- {"id": 2, "result": {"profile": false}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
