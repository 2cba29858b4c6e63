# what the server saves holds the program's argv and source lines: .hotline
# is 0700 (an existing 0755 one from an older version is tightened), the
# files 0600, and .hotline/.gitignore (`*`) keeps it all out of commits.
write-file .hotline/notes.txt "made by an older hotline\n"
chmod .hotline 0755
write-file prog.py "import sys\nx = sum(range(100000))\n"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"inlayHint": {"refreshSupport": true}}}, "initializationOptions": {"hints": {"threshold": 10}}}}
<-- {"id":1,"result":{"capabilities":{"executeCommandProvider":{"commands":["hotline.run","hotline.stop","hotline.clear","hotline.showProfile", "..."]}}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.run", "arguments": [{"uri": "${WORK_URI}/prog.py", "args": ["--token=s3cret"]}]}}
<-- {"id": 2, "result": {"started": true}}
<-- {"method": "window/showMessage", "params": {"message": "re:prog.py exited 0"}}
wait-file .hotline/sources.json
file-is .hotline {"type": "dir", "mode": "0700"}
file-is .hotline/profile.json {"type": "file", "mode": "0600"}
file-is .hotline/sources.json {"type": "file", "mode": "0600"}
file-is .hotline/.gitignore {"type": "file", "contains": "*"}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
