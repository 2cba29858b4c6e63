# bad edits are reported and never crash: unknown document, malformed range,
# out-of-range positions (clamped), missing text; the server keeps serving
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///nope.py","version":2},"contentChanges":[{"text":"x"}]}}
<-- {"method":"window/logMessage","params":{"type":1,"message":"re:not open"}}
--> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///t/c.py","languageId":"python","version":1,"text":"ab\ncd"}}}
--> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///t/c.py","version":2},"contentChanges":[{"range":{"start":{"line":"x"}},"text":"x"}]}}
<-- {"method":"window/logMessage","params":{"type":1,"message":"re:malformed range"}}
--> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///t/c.py","version":3},"contentChanges":[{"range":{"start":{"line":1,"character":1},"end":{"line":40,"character":9}},"text":"!"}]}}
<-- {"method":"window/logMessage","params":{"type":2,"message":"re:clamped"}}
--> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///t/c.py","version":4},"contentChanges":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}]}}
<-- {"method":"window/logMessage","params":{"type":1,"message":"re:no text"}}
--> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///t/d.py"}}}
<-- {"method":"window/logMessage","params":{"type":1,"message":"re:without text"}}
--> {"jsonrpc":"2.0","id":2,"method":"hotline/debug/state","params":{"uri":"file:///t/c.py"}}
<-- {"id":2,"result":{"document":{"text":"ab\nc!","version":4}}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
