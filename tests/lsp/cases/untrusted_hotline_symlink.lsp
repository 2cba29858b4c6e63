# .hotline itself a symlink (to a directory the repository also carries, or
# anywhere else): nothing is read through it.
write-file elsewhere/profile.json "{\"version\": 1, \"files\": {}}"
symlink .hotline elsewhere
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"inlayHint": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"type": 2, "message": "re:ignoring .*/\\.hotline: is a symbolic link: not followed"}}
--> {"jsonrpc": "2.0", "id": 2, "method": "hotline/debug/state", "params": {}}
<-- {"id": 2, "result": {"profile": false}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
