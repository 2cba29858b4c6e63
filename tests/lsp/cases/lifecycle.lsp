# initialize, initialized, shutdown, exit: status 0
--> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
<-- {"jsonrpc":"2.0","id":1,"result":{"capabilities":{"positionEncoding":"utf-16","textDocumentSync":{"openClose":true,"change":2}},"serverInfo":{"name":"hotline"}}}
--> {"jsonrpc":"2.0","method":"initialized","params":{}}
<-- {"method":"window/logMessage","params":{"type":3,"message":"re:ready"}}
--> {"jsonrpc":"2.0","id":2,"method":"shutdown"}
<-- {"id":2,"result":null}
--> {"jsonrpc":"2.0","method":"exit"}
exit 0
