# The suggestion check's timeout kills the check's whole process group: here
# the interpreter is a wrapper whose grandchild (holder.py) keeps the check's
# stdout open long after the check itself has answered. Before, the timeout
# killed only the (already exited) child, no EOF came, and the operation hung
# for good. Now the holder dies with its group when the check times out
# (15 s; this case runs with a 25 s transcript timeout, see CMakeLists.txt)
# and the suggestion is applied.
write-file prog.py "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"
write-file holder.py "import time\ntime.sleep(300)\n"
write-file py.sh "#!/bin/sh\ncase \"$3\" in *ast.parse*) python3 ${WORK}/holder.py & ;; esac\nexec python3 \"$@\"\n"
chmod py.sh 0755
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"applyEdit": true}}, "initializationOptions": {"python": "${WORK}/py.sh", "llm": {"base_url": "${LLM_URL}/v1", "model": "test-model", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\nimport json\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n\nprint(work(10**6))\n"}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 6, "character": 4}, "end": {"line": 6, "character": 4}}}]}}
<-- {"method": "workspace/applyEdit", "params": {"edit": {"documentChanges": [{"edits": [{"range": {"start": {"line": 5, "character": 0}, "end": {"line": 7, "character": 0}}, "newText": "    total += sum(i * i for i in range(n))\n"}]}]}}}
reply {"result": {"applied": true}}
<-- {"id": 2, "result": {"applied": true}}
no-process holder.py
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"content": "```python\ntotal += sum(i * i for i in range(n))\n```\nFaster."}]
llm-requests 1
