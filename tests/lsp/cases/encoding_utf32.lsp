--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"general":{"positionEncodings":["x-unknown","utf-32"]}}}}
<-- {"id":1,"result":{"capabilities":{"positionEncoding":"utf-32"}}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
