# hotline.openProfile (docs/lsp.md): one test's profile, a wire stream as
# `pytest --hotline` writes to .hotline/tests/, shown in the editor instead
# of the last run's; its hint lands at the end of the hot line in UTF-16
# units (40: the line has an Ö, which UTF-8 counts twice), the lens on the
# function. Errors: a relative path, a FIFO (refused, never blocks), a
# malformed file; the server keeps serving.
write-file t_é.py "# é😀 ünïcode\ndef tëst_slow():\n    s = 0\n    for i in range(10**6): s += i  # HÖT\n    return s\n"
write-file .hotline/tests/t_é.py__tëst_slow.jsonl "{\"t\": \"hello\", \"v\": 1, \"pid\": 4242, \"ppid\": 1, \"python\": \"3.11.2\", \"executable\": \"/usr/bin/python3\", \"argv\": [\"pytest\"], \"cwd\": \"${WORK}\", \"main\": \"${WORK}/t_é.py\", \"interval_ms\": 10.0, \"clock\": \"wall+thread-cpu\"}\n{\"t\": \"str\", \"id\": 1, \"s\": \"${WORK}/t_é.py\"}\n{\"t\": \"str\", \"id\": 2, \"s\": \"tëst_slow\"}\n{\"t\": \"stack\", \"id\": 1, \"fr\": [[1, 2, 4]]}\n{\"t\": \"delta\", \"ts\": 0.5, \"samples\": 50, \"lines\": [{\"f\": 1, \"l\": 4, \"py\": 0.45, \"nat\": 0.05, \"sys\": 0.0, \"cpu\": 0.5, \"n\": 50}], \"funcs\": [{\"f\": 1, \"fn\": 2, \"first\": 2, \"last\": 5, \"py\": 0.45, \"nat\": 0.05, \"sys\": 0.0, \"cpu\": 0.5, \"n\": 50}], \"stacks\": [[1, 50, 0.5, 4242]], \"threads\": [{\"tid\": 4242, \"name\": \"MainThread\", \"py\": 0.45, \"nat\": 0.05, \"sys\": 0.0}]}\n{\"t\": \"end\", \"ts\": 0.5, \"reason\": \"exit\"}\n"
write-file .hotline/tests/bad.json "{\"version\": 1, \"files\": 3}"
mkfifo .hotline/tests/fifo.jsonl
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {}, "initializationOptions": {"hints": {"threshold": 1}}}}
<-- {"id": 1, "result": {"capabilities": {"executeCommandProvider": {"commands": ["..."]}}}}
--> {"jsonrpc": "2.0", "method": "initialized", "params": {}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/t_%C3%A9.py", "languageId": "python", "version": 1, "text": "# é😀 ünïcode\ndef tëst_slow():\n    s = 0\n    for i in range(10**6): s += i  # HÖT\n    return s\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.openProfile", "arguments": [{"path": "relative/x.jsonl"}]}}
<-- {"id": 2, "error": {"code": -32602, "message": "re:absolute path"}}
--> {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "hotline.openProfile", "arguments": [{"path": "${WORK}/.hotline/tests/fifo.jsonl"}]}}
<-- {"id": 3, "error": {"message": "re:not a regular file"}}
--> {"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "hotline.openProfile", "arguments": [{"path": "${WORK}/.hotline/tests/bad.json"}]}}
<-- {"id": 4, "error": {"message": "re:cannot open .*bad\\.json"}}
--> {"jsonrpc": "2.0", "id": 5, "method": "hotline/debug/state", "params": {}}
<-- {"id": 5, "result": {"profile": false}}
--> {"jsonrpc": "2.0", "id": 6, "method": "workspace/executeCommand", "params": {"command": "hotline.openProfile", "arguments": [{"uri": "${WORK_URI}/.hotline/tests/t_%C3%A9.py__t%C3%ABst_slow.jsonl"}]}}
<-- {"id": 6, "result": {"program": "${WORK}/t_é.py", "files": 1, "samples": 50}}
--> {"jsonrpc": "2.0", "id": 7, "method": "textDocument/inlayHint", "params": {"textDocument": {"uri": "${WORK_URI}/t_%C3%A9.py"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}}
<-- {"id": 7, "result": [{"position": {"line": 3, "character": 40}, "label": "re:100% · 90 py · 10 native"}]}
--> {"jsonrpc": "2.0", "id": 8, "method": "textDocument/codeLens", "params": {"textDocument": {"uri": "${WORK_URI}/t_%C3%A9.py"}}}
<-- {"id": 8, "result": [{"range": {"start": {"line": 0}}, "command": {"title": "re:100% · 90 py"}}, {"range": {"start": {"line": 1}}, "command": {"title": "re:100%"}}, "..."]}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
