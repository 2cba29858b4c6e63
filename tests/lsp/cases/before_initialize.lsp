# requests before initialize get -32002; notifications are dropped silently
--> {"jsonrpc":"2.0","id":"a","method":"textDocument/hover","params":{}}
<-- {"id":"a","error":{"code":-32002}}
--> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///x.py","languageId":"python","version":1,"text":"x"}}}
--> {"jsonrpc":"2.0","id":"b","method":"shutdown"}
<-- {"id":"b","error":{"code":-32002}}
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
<-- {"id":1,"result":{"capabilities":{}}}
--> {"jsonrpc":"2.0","id":2,"method":"hotline/debug/state","params":{}}
<-- {"id":2,"result":{"documents":0}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
