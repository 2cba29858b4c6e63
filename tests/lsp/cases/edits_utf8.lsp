# with utf-8 negotiated, columns are bytes: "a😀b" has b at byte 5
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"general":{"positionEncodings":["utf-8"]}}}}
<-- {"id":1,"result":{"capabilities":{"positionEncoding":"utf-8"}}}
--> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///t/b.py","languageId":"python","version":1,"text":"a😀b\n"}}}
--> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///t/b.py","version":2},"contentChanges":[{"range":{"start":{"line":0,"character":5},"end":{"line":0,"character":6}},"text":"Y"}]}}
--> {"jsonrpc":"2.0","id":2,"method":"hotline/debug/state","params":{"uri":"file:///t/b.py"}}
<-- {"id":2,"result":{"document":{"text":"a😀Y\n","version":2}}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
