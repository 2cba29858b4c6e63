# .hotline/ can come with a cloned repository: a profile.json that is a
# symlink to /dev/stdin made initialize read the client's messages as the
# profile and never answer. It is not followed: initialize answers, the file
# is refused with the reason logged, and the server works without a profile.
symlink .hotline/profile.json /dev/stdin
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"inlayHint": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"type": 2, "message": "re:ignoring .*/\\.hotline/profile\\.json: is a symbolic link: not followed"}}
--> {"jsonrpc": "2.0", "id": 2, "method": "hotline/debug/state", "params": {}}
<-- {"id": 2, "result": {"profile": false}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
