# a saved profile names a file by a symlinked path (the program was run
# through a symlinked folder); the editor opens it by its real path: the
# diagnostics go to the URI the editor has open, and the symlinked URI,
# which no document shows, is cleared (no second entry for the same file in
# the problems list). Closing the document moves them back. The live line
# of a run goes the same way (providers/diagnostics.c).
write-file real/prog.py "import time\n\ndef hot():\n    n = 0\n    while n < 10**6: n += 1\n    return n\n\nhot()\n"
symlink link real
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/link/prog.py\", \"argv\": [], \"elapsed_s\": 1.0, \"interval_ms\": 10, \"samples\": 100, \"files\": {\"${WORK}/link/prog.py\": {\"lines\": {\"5\": {\"python_s\": 0.9, \"samples\": 90}, \"8\": {\"python_s\": 0.1, \"samples\": 10}}, \"functions\": [{\"name\": \"hot\", \"first_line\": 3, \"last_line\": 6, \"python_s\": 0.9, \"samples\": 90}]}}, \"stacks\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}, "initializationOptions": {"diagnostics": {"hotLines": 1}}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
# nothing open: under the profile's own URI
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/link/prog.py", "diagnostics": [{"range": {"start": {"line": 4}}, "code": "hot-line"}]}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/real/prog.py", "languageId": "python", "version": 1, "text": "import time\n\ndef hot():\n    n = 0\n    while n < 10**6: n += 1\n    return n\n\nhot()\n"}}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/link/prog.py", "diagnostics": []}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/real/prog.py", "diagnostics": [{"range": {"start": {"line": 4}}, "code": "hot-line", "message": "re:^hot line #1"}]}}
# closed: back under the profile's URI, the real one cleared
--> {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": "${WORK_URI}/real/prog.py"}}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/real/prog.py", "diagnostics": []}}
<-- {"method": "textDocument/publishDiagnostics", "params": {"uri": "${WORK_URI}/link/prog.py", "diagnostics": [{"range": {"start": {"line": 4}}, "code": "hot-line"}]}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
