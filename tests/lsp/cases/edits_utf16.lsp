# incremental edits with UTF-16 columns over non-ASCII text (😀 is two UTF-16 units)
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///t/a.py","languageId":"python","version":1,"text":"a😀b = 'é'\nline2\nline3\n"}}}
# replace "b" (UTF-16 column 3..4) with "X"
--> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///t/a.py","version":2},"contentChanges":[{"range":{"start":{"line":0,"character":3},"end":{"line":0,"character":4}},"text":"X"}]}}
--> {"jsonrpc":"2.0","id":2,"method":"hotline/debug/state","params":{"uri":"file:///t/a.py"}}
<-- {"id":2,"result":{"document":{"text":"a😀X = 'é'\nline2\nline3\n","version":2,"lineCount":4}}}
# two changes in one notification apply in order; the second sees the first
--> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///t/a.py","version":3},"contentChanges":[{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":0}},"text":"new\n"},{"range":{"start":{"line":2,"character":4},"end":{"line":3,"character":0}},"text":"Z\n"}]}}
--> {"jsonrpc":"2.0","id":3,"method":"hotline/debug/state","params":{"uri":"file:///t/a.py"}}
<-- {"id":3,"result":{"document":{"text":"a😀X = 'é'\nnew\nlineZ\nline3\n","version":3}}}
# an edit right after 'é' (UTF-16 column 9, byte column 11)
--> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///t/a.py","version":4},"contentChanges":[{"range":{"start":{"line":0,"character":9},"end":{"line":0,"character":9}},"text":"è"}]}}
--> {"jsonrpc":"2.0","id":4,"method":"hotline/debug/state","params":{"uri":"file:///t/a.py"}}
<-- {"id":4,"result":{"document":{"text":"a😀X = 'éè'\nnew\nlineZ\nline3\n","version":4}}}
# full-text replacement
--> {"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///t/a.py","version":5},"contentChanges":[{"text":"whole\n"}]}}
--> {"jsonrpc":"2.0","id":5,"method":"hotline/debug/state","params":{"uri":"file:///t/a.py"}}
<-- {"id":5,"result":{"document":{"text":"whole\n","version":5,"lineCount":2}}}
--> {"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"file:///t/a.py"}}}
--> {"jsonrpc":"2.0","id":6,"method":"hotline/debug/state","params":{"uri":"file:///t/a.py"}}
<-- {"id":6,"result":{"documents":0}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
