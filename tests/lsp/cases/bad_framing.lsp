# headers without Content-Length, a non-numeric or negative length: logged,
# the stream resynchronises on the next Content-Length header
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}
<-- {"id":1,"result":{}}
==> "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
<-- {"method":"window/logMessage","params":{"type":1,"message":"re:framing"}}
==> "Content-Length: ten\r\n\r\n"
<-- {"method":"window/logMessage","params":{"type":1,"message":"re:framing"}}
==> "Content-Length: -5\r\n\r\n"
<-- {"method":"window/logMessage","params":{"type":1,"message":"re:framing"}}
==> "content-length: 43\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"no/such\"}"
<-- {"id":2,"error":{"code":-32601}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
