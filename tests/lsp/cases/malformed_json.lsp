# malformed JSON gets a parse error (id null) and the server keeps serving
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}
<-- {"id":1,"result":{}}
==> "Content-Length: 8\r\n\r\n{\"a\":tru"
<-- {"id":null,"error":{"code":-32700}}
==> "Content-Length: 2\r\n\r\n[]"
<-- {"id":null,"error":{"code":-32600}}
--> {"jsonrpc":"1.0","id":5,"method":"hotline/debug/state"}
<-- {"id":5,"error":{"code":-32600}}
--> {"jsonrpc":"2.0","id":6,"method":"hotline/debug/state","params":"oops"}
<-- {"id":6,"error":{"code":-32600}}
--> {"jsonrpc":"2.0","id":7,"method":"hotline/debug/state"}
<-- {"id":7,"result":{}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
