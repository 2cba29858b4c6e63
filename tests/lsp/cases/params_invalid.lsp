# Params are checked at the door, before the handler: a request whose params
# are not of its method's shape gets -32602 (Invalid params) and no handler
# runs; the server keeps serving, and every request is answered once
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"${WORK_URI}","capabilities":{}}}
<-- {"id":1,"result":{"capabilities":{}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
--> {"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"${WORK_URI}/a.py","languageId":"python","version":1,"text":"x = 1\n"}}}
# hover without a position, with a position of the wrong type, without params
--> {"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"${WORK_URI}/a.py"}}}
<-- {"id":2,"error":{"code":-32602,"message":"re:textDocument/hover"}}
--> {"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"${WORK_URI}/a.py"},"position":{"line":"0","character":0}}}
<-- {"id":3,"error":{"code":-32602}}
--> {"jsonrpc":"2.0","id":4,"method":"textDocument/hover"}
<-- {"id":4,"error":{"code":-32602}}
# the joined answers too: codeLens with a uri that is not a string, params an array
--> {"jsonrpc":"2.0","id":5,"method":"textDocument/codeLens","params":{"textDocument":{"uri":7}}}
<-- {"id":5,"error":{"code":-32602}}
--> {"jsonrpc":"2.0","id":6,"method":"textDocument/codeLens","params":[1]}
<-- {"id":6,"error":{"code":-32602}}
--> {"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{"arguments":[]}}
<-- {"id":7,"error":{"code":-32602}}
--> {"jsonrpc":"2.0","id":8,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"${WORK_URI}/a.py"},"range":{"start":{"line":0}}}}
<-- {"id":8,"error":{"code":-32602}}
# well-formed ones are still served
--> {"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{"textDocument":{"uri":"${WORK_URI}/a.py"},"position":{"line":0,"character":0}}}
<-- {"id":9,"result":null}
--> {"jsonrpc":"2.0","id":10,"method":"textDocument/codeLens","params":{"textDocument":{"uri":"${WORK_URI}/a.py"}}}
<-- {"id":10,"result":[]}
--> {"jsonrpc":"2.0","id":11,"method":"hotline/debug/state","params":{}}
<-- {"id":11,"result":{"documents":1}}
# never a second answer, never an internal error
<!- {"error":{"code":-32603}}
<!- {"method":"window/logMessage","params":{"message":"re:internal error"}}
--> {"jsonrpc":"2.0","id":12,"method":"shutdown"}
<-- {"id":12,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
