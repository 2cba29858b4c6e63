# the server takes the client's first supported encoding
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"general":{"positionEncodings":["utf-8","utf-16"]}}}}
<-- {"id":1,"result":{"capabilities":{"positionEncoding":"utf-8"}}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
