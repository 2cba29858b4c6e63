# after shutdown every request but exit is refused (InvalidRequest)
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
<-- {"id":1,"result":{}}
--> {"jsonrpc":"2.0","id":2,"method":"shutdown"}
<-- {"id":2,"result":null}
--> {"jsonrpc":"2.0","id":3,"method":"hotline/debug/state"}
<-- {"id":3,"error":{"code":-32600}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
