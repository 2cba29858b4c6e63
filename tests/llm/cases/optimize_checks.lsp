# Issue 10, item 10: Optimize never deletes or corrupts code.
# - the region found around a hot line takes a triple-quoted string whose
#   lines start at column 0 (and a `for` inside it is no block header);
# - an empty code block, a comment-only one and a lone `pass` are refused
#   (they would delete the loop), with a clear message and no edit;
# - a selection starting inside the string grows to whole statements;
# - the string inside an answer is not re-indented (that would change it);
# - a suggestion that parses alone but breaks the file (an `else` left
#   without its `if`) is not offered;
# - a cursor inside a module-level statement over lines takes all of it;
# - a file that does not compile as it is: nothing is sent.
write-file prog.py "import time\n\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        doc = \"\"\"\nfor x in y:\n    pass\n\"\"\"\n        total += i * i + len(doc)\n    return total\n\n\ndef pick(n):\n    if n > 0:\n        r = 1\n    else:\n        r = 2\n    return r\n\nprint(work(10**6), pick(1))\ndata = sorted(\n    [3, 1, 2]\n)\n"
write-file broken.py "def f(:\n    pass\n"
write-file .hotline/profile.json "{\"version\": 1, \"program\": \"${WORK}/prog.py\", \"argv\": [], \"python_version\": \"3.11.2\", \"elapsed_s\": 2.0, \"interval_ms\": 10, \"samples\": 191, \"exit\": {\"status\": 0, \"signal\": null, \"reason\": \"exited 0\"}, \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.91, \"samples\": 191}, \"dropped\": 0, \"files\": {\"${WORK}/prog.py\": {\"lines\": {\"6\": {\"python_s\": 0.3, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.3, \"samples\": 30}, \"11\": {\"python_s\": 1.5, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.6, \"samples\": 160}, \"22\": {\"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}}, \"functions\": [{\"name\": \"work\", \"first_line\": 4, \"last_line\": 12, \"python_s\": 1.8, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.9, \"samples\": 190}, {\"name\": \"<module>\", \"first_line\": 1, \"last_line\": 22, \"python_s\": 0.01, \"native_s\": 0.0, \"system_s\": 0.0, \"cpu_s\": 0.01, \"samples\": 1}], \"totals\": {\"python_s\": 1.81, \"native_s\": 0.1, \"system_s\": 0.0, \"cpu_s\": 1.91, \"samples\": 191}}}, \"stacks\": [], \"threads\": [], \"pids\": [], \"processes\": []}"
--> {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, "rootUri": "${WORK_URI}", "capabilities": {"workspace": {"applyEdit": true}}, "initializationOptions": {"llm": {"base_url": "${LLM_URL}/v1", "model": "test-model", "api_key_env": "HOTLINE_TEST_LLM_KEY"}}}}
<-- {"id": 1}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
# the saved profile loads off the event loop: wait until it is in
<-- {"method": "window/logMessage", "params": {"message": "re:loaded the last profile"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/prog.py", "languageId": "python", "version": 1, "text": "import time\n\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        doc = \"\"\"\nfor x in y:\n    pass\n\"\"\"\n        total += i * i + len(doc)\n    return total\n\n\ndef pick(n):\n    if n > 0:\n        r = 1\n    else:\n        r = 2\n    return r\n\nprint(work(10**6), pick(1))\ndata = sorted(\n    [3, 1, 2]\n)\n"}}}
<!- {"method": "workspace/applyEdit", "params": {"edit": {"documentChanges": [{"textDocument": {"uri": "${WORK_URI}/prog.py"}, "edits": [{"range": {"start": {"line": 10}}}]}]}}}
--> {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 10, "character": 8}, "end": {"line": 10, "character": 8}}}]}}
<-- {"id": 2, "error": {"code": -32803, "message": "re:^the suggestion from 127\\.0\\.0\\.1:[0-9]+ has no statements \\(empty, or only comments / pass\\): it would delete lines 6-11\\. Nothing changed$"}}
--> {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 10, "character": 8}, "end": {"line": 10, "character": 8}}}]}}
<-- {"id": 3, "error": {"code": -32803, "message": "re:^the suggestion from 127\\.0\\.0\\.1:[0-9]+ has no statements \\(empty, or only comments / pass\\): it would delete lines 6-11\\. Nothing changed$"}}
--> {"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 10, "character": 8}, "end": {"line": 10, "character": 8}}}]}}
<-- {"id": 4, "error": {"code": -32803, "message": "re:^the suggestion from 127\\.0\\.0\\.1:[0-9]+ has no statements \\(empty, or only comments / pass\\): it would delete lines 6-11\\. Nothing changed$"}}
--> {"jsonrpc": "2.0", "id": 5, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 10, "character": 8}, "end": {"line": 10, "character": 8}}}]}}
<-- {"method": "workspace/applyEdit", "params": {"edit": {"documentChanges": [{"edits": [{"range": {"start": {"line": 5, "character": 0}, "end": {"line": 11, "character": 0}}, "newText": "    doc = \"\"\"\nfor x in y:\n    pass\n\"\"\"\n    total += sum(i * i for i in range(n)) + n * len(doc)\n"}]}]}}}
reply {"result": {"applied": true}}
<-- {"id": 5, "result": {"applied": true}}
# a selection from inside the string (lines 8-9): the whole assignment, lines 7-10
--> {"jsonrpc": "2.0", "id": 6, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 7, "character": 0}, "end": {"line": 8, "character": 5}}}]}}
<-- {"method": "workspace/applyEdit", "params": {"edit": {"documentChanges": [{"edits": [{"range": {"start": {"line": 6, "character": 0}, "end": {"line": 10, "character": 0}}, "newText": "        doc = \"\"\"\nfor x in y:\n    pass\n\"\"\"\n"}]}]}}}
reply {"result": {"applied": true}}
<-- {"id": 6, "result": {"applied": true}}
# lines 16-17 (`if n > 0:` and its body) rewritten with a statement after the body: the
# suggestion parses, the file would not (the `else:` lost its `if`)
--> {"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 15, "character": 0}, "end": {"line": 17, "character": 0}}}]}}
<-- {"id": 7, "error": {"code": -32803, "message": "re:^with the suggestion from 127\\.0\\.0\\.1:[0-9]+ the file would not compile: .*\\(line 19 of the file after the edit\\)\\. Nothing changed$"}}
--> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "${WORK_URI}/broken.py", "languageId": "python", "version": 1, "text": "def f(:\n    pass\n"}}}
--> {"jsonrpc": "2.0", "id": 8, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/broken.py", "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 4}}}]}}
<-- {"id": 8, "error": {"code": -32803, "message": "re:^broken\\.py does not compile with python3 \\(Python [0-9.]+\\): .*\\(line 1\\)\\. Fix it first: nothing was sent$"}}
# a cursor inside a module-level statement spread over lines: the whole statement
--> {"jsonrpc": "2.0", "id": 9, "method": "workspace/executeCommand", "params": {"command": "hotline.optimize", "arguments": [{"uri": "${WORK_URI}/prog.py", "range": {"start": {"line": 23, "character": 4}, "end": {"line": 23, "character": 4}}}]}}
<-- {"method": "workspace/applyEdit", "params": {"edit": {"documentChanges": [{"edits": [{"range": {"start": {"line": 22, "character": 0}, "end": {"line": 25, "character": 0}}, "newText": "data = [1, 2, 3]\n"}]}]}}}
reply {"result": {"applied": true}}
<-- {"id": 9, "result": {"applied": true}}
--> {"jsonrpc": "2.0", "id": 98, "method": "hotline/debug/state", "params": {"uri": "${WORK_URI}/prog.py"}}
<-- {"id": 98, "result": {"document": {"text": "import time\n\n\ndef work(n):\n    total = 0\n    for i in range(n):\n        doc = \"\"\"\nfor x in y:\n    pass\n\"\"\"\n        total += i * i + len(doc)\n    return total\n\n\ndef pick(n):\n    if n > 0:\n        r = 1\n    else:\n        r = 2\n    return r\n\nprint(work(10**6), pick(1))\ndata = sorted(\n    [3, 1, 2]\n)\n", "version": 1}, "optimize": {"inflight": 0, "done": 3}}}
--> {"jsonrpc":"2.0","id":99,"method":"shutdown"}
<-- {"id":99,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
llm-script [{"content": "Nothing to do:\n```python\n```"}, {"content": "```python\n# the loop is not needed: total stays 0\n```"}, {"content": "```python\npass\n```"}, {"content": "Sum in C:\n```python\ndoc = \"\"\"\nfor x in y:\n    pass\n\"\"\"\ntotal += sum(i * i for i in range(n)) + n * len(doc)\n```"}, {"content": "```python\ndoc = \"\"\"\nfor x in y:\n    pass\n\"\"\"\n```"}, {"content": "```python\nif n > 0:\n    r = 1\nprint('positive')\n```"}, {"content": "```python\ndata = [1, 2, 3]\n```"}]
llm-requests 7
llm-expect {"body": {"messages": [{"role": "system"}, {"role": "user", "content": "re:(?s)lines 6-11\\).*The region to rewrite:\\n```python\\n    for i in range\\(n\\):\\n        doc = \\\"\\\"\\\"\\nfor x in y:\\n    pass\\n\\\"\\\"\\\"\\n        total \\+= i \\* i \\+ len\\(doc\\)\\n```"}]}}
