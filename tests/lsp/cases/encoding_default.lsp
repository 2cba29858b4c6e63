# nothing offered, or nothing we know: UTF-16
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"general":{"positionEncodings":["x-unknown"]}}}}
<-- {"id":1,"result":{"capabilities":{"positionEncoding":"utf-16"}}}
--> {"jsonrpc":"2.0","method":"exit"}
exit 1
